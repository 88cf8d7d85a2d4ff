// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient | FileCheck %s --check-prefix=SIMP
// RUN: gradir-opt %s --split-input-file --rlx-gradient='split=true' | FileCheck %s --check-prefix=SPLIT
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=vjp' | FileCheck %s --check-prefix=VJP
// rlx-gradient through scf control flow: the forward scf.for records the
// carried state of each iteration in a stack; the backward is a reverse
// scf.for that reads it, recomputes the body and runs the body's backward.
// Neither loop grows with the trip count.

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>, %[[H0:.*]]: tensor<3xf32>)
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[FWD:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[H:.*]] = %[[H0]], %[[ST:.*]] = %[[EMPTY]])
// CHECK-NEXT:      %[[INS:.*]] = tensor.insert_slice %[[H]] into %[[ST]][%[[I]], 0] [1, 3] [1, 1]
// CHECK:           "rlx.tanh"
// CHECK:           scf.yield %{{.*}}, %[[INS]] : tensor<3xf32>, tensor<4x3xf32>
// CHECK:         %[[LOSS:.*]] = "rlx.sum"(%[[FWD]]#0)
// CHECK:         %[[BWD:.*]]:2 = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}, %[[AX:.*]] = %{{.*}}) -> (tensor<3xf32>, tensor<4x3xf32>)
// CHECK-NEXT:      %[[R:.*]] = arith.subi %{{.*}}, %[[K]] : index
// CHECK-NEXT:      %[[S:.*]] = tensor.extract_slice %[[FWD]]#1[%[[R]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
// CHECK:           "rlx.multiply"(%[[S]],
// CHECK:           "rlx.tanh"
// CHECK:           scf.yield
// CHECK:         return %[[LOSS]], %[[BWD]]#1, %[[BWD]]#0

// SIMP-LABEL: func.func @main_adjoint(
// SIMP:         scf.for
// SIMP:         scf.for
// SIMP-NOT:     scf.for
// SIMP:         return

// SPLIT-LABEL: func.func @main_fwd(
// SPLIT:         %[[F:.*]]:2 = scf.for
// SPLIT:         return %{{.*}}, %[[F]]#1, %{{.*}} : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-SAME:      %{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<f32>)
// SPLIT:         scf.for
// SPLIT:           tensor.extract_slice

// VJP-LABEL: func.func @main_vjp(
// VJP-SAME:      %{{.*}}: tensor<f32>)
// VJP:         scf.for
// VJP:         scf.for
func.func @main(%x: tensor<4x3xf32>, %h0: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<3xf32>) {
    %ii = arith.index_cast %i : index to i64
    %t = tensor.from_elements %ii : tensor<i64>
    %xi = "rlx.take"(%x, %t) {axis = array<i64: 0>} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
    %m = "rlx.multiply"(%h, %xi) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %hn = "rlx.tanh"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %hn : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// scf.if: the condition is kept, and a backward scf.if recomputes the taken
// branch and yields the adjoints of the values the branches capture.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<i1>)
// CHECK:         %[[B:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK:         scf.if %[[B]] -> (tensor<3xf32>)
// CHECK:         %[[G:.*]] = scf.if %[[B]] -> (tensor<3xf32>) {
// CHECK:           %[[E:.*]] = "rlx.exp"(%[[X]])
// CHECK:           %[[GE:.*]] = "rlx.multiply"(%{{.*}}, %[[E]])
// CHECK:           scf.yield %[[GE]]
// CHECK:         } else {
// CHECK:           %[[GN:.*]] = "rlx.negative"
// CHECK:           scf.yield %[[GN]]
// CHECK:         return %{{.*}}, %[[G]]

// SIMP-LABEL: func.func @main_adjoint(
// SIMP:         } else {
// SIMP:           %[[M1:.*]] = arith.constant dense<-1.000000e+00> : tensor<3xf32>
// SIMP:           scf.yield %[[M1]]

// SPLIT-LABEL: func.func @main_fwd(
// SPLIT:         return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, i1, tensor<3xf32>
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-SAME:      %{{.*}}: i1,
// SPLIT:         scf.if

// VJP-LABEL: func.func @main_vjp(
// VJP:         scf.if
// VJP:         scf.if
func.func @main(%x: tensor<3xf32>, %c: tensor<i1>) -> tensor<f32> {
  %b = tensor.extract %c[] : tensor<i1>
  %r = scf.if %b -> (tensor<3xf32>) {
    %e = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  } else {
    %n = "rlx.negative"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %n : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// scf.while: the forward counts its trips; the backward replays the loop as
// an scf.for over that count (recording its states) and reverses it.  The
// replay carries the tensor state and its stack only: the trip counter the
// body also carries feeds nothing the backward reads, so neither it nor a
// stack of it is kept.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[W:.*]]:3 = scf.while (%{{.*}} = %[[X]], %{{.*}} = %{{.*}}, %[[N:.*]] = %{{.*}})
// CHECK:           scf.condition
// CHECK:         } do {
// CHECK:         ^bb0(%{{.*}}: tensor<3xf32>, %{{.*}}: index, %[[NA:.*]]: index):
// CHECK:           %[[N1:.*]] = arith.addi %[[NA]], %{{.*}} : index
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %[[N1]]
// CHECK:         %[[REPLAY:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[W]]#2 step %{{.*}} iter_args(%{{.*}} = %[[X]], %{{.*}} = %{{.*}}) -> (tensor<3xf32>, tensor<?x3xf32>)
// CHECK:           tensor.insert_slice
// CHECK:           "rlx.sin"
// CHECK:         %[[BWD:.*]] = scf.for
// CHECK:           tensor.extract_slice %[[REPLAY]]#1
// CHECK:           "rlx.cos"
// CHECK:         return %{{.*}}, %[[BWD]]

// SIMP-LABEL: func.func @main_adjoint(
// SIMP:         scf.while
// SIMP:         scf.for
// SIMP:         scf.for

// SPLIT-LABEL: func.func @main_fwd(
// SPLIT:         %[[W:.*]]:3 = scf.while
// SPLIT:         return %{{.*}}, %[[W]]#2, %{{.*}} : tensor<f32>, index, tensor<3xf32>
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-SAME:      %[[N:.*]]: index, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<f32>)
// SPLIT:         scf.for %{{.*}} = %{{.*}} to %[[N]]

// VJP-LABEL: func.func @main_vjp(
// VJP:         scf.while
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %r:2 = scf.while (%h = %x, %i = %c0) : (tensor<3xf32>, index) -> (tensor<3xf32>, index) {
    %c3 = arith.constant 3 : index
    %more = arith.cmpi slt, %i, %c3 : index
    scf.condition(%more) %h, %i : tensor<3xf32>, index
  } do {
  ^bb0(%h: tensor<3xf32>, %i: index):
    %c1 = arith.constant 1 : index
    %s = "rlx.sin"(%h) : (tensor<3xf32>) -> tensor<3xf32>
    %in = arith.addi %i, %c1 : index
    scf.yield %s, %in : tensor<3xf32>, index
  }
  %s = "rlx.sum"(%r#0) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Nested loops in a callee reached by func.call: the call is inlined, the
// inner loop is recorded and reversed inside the outer reverse loop.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME:      %[[H0:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3x3xf32>)
// CHECK:         %[[FWD:.*]]:2 = scf.for
// CHECK:           tensor.insert_slice
// CHECK:           scf.for
// CHECK:             "rlx.matmul"
// CHECK:         %[[BWD:.*]]:2 = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<3xf32>, tensor<3x3xf32>)
// CHECK:           %[[S:.*]] = tensor.extract_slice %[[FWD]]#1
// CHECK:           %[[INNER:.*]]:2 = scf.for %{{.*}} iter_args(%{{.*}} = %[[S]], %{{.*}} = %{{.*}}) -> (tensor<3xf32>, tensor<2x3xf32>)
// CHECK:           %[[IB:.*]]:2 = scf.for
// CHECK:             tensor.extract_slice %[[INNER]]#1
// CHECK:           %[[SUM:.*]] = "rlx.add"(%[[ACC]], %[[IB]]#1)
// CHECK:           scf.yield %[[IB]]#0, %[[SUM]]
// CHECK:         return %{{.*}}, %[[BWD]]#0, %[[BWD]]#1

// SIMP-LABEL: func.func @main_adjoint(
// SIMP-NOT:     func.call
// SIMP:         return

// SPLIT-LABEL: func.func @main_bwd(
// SPLIT:         scf.for

// VJP-LABEL: func.func @main_vjp(
// VJP-NOT:     func.call
// VJP:         return
func.func @cell(%h: tensor<3xf32>, %w: tensor<3x3xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %j = %c0 to %c2 step %c1 iter_args(%a = %h) -> (tensor<3xf32>) {
    %m = "rlx.matmul"(%a, %w) : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
    %t = "rlx.tanh"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
func.func @main(%h0: tensor<3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%h = %h0) -> (tensor<3xf32>) {
    %n = func.call @cell(%h, %w) : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
    scf.yield %n : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

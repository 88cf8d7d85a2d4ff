// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=jvp' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=jvp wrt=1' | FileCheck %s --check-prefix=WRT
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=jvp' | gradir-opt --split-input-file | FileCheck %s
// rlx-gradient{mode=jvp}: forward mode.  Each op is followed by its tangent
// (its JVP rule); @main_jvp takes a tangent per wrt argument and returns
// every result, then every result's tangent.  Loops carry the tangents of
// their float iter_args as extra iter_args.

// CHECK-LABEL: func.func @main_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[DX:.*]]: tensor<3xf32>, %[[DW:.*]]: tensor<3x2xf32>)
// CHECK-SAME:      -> (tensor<2xf32>, tensor<2xf32>)
// CHECK:         %[[T:.*]] = "rlx.tanh"(%[[X]])
// CHECK:         %[[SQ:.*]] = "rlx.square"(%[[T]])
// CHECK:         %[[D:.*]] = "rlx.subtract"(%{{.*}}, %[[SQ]])
// CHECK:         %[[DT:.*]] = "rlx.multiply"(%[[DX]], %[[D]])
// CHECK:         %[[Y:.*]] = "rlx.matmul"(%[[T]], %[[W]])
// CHECK:         "rlx.matmul"({{.*}}, %[[W]])
// CHECK:         "rlx.matmul"({{.*}}, %[[DW]])
// CHECK:         %[[DY:.*]] = "rlx.add"
// CHECK:         return %[[Y]], %[[DY]] : tensor<2xf32>, tensor<2xf32>

// WRT-LABEL: func.func @main_jvp(
// WRT-SAME:      %{{.*}}: tensor<3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[DW:.*]]: tensor<3x2xf32>)
// WRT-NOT:       "rlx.square"
// WRT:           "rlx.matmul"({{.*}}, %[[DW]])
// WRT:           return
func.func @main(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> tensor<2xf32> {
  %0 = "rlx.tanh"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.matmul"(%0, %w) : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @main_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>, %[[H0:.*]]: tensor<3xf32>, %[[DX:.*]]: tensor<4x3xf32>, %[[DH0:.*]]: tensor<3xf32>)
// CHECK:         %[[L:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} iter_args(%[[H:.*]] = %[[H0]], %[[DH:.*]] = %[[DH0]]) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:           %[[XI:.*]] = "rlx.take"(%[[X]],
// CHECK:           %[[DXI:.*]] = "rlx.take"(%[[DX]],
// CHECK:           "rlx.add"(%[[H]], %[[XI]])
// CHECK:           "rlx.add"(%[[DH]], %[[DXI]])
// CHECK:           "rlx.tanh"
// CHECK:           scf.yield %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>
// CHECK:         %[[S:.*]] = "rlx.sum"(%[[L]]#0)
// CHECK:         %[[DS:.*]] = "rlx.sum"(%[[L]]#1)
// CHECK:         return %[[S]], %[[DS]] : tensor<f32>, tensor<f32>

// WRT-LABEL: func.func @main_jvp(
// WRT-SAME:      %{{.*}}: tensor<4x3xf32>, %[[H0:.*]]: tensor<3xf32>, %[[DH0:.*]]: tensor<3xf32>)
// WRT:           scf.for {{.*}} iter_args(%{{.*}} = %[[H0]], %{{.*}} = %[[DH0]])
func.func @main(%x: tensor<4x3xf32>, %h0: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<3xf32>) {
    %ii = arith.index_cast %i : index to i64
    %t = tensor.from_elements %ii : tensor<i64>
    %xi = "rlx.take"(%x, %t) {axis = array<i64: 0>} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
    %a = "rlx.add"(%h, %xi) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %hn = "rlx.tanh"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %hn : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// An integer result gets a zero tangent of its own type; a branch yields
// its results' tangents as extra results.
// CHECK-LABEL: func.func @main_jvp(
// CHECK-SAME:      -> (tensor<3xf32>, tensor<2xi64>, tensor<3xf32>, tensor<2xi64>)
// CHECK:         %[[IF:.*]]:2 = scf.if %{{.*}} -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:           "rlx.exp"
// CHECK:           scf.yield
// CHECK:         } else {
// CHECK:           "rlx.negative"
// CHECK:           scf.yield
// CHECK:         %[[Z:.*]] = arith.constant dense<0> : tensor<2xi64>
// CHECK:         return %[[IF]]#0, %{{.*}}, %[[IF]]#1, %[[Z]]
func.func @main(%k: tensor<2xi64>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2xi64>) {
  %s = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %p = "rlx.greater"(%s, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<3xf32>) {
    %e = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  } else {
    %n = "rlx.negative"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %n : tensor<3xf32>
  }
  return %r, %k : tensor<3xf32>, tensor<2xi64>
}

// RUN: gradir-opt %s --rlx-gradient | FileCheck %s
// A loop carrying another loop's result straight in, the first with a step
// computed at run time (reduced from conversion/cpu/rlx-lower-to-llvm-step-checks.mlir,
// which stopped rlx-gradient with "internal error: scf.for reached the
// backward without recording its iterations"): both forward loops record
// their states, and two reverse loops, the exp loop's first, read them.
// Numbers: chained_loops.py.

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME:      %[[X:.*]]: tensor<5xf32>, %[[N:.*]]: tensor<i64>)
// CHECK:         %[[E:.*]] = tensor.extract %[[N]][] : tensor<i64>
// CHECK:         %[[S:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK:         %[[F1:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[S]] iter_args(%[[H1:.*]] = %[[X]], %{{.*}} = %{{.*}}) -> (tensor<5xf32>, tensor<?x5xf32>)
// CHECK:           tensor.insert_slice %[[H1]]
// CHECK:           "rlx.sin"(%[[H1]])
// CHECK:         %[[F2:.*]]:2 = scf.for %{{.*}} iter_args(%[[H2:.*]] = %[[F1]]#0, %{{.*}} = %{{.*}}) -> (tensor<5xf32>, tensor<4x5xf32>)
// CHECK:           tensor.insert_slice %[[H2]]
// CHECK:           "rlx.exp"(%[[H2]])
// CHECK:         %[[LOSS:.*]] = "rlx.sum"(%[[F2]]#0)
// CHECK:         %[[B2:.*]] = scf.for
// CHECK:           tensor.extract_slice %[[F2]]#1
// CHECK:           "rlx.exp"
// CHECK:         %[[B1:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[B2]]) -> (tensor<5xf32>)
// CHECK:           tensor.extract_slice %[[F1]]#1
// CHECK:           "rlx.cos"
// CHECK:         return %[[LOSS]], %[[B1]] : tensor<f32>, tensor<5xf32>
func.func @main(%x: tensor<5xf32>, %n: tensor<i64>) -> tensor<f32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %e = tensor.extract %n[] : tensor<i64>
  %s = arith.index_cast %e : i64 to index
  %r = scf.for %i = %c1 to %c9 step %s iter_args(%h = %x) -> (tensor<5xf32>) {
    %m = "rlx.sin"(%h) : (tensor<5xf32>) -> tensor<5xf32>
    scf.yield %m : tensor<5xf32>
  }
  %q = scf.for %i = %c1 to %c9 step %c2 iter_args(%h = %r) -> (tensor<5xf32>) {
    %m = "rlx.exp"(%h) : (tensor<5xf32>) -> tensor<5xf32>
    scf.yield %m : tensor<5xf32>
  }
  %t = "rlx.sum"(%q) : (tensor<5xf32>) -> tensor<f32>
  return %t : tensor<f32>
}

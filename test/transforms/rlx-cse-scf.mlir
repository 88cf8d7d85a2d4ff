// RUN: gradir-opt %s --rlx-cse --rlx-dce | FileCheck %s
// rlx-cse and rlx-dce inside loop and branch bodies: a body op may reuse an
// identical op that dominates the loop, but nothing moves across iterations
// or out of a body (an op after the loop never reuses one inside it), and
// sibling bodies do not share ops; dead ops inside bodies go.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>)
// CHECK:         %[[OUT:.*]] = "rlx.exp"(%[[W]])
// CHECK:         %[[R:.*]] = scf.for {{.*}} iter_args(%[[H:.*]] = %[[X]])
// CHECK-NEXT:      %[[M:.*]] = "rlx.multiply"(%[[H]], %[[OUT]])
// CHECK-NEXT:      %[[T:.*]] = "rlx.tanh"(%[[M]])
// CHECK-NEXT:      scf.yield %[[T]]
// CHECK:         %[[R2:.*]] = scf.for {{.*}} iter_args(%[[H2:.*]] = %[[R]])
// CHECK-NEXT:      %[[M2:.*]] = "rlx.multiply"(%[[H2]], %[[OUT]])
// CHECK-NEXT:      %[[T2:.*]] = "rlx.tanh"(%[[M2]])
// CHECK-NEXT:      scf.yield %[[T2]]
// CHECK:         %[[AFTER:.*]] = "rlx.multiply"(%[[R2]], %[[OUT]])
// CHECK:         "rlx.add"(%[[AFTER]], %[[R2]])
func.func @main(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e0 = "rlx.exp"(%w) : (tensor<3xf32>) -> tensor<3xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<3xf32>) {
    %e = "rlx.exp"(%w) : (tensor<3xf32>) -> tensor<3xf32>
    %m = "rlx.multiply"(%h, %e) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %dead = "rlx.sin"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    %t = "rlx.tanh"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  }
  %r2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %r) -> (tensor<3xf32>) {
    %m = "rlx.multiply"(%h, %e0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %t = "rlx.tanh"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  }
  %after = "rlx.multiply"(%r2, %e0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %a = "rlx.add"(%after, %r2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = "rlx.sum"(%a) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

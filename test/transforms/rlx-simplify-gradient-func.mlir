// RUN: gradir-opt %s --rlx-simplify-gradient='func=g' | FileCheck %s
// RUN: gradir-opt %s --pass-pipeline='builtin.module(func.func(rlx-simplify-gradient))' | FileCheck %s --check-prefix=ALL
// func= simplifies one function and leaves the others as they are; nested
// under func.func(...) the pass simplifies the function it runs on.

// CHECK-LABEL: func.func @f
// CHECK-NEXT: "rlx.permute_dims"
// CHECK-NEXT: "rlx.permute_dims"
// CHECK-NEXT: return
// CHECK-LABEL: func.func @g
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
// ALL-LABEL: func.func @f
// ALL-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// ALL-NEXT: return %[[X]]
// ALL-LABEL: func.func @g
// ALL-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// ALL-NEXT: return %[[X]]
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
func.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

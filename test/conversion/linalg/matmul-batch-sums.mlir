// RUN: gradir-opt %s --rlx-to-linalg=matmul-kernels=true | FileCheck %s
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=OFF

// The gradient of a weight shared by every batch element, sum_b x_b^T @ dy_b
// (rlx.collapse_sum_to of a batched rlx.matmul to its 2-D result), is one
// 2-D matmul contracting the batch and K together: no batch_matmul, no
// (B, M, N) tensor, no sum.  The lhs is the reshaped activation read
// transposed: a permute_dims of the last two axes composes away.
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-NOT: linalg.batch_matmul
// CHECK: tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2]] : tensor<2x5x4xf32> into tensor<10x4xf32>
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x5x3xf32> into tensor<10x3xf32>
// CHECK: linalg.contract indexing_maps = [#[[$KM:.*]], #[[$KN:.*]], #{{.*}}] {gradir.kernel} ins({{.*}} : tensor<10x4xf32>, tensor<10x3xf32>) outs({{.*}} : tensor<4x3xf32>)
// CHECK-NOT: linalg.reduce
// CHECK: return
// OFF-LABEL: func.func @weight_gradient(
// OFF-NOT: linalg.batch_matmul
// OFF: linalg.matmul indexing_maps = {{.*}} ins({{.*}} : tensor<10x4xf32>, tensor<10x3xf32>) outs({{.*}} : tensor<4x3xf32>)
func.func @weight_gradient(%x: tensor<2x5x3xf32>, %dy: tensor<2x5x4xf32>) -> tensor<4x3xf32> {
  %t = "rlx.permute_dims"(%dy) {axes = array<i64: 0, 2, 1>} : (tensor<2x5x4xf32>) -> tensor<2x4x5xf32>
  %m = "rlx.matmul"(%t, %x) : (tensor<2x4x5xf32>, tensor<2x5x3xf32>) -> tensor<2x4x3xf32>
  %s = "rlx.collapse_sum_to"(%m) : (tensor<2x4x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// A permutation that does not cancel is materialized once (a transpose of
// the activation), and a result read only by a 2-D transpose (the weight of
// x @ W^T) is computed transposed: dy^T @ x, no transpose of the result.
// CHECK-LABEL: func.func @transposed_weight(
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2x6x4xf32>) outs({{.*}} : tensor<6x2x4xf32>)
// CHECK: linalg.contract {{.*}} {gradir.kernel} ins({{.*}} : tensor<12x5xf32>, tensor<12x4xf32>) outs({{.*}} : tensor<5x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @transposed_weight(%x: tensor<2x6x4xf32>, %dy: tensor<6x2x5xf32>) -> tensor<5x4xf32> {
  %p = "rlx.permute_dims"(%x) {axes = array<i64: 1, 2, 0>} : (tensor<2x6x4xf32>) -> tensor<6x4x2xf32>
  %m = "rlx.matmul"(%p, %dy) : (tensor<6x4x2xf32>, tensor<6x2x5xf32>) -> tensor<6x4x5xf32>
  %s = "rlx.collapse_sum_to"(%m) : (tensor<6x4x5xf32>) -> tensor<4x5xf32>
  %w = "rlx.permute_dims"(%s) : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %w : tensor<5x4xf32>
}

// Left alone: a sum that keeps a batch dim, and a product with another
// use (batched kernel contractions, linalg.batch_matmul without kernels).
// CHECK-LABEL: func.func @not_folded(
// CHECK: linalg.contract {{.*}} {gradir.kernel} ins({{.*}} : tensor<6x4x5xf32>, tensor<6x5x6xf32>) outs({{.*}} : tensor<6x4x6xf32>)
// CHECK: linalg.reduce
// CHECK: linalg.contract {{.*}} {gradir.kernel} ins(%arg2, %arg3 : tensor<3x4x5xf32>, tensor<3x5x6xf32>) outs({{.*}} : tensor<3x4x6xf32>)
// CHECK: linalg.reduce
// CHECK: return
// OFF-LABEL: func.func @not_folded(
// OFF: linalg.batch_matmul
// OFF: linalg.batch_matmul
// OFF: return
func.func @not_folded(%a: tensor<2x3x4x5xf32>, %b: tensor<2x3x5x6xf32>, %c: tensor<3x4x5xf32>,
                      %d: tensor<3x5x6xf32>) -> (tensor<3x4x6xf32>, tensor<4x6xf32>, tensor<3x4x6xf32>) {
  %m = "rlx.matmul"(%a, %b) : (tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32>
  %s = "rlx.collapse_sum_to"(%m) : (tensor<2x3x4x6xf32>) -> tensor<3x4x6xf32>
  %n = "rlx.matmul"(%c, %d) : (tensor<3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<3x4x6xf32>
  %t = "rlx.collapse_sum_to"(%n) : (tensor<3x4x6xf32>) -> tensor<4x6xf32>
  return %s, %t, %n : tensor<3x4x6xf32>, tensor<4x6xf32>, tensor<3x4x6xf32>
}

// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// rlx.matmul (numpy semantics) -> linalg.matmul / linalg.batch_matmul.
// 2-D matmuls of fewer than 2^22 multiply-adds are marked
// gradir.small_matmul (the CPU schedule keeps them off its parallel
// strips); 64x512x784 is not.

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:.*]]: tensor<4x5xf32>, %[[B:.*]]: tensor<5x3xf32>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<4x3xf32>)
// CHECK: %[[M:.*]] = linalg.matmul {gradir.small_matmul} ins(%[[A]], %[[B]] : tensor<4x5xf32>, tensor<5x3xf32>) outs(%[[F]] : tensor<4x3xf32>)
// CHECK: return %[[M]]
func.func @matmul(%a: tensor<4x5xf32>, %b: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A batched lhs times a 2-D rhs: one matmul on the collapsed (batch*M, K) lhs.
// CHECK-LABEL: func.func @matmul_batched_lhs(
// CHECK: %[[L:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf64> into tensor<6x4xf64>
// CHECK: %[[M:.*]] = linalg.matmul {gradir.small_matmul} ins(%[[L]], %{{.*}} : tensor<6x4xf64>, tensor<4x5xf64>)
// CHECK: tensor.expand_shape %[[M]] {{\[}}[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf64> into tensor<2x3x5xf64>
func.func @matmul_batched_lhs(%a: tensor<2x3x4xf64>, %b: tensor<4x5xf64>) -> tensor<2x3x5xf64> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x3x4xf64>, tensor<4x5xf64>) -> tensor<2x3x5xf64>
  return %0 : tensor<2x3x5xf64>
}

// -----

// CHECK-LABEL: func.func @batch_matmul(
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%{{.*}} : tensor<2x3x5xf32>)
func.func @batch_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// Broadcast batch dims: both operands broadcast to (2, 5), collapsed to 10.
// CHECK-LABEL: func.func @matmul_broadcast_batch(
// CHECK: linalg.broadcast {{.*}} outs(%{{.*}} : tensor<2x5x3x4xf32>) dimensions = [1]
// CHECK: linalg.broadcast {{.*}} outs(%{{.*}} : tensor<2x5x4x2xf32>) dimensions = [0]
// CHECK: %[[M:.*]] = linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<10x3x4xf32>, tensor<10x4x2xf32>)
// CHECK: tensor.expand_shape %[[M]] {{.*}} into tensor<2x5x3x2xf32>
func.func @matmul_broadcast_batch(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x1x3x4xf32>, tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32>
  return %0 : tensor<2x5x3x2xf32>
}

// -----

// 1-D operands get a unit dim that the result drops again.
// CHECK-LABEL: func.func @matmul_vector(
// CHECK: %[[A:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1, 5] : tensor<5xf32> into tensor<1x5xf32>
// CHECK: %[[M:.*]] = linalg.matmul {gradir.small_matmul} ins(%[[A]], %{{.*}} : tensor<1x5xf32>, tensor<5x3xf32>)
// CHECK: tensor.collapse_shape %[[M]] {{\[}}[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
func.func @matmul_vector(%a: tensor<5xf32>, %b: tensor<5x3xf32>) -> tensor<3xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<5xf32>, tensor<5x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// f16 multiplies in f32 and rounds once.
// CHECK-LABEL: func.func @matmul_f16(
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.matmul {gradir.small_matmul} ins(%{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<5x3xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @matmul_f16(%a: tensor<4x5xf16>, %b: tensor<5x3xf16>) -> tensor<4x3xf16> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<4x5xf16>, tensor<5x3xf16>) -> tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
}

// -----

// A transposed lhs (the backward's x^T @ dy) is read in place through the
// matmul's indexing map: no linalg.transpose.
// CHECK-DAG: #[[$AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_transposed_lhs(
// CHECK-SAME: %[[X:[^:]*]]: tensor<64x784xf32>, %[[DY:[^:]*]]: tensor<64x10xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[$AT]], #[[$B]], #[[$C]]] {gradir.small_matmul} ins(%[[X]], %[[DY]] : tensor<64x784xf32>, tensor<64x10xf32>) outs(%{{.*}} : tensor<784x10xf32>)
// CHECK-NOT: linalg.transpose
func.func @matmul_transposed_lhs(%x: tensor<64x784xf32>, %dy: tensor<64x10xf32>) -> tensor<784x10xf32> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<64x784xf32>) -> tensor<784x64xf32>
  %0 = "rlx.matmul"(%xt, %dy) : (tensor<784x64xf32>, tensor<64x10xf32>) -> tensor<784x10xf32>
  return %0 : tensor<784x10xf32>
}

// -----

// A transposed rhs stays a transpose (read in place, each K step would
// gather a strided column: measured slower than transpose + matmul).
// CHECK-LABEL: func.func @matmul_transposed_rhs(
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.matmul ins(%{{.*}}, %[[T]] : tensor<64x512xf32>, tensor<512x784xf32>)
func.func @matmul_transposed_rhs(%dy: tensor<64x512xf32>, %w: tensor<784x512xf32>) -> tensor<64x784xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<784x512xf32>) -> tensor<512x784xf32>
  %0 = "rlx.matmul"(%dy, %wt) : (tensor<64x512xf32>, tensor<512x784xf32>) -> tensor<64x784xf32>
  return %0 : tensor<64x784xf32>
}

// -----

// A transpose with another use stays for that use; the matmul still reads
// the source in place.
// CHECK-LABEL: func.func @matmul_transposed_lhs_shared(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3x4xf32>
// CHECK: linalg.transpose ins(%[[X]]
// CHECK: linalg.matmul indexing_maps = {{.*}} {gradir.small_matmul} ins(%[[X]], %{{.*}} : tensor<3x4xf32>, tensor<3x5xf32>)
func.func @matmul_transposed_lhs_shared(%x: tensor<3x4xf32>, %y: tensor<3x5xf32>) -> (tensor<4x5xf32>, tensor<4x3xf32>) {
  %xt = "rlx.permute_dims"(%x) : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %0 = "rlx.matmul"(%xt, %y) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0, %xt : tensor<4x5xf32>, tensor<4x3xf32>
}

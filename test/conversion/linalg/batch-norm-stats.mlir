// RUN: gradir-opt %s --split-input-file --rlx-to-linalg=sum-block=256 | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-to-linalg=sum-block=256 --cse | FileCheck %s --check-prefix=CSE

// Batch norm's statistics in one sweep (reduce.py, "Mean and variance in one
// sweep"): a variance over (0, 2, 3) of NCHW whose sums go batch first (at
// most 256 images, rows shorter than 64) reads x once, in one two-result
// generic whose loops run channel, batch, h, w: A = sum (x - k) and B =
// sum (x - k)^2 per (c, h, w), k = x[0, c, h, w]; the positions then merge
// per channel relative to k0 = k[c, 0, 0] on the 4x8x8 partial sums.
// CHECK-DAG: #[[$CNHW:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$CHW:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @variance(
// CHECK-SAME: %[[X:.*]]: tensor<8x4x8x8xf32>)
// CHECK: %[[K1:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1]
// CHECK: %[[K:.*]] = tensor.collapse_shape %[[K1]] {{\[}}[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
// CHECK: %[[AB:.*]]:2 = linalg.generic {indexing_maps = [#[[$CNHW]], #[[$CHW]], #[[$CHW]], #[[$CHW]]], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[X]], %[[K]] : tensor<8x4x8x8xf32>, tensor<4x8x8xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x8x8xf32>, tensor<4x8x8xf32>) attrs =  {gradir.moments = array<i64: 0, 2, 3>}
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[KV:.*]]: f32, %[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[KV]] : f32
// CHECK-NEXT: %[[A1:.*]] = arith.addf %[[D]], %[[A]] : f32
// CHECK-NEXT: %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT: %[[B1:.*]] = arith.addf %[[D2]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[A1]], %[[B1]] : f32, f32
// d_p = (k_p - k0) + A_p / 8, their mean over the channel:
// CHECK: %[[K0S:.*]] = tensor.extract_slice %[[K]][0, 0, 0] [4, 1, 1]
// CHECK: %[[K0:.*]] = tensor.collapse_shape %[[K0S]] {{\[}}[0, 1, 2]] : tensor<4x1x1xf32> into tensor<4xf32>
// CHECK: %[[DP:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[K0]], %[[AB]]#0 : tensor<4x8x8xf32>, tensor<4xf32>, tensor<4x8x8xf32>)
// CHECK: arith.subf
// CHECK: arith.divf
// CHECK: arith.addf
// CHECK: %[[DS:.*]] = linalg.reduce ins(%[[DP]] : tensor<4x8x8xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1, 2]
// CHECK: %[[DBAR:.*]] = linalg.generic {{.*}} ins(%[[DS]] : tensor<4xf32>)
// (B_p - A_p^2 / 8, at least 0) + 8 (d_p - dbar)^2, summed, over 512:
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[AB]]#0, %[[AB]]#1, %[[DP]], %[[DBAR]] : tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[TS:.*]] = linalg.reduce ins(%[[T]] : tensor<4x8x8xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1, 2]
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[TS]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf %{{.*}}, %[[N:.*]] : f32
// CHECK: tensor.expand_shape %[[VAR]]
func.func @variance(%x: tensor<8x4x8x8xf32>) -> tensor<1x4x1x1xf32> {
  %0 = "rlx.variance"(%x) {axis = array<i64: 0, 2, 3>, keepdims = true} : (tensor<8x4x8x8xf32>) -> tensor<1x4x1x1xf32>
  return %0 : tensor<1x4x1x1xf32>
}

// -----

// A mean of the same x and axes beside the variance is k0 + dbar from the
// same ops: after cse, one sweep over x serves both.
// CSE-LABEL: func.func @mean_and_variance(
// CSE-SAME: %[[X:.*]]: tensor<8x4x8x8xf64>)
// CSE: %[[AB:.*]]:2 = linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<8x4x8x8xf64>, tensor<4x8x8xf64>) {{.*}} attrs =  {gradir.moments = array<i64: 0, 2, 3>}
// CSE-NOT: tensor<8x4x8x8xf64>
// CSE: %[[DBAR:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf64>)
// CSE: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[DBAR]] : tensor<4xf64>, tensor<4xf64>)
// CSE-NEXT: ^bb0
// CSE-NEXT: arith.addf
// CSE: %[[M:.*]] = tensor.expand_shape %[[MEAN]]
// CSE: %[[V:.*]] = tensor.expand_shape
// CSE: return %[[M]], %[[V]]
// Before cse, the mean and the variance each build the sweep:
// CHECK-LABEL: func.func @mean_and_variance(
// CHECK-COUNT-2: gradir.moments
// CHECK-NOT: gradir.moments
func.func @mean_and_variance(%x: tensor<8x4x8x8xf64>) -> (tensor<1x4x1x1xf64>, tensor<1x4x1x1xf64>) {
  %0 = "rlx.mean"(%x) {axis = array<i64: 0, 2, 3>, keepdims = true} : (tensor<8x4x8x8xf64>) -> tensor<1x4x1x1xf64>
  %1 = "rlx.variance"(%x) {axis = array<i64: 0, 2, 3>, keepdims = true} : (tensor<8x4x8x8xf64>) -> tensor<1x4x1x1xf64>
  return %0, %1 : tensor<1x4x1x1xf64>, tensor<1x4x1x1xf64>
}

// -----

// A mean without a variance beside it is the sum over 512, batch first.
// CHECK-LABEL: func.func @mean_alone(
// CHECK: linalg.reduce ins(%{{.*}} : tensor<8x4x8x8xf32>) outs(%{{.*}} : tensor<4x8x8xf32>) dimensions = [0]
// CHECK-NOT: gradir.moments
// CHECK: return
func.func @mean_alone(%x: tensor<8x4x8x8xf32>) -> tensor<4xf32> {
  %0 = "rlx.mean"(%x) {axis = array<i64: 0, 2, 3>} : (tensor<8x4x8x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Not in one sweep: more than 256 images (the batch's sums blocked), axes
// without a leading one (a layer norm's), rows of 64 or more (summed
// innermost first, in lanes), and without sum-block (the sweep's first
// RUN line has it; reduce.mlir covers the plain lowering).
// CHECK-LABEL: func.func @long_batch(
// CHECK-NOT: gradir.moments
// CHECK: return
// CHECK-LABEL: func.func @trailing_axes(
// CHECK-NOT: gradir.moments
// CHECK: return
// CHECK-LABEL: func.func @long_rows(
// CHECK-NOT: gradir.moments
// CHECK: return
func.func @long_batch(%x: tensor<300x2x4x4xf32>) -> tensor<2xf32> {
  %0 = "rlx.variance"(%x) {axis = array<i64: 0, 2, 3>} : (tensor<300x2x4x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @trailing_axes(%x: tensor<4x8x8x8xf32>) -> tensor<4xf32> {
  %0 = "rlx.variance"(%x) {axis = array<i64: 1, 2, 3>} : (tensor<4x8x8x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @long_rows(%x: tensor<4x2x3x64xf32>) -> tensor<2xf32> {
  %0 = "rlx.variance"(%x) {axis = array<i64: 0, 2, 3>} : (tensor<4x2x3x64xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// RUN: gradir-opt %s --rlx-to-linalg=direct-convolutions=true --canonicalize | FileCheck %s
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=CPU

// rlx-to-linalg{direct-convolutions=true} (the GPU pipeline): a convolution
// is tensor.pad + one linalg.generic over the whole batch, the weights
// first (the GEMM's rows), the padded input read at y*s + ky*d; no im2col
// matrix, no loop over images.  Groups: a G dim of expand_shape views.
// conv2d_transpose: the padded (stride 1) or zero-inserted (a strided
// insert_slice into zeros) input read flipped (y - ky + 2) with the IOHW
// kernel as stored.  The weight gradient's form (the VJP rule's conv2d of
// the permuted data and output gradient): the data padded in place and
// read through the permutation, the result written permuted.  Without the
// option (CPU): the im2col GEMM.
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[$X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[$O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$GW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[$GX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 * 2 + d7)>
// CHECK-DAG: #[[$GO:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$TW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>
// CHECK-DAG: #[[$TX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 - d5 + 2, d3 - d6 + 2)>
// CHECK-DAG: #[[$DX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[$DO:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @conv(
// CHECK-NOT:   scf.for
// CHECK:       %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:       linalg.generic {indexing_maps = [#[[$W]], #[[$X]], #[[$O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1, %[[P]] : tensor<8x4x3x3xf32>, tensor<2x4x10x10xf32>) outs(%{{.*}} : tensor<2x8x4x4xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       return
// CPU-LABEL: func.func @conv(
// CPU:       linalg.matmul
// CHECK-LABEL: func.func @grouped(
// CHECK:       %[[X5:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 2, 8, 8]
// CHECK:       %[[W5:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3]
// CHECK:       %[[Y5:.*]] = linalg.generic {indexing_maps = [#[[$GW]], #[[$GX]], #[[$GO]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[W5]], %[[X5]] : {{.*}}) outs(%{{.*}} : tensor<2x2x3x3x3xf32>)
// CHECK:       tensor.collapse_shape %[[Y5]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x3x3x3xf32> into tensor<2x6x3x3xf32>
// CHECK-LABEL: func.func @transpose_s1(
// CHECK:       %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:       linalg.generic {indexing_maps = [#[[$TW]], #[[$TX]], #[[$O]]], {{.*}} ins(%arg1, %[[P]] : tensor<8x4x3x3xf32>, tensor<2x8x10x10xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK-LABEL: func.func @transpose_s2(
// CHECK:       %[[Z:.*]] = tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [2, 8, 4, 4] [1, 1, 2, 2] : tensor<2x8x4x4xf32> into tensor<2x8x10x10xf32>
// CHECK:       linalg.generic {indexing_maps = [#[[$TW]], #[[$TX]], #[[$O]]], {{.*}} ins(%arg1, %[[Z]] : tensor<8x4x3x3xf32>, tensor<2x8x10x10xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK-LABEL: func.func @weight_gradient(
// CHECK:       %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:       linalg.generic {indexing_maps = [#[[$W]], #[[$DX]], #[[$DO]]], {{.*}} ins(%{{.*}}, %[[P]] : tensor<8x2x8x8xf32>, tensor<2x4x10x10xf32>) outs(%{{.*}} : tensor<8x4x3x3xf32>)
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x4x4xf32> {
  %y = "rlx.conv2d"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x4x4xf32>
  return %y : tensor<2x8x4x4xf32>
}
func.func @grouped(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x3x3xf32> {
  %y = "rlx.conv2d"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x3x3xf32>
  return %y : tensor<2x6x3x3xf32>
}
func.func @transpose_s1(%g: tensor<2x8x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %y = "rlx.conv2d_transpose"(%g, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>} : (tensor<2x8x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}
func.func @transpose_s2(%g: tensor<2x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %y = "rlx.conv2d_transpose"(%g, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<2x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}
func.func @weight_gradient(%x: tensor<2x4x8x8xf32>, %g: tensor<2x8x8x8xf32>) -> tensor<8x4x3x3xf32> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0, 2, 3>} : (tensor<2x4x8x8xf32>) -> tensor<4x2x8x8xf32>
  %gt = "rlx.permute_dims"(%g) {axes = array<i64: 1, 0, 2, 3>} : (tensor<2x8x8x8xf32>) -> tensor<8x2x8x8xf32>
  %dw = "rlx.conv2d"(%xt, %gt) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>} : (tensor<4x2x8x8xf32>, tensor<8x2x8x8xf32>) -> tensor<4x8x3x3xf32>
  %r = "rlx.permute_dims"(%dw) {axes = array<i64: 1, 0, 2, 3>} : (tensor<4x8x3x3xf32>) -> tensor<8x4x3x3xf32>
  return %r : tensor<8x4x3x3xf32>
}

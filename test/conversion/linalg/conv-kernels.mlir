// RUN: gradir-opt %s --rlx-to-linalg=matmul-kernels=true | FileCheck %s
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=OFF

// rlx-to-linalg{matmul-kernels=true}: a convolution of one group, stride 1
// and at least 64 output pixels per image is the implicit-GEMM kernel's
// generic (conv-implicit-gemm.mlir); other convolutions' GEMMs (one group)
// are the kernels' linalg.contract {gradir.kernel}: the packed weights times
// the im2col matrix.  The weight gradient's form (one "image" whose im2col
// matrix is over COL_BLOCK_BYTES) with kernel rows of at least
// TRANSPOSED_COL_KW (16) elements builds the matrix transposed, (N*OH*OW,
// C*KH*KW), its innermost loop over KW, and the kernel reads it as a
// transposed rhs (map (d1, d2)), per block of input channels and per half
// of the images when there are two images or more, as below; with shorter
// kernel rows, the usual layout, built and multiplied per block of input
// channels (K of the GEMM: 8 channels of 8x8 here, 512 rows) whose products
// the kernel adds to the accumulator the loop carries (outs), in a loop over
// halves of the images marked gradir.independent_iterations (the threads'
// share).  Without the option: linalg.matmul for the schedule.
// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @forward(
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8x27xf32>, tensor<2x3x14x14xf32>, tensor<3x3x3xf32>) outs(%{{.*}} : tensor<2x8x12x12xf32>) attrs =  {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>}
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @weight_gradient_long_rows(
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<25x36864xf32>)
// CHECK: linalg.contract indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]] {gradir.kernel} ins(%{{.*}}, %{{.*}} : tensor<6x36864xf32>, tensor<25x36864xf32>)
// CHECK-LABEL: func.func @weight_gradient_long_rows_blocks(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<4x8x3x3xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0, 0] [2, 32, 18, 18]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<8x18xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [2, 8, 18, 18]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<18x2048xf32>)
// CHECK: linalg.contract indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]] {gradir.kernel} ins(%{{.*}}, %{{.*}} : tensor<8x2048xf32>, tensor<18x2048xf32>) outs(%[[ACC]] : tensor<8x18xf32>)
// CHECK: } {gradir.independent_iterations}
// CHECK-LABEL: func.func @weight_gradient_short_rows(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<6x16x5x5xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0, 0] [3, 64, 12, 12]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<16x75xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [3, 8, 12, 12]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<512x75xf32>)
// CHECK: linalg.contract indexing_maps = [#[[$MK]], #[[$KN]], #[[$MN]]] {gradir.kernel} ins(%{{.*}}, %{{.*}} : tensor<16x512xf32>, tensor<512x75xf32>) outs(%[[ACC]] : tensor<16x75xf32>)
// CHECK: } {gradir.independent_iterations}
// OFF-NOT: gradir.kernel
// OFF: linalg.matmul
func.func @forward(%x: tensor<2x3x14x14xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x8x12x12xf32> {
  %y = "rlx.conv2d"(%x, %w) : (tensor<2x3x14x14xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x12x12xf32>
  return %y : tensor<2x8x12x12xf32>
}
func.func @weight_gradient_long_rows(%x: tensor<1x64x28x28xf32>, %g: tensor<6x64x24x24xf32>) -> tensor<1x6x5x5xf32> {
  %y = "rlx.conv2d"(%x, %g) : (tensor<1x64x28x28xf32>, tensor<6x64x24x24xf32>) -> tensor<1x6x5x5xf32>
  return %y : tensor<1x6x5x5xf32>
}
func.func @weight_gradient_long_rows_blocks(%x: tensor<4x32x18x18xf32>, %g: tensor<8x32x16x16xf32>) -> tensor<4x8x3x3xf32> {
  %y = "rlx.conv2d"(%x, %g) : (tensor<4x32x18x18xf32>, tensor<8x32x16x16xf32>) -> tensor<4x8x3x3xf32>
  return %y : tensor<4x8x3x3xf32>
}
func.func @weight_gradient_short_rows(%x: tensor<6x64x12x12xf32>, %g: tensor<16x64x8x8xf32>) -> tensor<6x16x5x5xf32> {
  %y = "rlx.conv2d"(%x, %g) : (tensor<6x64x12x12xf32>, tensor<16x64x8x8xf32>) -> tensor<6x16x5x5xf32>
  return %y : tensor<6x16x5x5xf32>
}

// RUN: gradir-opt %s --rlx-to-linalg=matmul-kernels=true | FileCheck %s
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=OFF

// rlx-to-linalg{matmul-kernels=true}: a convolution of one group, stride 1
// and at least 64 output pixels per image is the implicit-GEMM kernel's
// generic (conv-implicit-gemm.mlir).  The weight gradient's form (few output
// pixels per image, an image's im2col matrix over COL_BLOCK_BYTES) of unit
// column dilation is the weight gradient kernel's generic
// (gradir.wgrad_conv_kernel, writing the output channels first, (O, N, OH,
// OW): one GEMM over the columns of every image), read back as NCHW (map
// (d1, d0, d2, d3)), the whole input padded first, no loop.  Other
// convolutions' GEMMs (one group) are the kernels' linalg.contract
// {gradir.kernel}: the packed weights times the im2col matrix; the weight
// gradient's form of column dilation 2 (a stride-2 conv's) builds the matrix
// per block of input channels (K of the GEMM: 16 channels of 6x6 here, 576
// rows) whose products the kernel adds to the accumulator the loop carries
// (outs), in a loop over halves of the images marked
// gradir.independent_iterations (the threads' share).  Without the option:
// linalg.matmul for the schedule.
// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$YW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$TR:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// Each marked generic sits in an scf.execute_region no_inline and reads the
// images through a linalg.copy (elementwise fusion would fold a generic
// producer of the images into it, without the mark; rlx-conv-kernels drops
// the copy).
// CHECK-LABEL: func.func @forward(
// CHECK: scf.execute_region -> tensor<2x8x12x12xf32> no_inline {
// CHECK: %[[FX:.*]] = linalg.copy {{.*}}ins(%{{.*}} : tensor<2x3x14x14xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}}, %[[FX]], %{{.*}} : tensor<8x27xf32>, tensor<2x3x14x14xf32>, tensor<3x3x3xf32>) outs(%{{.*}} : tensor<2x8x12x12xf32>) attrs =  {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>}
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @weight_gradient_long_rows(
// CHECK: %[[Y:.*]] = scf.execute_region -> tensor<6x1x5x5xf32> no_inline {
// CHECK: %[[XC:.*]] = linalg.copy {{.*}}ins(%{{.*}} : tensor<1x64x28x28xf32>)
// CHECK-NEXT: linalg.generic {indexing_maps = [{{.*}}, {{.*}}, {{.*}}, #[[$YW]]], {{.*}} ins(%{{.*}}, %[[XC]], %{{.*}} : tensor<6x36864xf32>, tensor<1x64x28x28xf32>, tensor<64x24x24xf32>) outs(%{{.*}} : tensor<6x1x5x5xf32>) attrs =  {gradir.wgrad_conv_kernel = array<i64: 24, 24, 1, 1, 1, 1>}
// CHECK: linalg.generic {indexing_maps = [#[[$TR]], {{.*}}]{{.*}} ins(%[[Y]] : tensor<6x1x5x5xf32>) outs(%{{.*}} : tensor<1x6x5x5xf32>)
// CHECK-NOT: linalg.contract
// CHECK-LABEL: func.func @weight_gradient_blocks(
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x4x3x3xf32>) attrs =  {gradir.wgrad_conv_kernel = array<i64: 16, 16, 1, 1, 1, 1>}
// CHECK-NOT: scf.for
// CHECK-LABEL: func.func @weight_gradient_short_rows(
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<16x6x5x5xf32>) attrs =  {gradir.wgrad_conv_kernel = array<i64: 8, 8, 1, 1, 1, 1>}
// CHECK-LABEL: func.func @weight_gradient_dilated(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<6x16x6x6xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0, 0] [3, 64, 16, 16]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<16x108xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [3, 16, 16, 16]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<576x108xf32>)
// CHECK: linalg.contract indexing_maps = [#[[$MK]], #[[$KN]], #[[$MN]]] {gradir.kernel} ins(%{{.*}}, %{{.*}} : tensor<16x576xf32>, tensor<576x108xf32>) outs(%[[ACC]] : tensor<16x108xf32>)
// CHECK: } {gradir.independent_iterations}
// OFF-NOT: gradir.kernel
// OFF-NOT: gradir.wgrad_conv_kernel
// OFF: linalg.matmul
func.func @forward(%x: tensor<2x3x14x14xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x8x12x12xf32> {
  %y = "rlx.conv2d"(%x, %w) : (tensor<2x3x14x14xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x12x12xf32>
  return %y : tensor<2x8x12x12xf32>
}
func.func @weight_gradient_long_rows(%x: tensor<1x64x28x28xf32>, %g: tensor<6x64x24x24xf32>) -> tensor<1x6x5x5xf32> {
  %y = "rlx.conv2d"(%x, %g) : (tensor<1x64x28x28xf32>, tensor<6x64x24x24xf32>) -> tensor<1x6x5x5xf32>
  return %y : tensor<1x6x5x5xf32>
}
func.func @weight_gradient_blocks(%x: tensor<4x32x16x16xf32>, %g: tensor<8x32x16x16xf32>) -> tensor<4x8x3x3xf32> {
  %y = "rlx.conv2d"(%x, %g) {padding = array<i64: 1, 1, 1, 1>} : (tensor<4x32x16x16xf32>, tensor<8x32x16x16xf32>) -> tensor<4x8x3x3xf32>
  return %y : tensor<4x8x3x3xf32>
}
func.func @weight_gradient_short_rows(%x: tensor<6x64x12x12xf32>, %g: tensor<16x64x8x8xf32>) -> tensor<6x16x5x5xf32> {
  %y = "rlx.conv2d"(%x, %g) : (tensor<6x64x12x12xf32>, tensor<16x64x8x8xf32>) -> tensor<6x16x5x5xf32>
  return %y : tensor<6x16x5x5xf32>
}
func.func @weight_gradient_dilated(%x: tensor<6x64x16x16xf32>, %g: tensor<16x64x6x6xf32>) -> tensor<6x16x6x6xf32> {
  %y = "rlx.conv2d"(%x, %g) {dilation = array<i64: 2, 2>} : (tensor<6x64x16x16xf32>, tensor<16x64x6x6xf32>) -> tensor<6x16x6x6xf32>
  return %y : tensor<6x16x6x6xf32>
}

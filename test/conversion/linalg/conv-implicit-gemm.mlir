// RUN: gradir-opt %s --rlx-to-linalg=matmul-kernels=true | FileCheck %s
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=OFF

// rlx-to-linalg{matmul-kernels=true}: a conv2d of one group, stride 1 and
// at least 64 output pixels per image is one linalg.generic
// {gradir.conv_kernel = [kh, kw, sh, sw, dh, dw]} over (n, o, oy, ox, c,
// ky, kx) reading the packed weights and the padded images (no im2col
// matrix, no read back as NCHW), per block of at most 4096 output pixels
// (CONV_KERNEL_BLOCK_PIXELS: 4 images of 32x32 here, in a loop marked
// gradir.independent_iterations); rlx-conv-kernels makes it a call of the
// implicit-GEMM kernel.  Stride 2 keeps the im2col GEMM.
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
// CHECK-DAG: #[[$X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5 * 2, d3 + d6)>
// CHECK-LABEL: func.func @forward(
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 0] high[0, 0, 2, 1]
// CHECK: linalg.generic {indexing_maps = [#[[$W]], #[[$X]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8x27xf32>, tensor<2x3x17x15xf32>, tensor<3x3x3xf32>) outs(%{{.*}} : tensor<2x8x13x13xf32>) attrs =  {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 2, 1>}
// CHECK-NOT: linalg.contract
// CHECK-LABEL: func.func @blocks(
// CHECK: scf.for
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>
// CHECK: } {gradir.independent_iterations}
// CHECK-LABEL: func.func @strided(
// CHECK-NOT: gradir.conv_kernel
// CHECK: linalg.contract
// OFF-NOT: gradir.conv_kernel
func.func @forward(%x: tensor<2x3x14x14xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x8x13x13xf32> {
  %y = "rlx.conv2d"(%x, %w) {padding = array<i64: 1, 0, 2, 1>, dilation = array<i64: 2, 1>} : (tensor<2x3x14x14xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x13x13xf32>
  return %y : tensor<2x8x13x13xf32>
}
func.func @blocks(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32> {
  %y = "rlx.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
  return %y : tensor<8x16x32x32xf32>
}
func.func @strided(%x: tensor<2x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x8x16x16xf32> {
  %y = "rlx.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x16x16xf32>
  return %y : tensor<2x8x16x16xf32>
}

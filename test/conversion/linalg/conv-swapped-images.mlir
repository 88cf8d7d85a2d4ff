// RUN: gradir-opt %s --rlx-to-linalg=matmul-kernels=true | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='stage=bufferized kernels=true threads=1' | FileCheck %s --check-prefix=BUF

// A conv2d whose data is permute_dims(x, [1, 0, 2, 3]) (the weight
// gradient's (C, N, H, W) of an NCHW x, as the conv2d VJP rule emits it)
// reads x itself through the maps (conv.py's SWAPPED_IMAGES): x padded in
// its own layout, the marked generic's images map (d4, d0, ...) (the
// kernel's images n and channels c read as x's c and n), no transposed copy
// of x; rlx-conv-kernels then gives the kernel a memref.transpose view of
// the padded buffer.  So do the im2col forms (the images map swapped) and
// blocks of images (slices of x's second dim), and the forward kernel.
// CHECK-DAG: #[[$XW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[$XD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0 * 8 + d1, d4, d5 + d2 * 2, d6 + d3 * 2)>
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x16x16x16xf32>, %[[G:[a-z0-9]+]]: tensor<8x16x16x16xf32>)
// CHECK-NOT: ins(%[[X]]
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[PC:.*]] = linalg.copy {{.*}}ins(%[[P]] : tensor<8x16x18x18xf32>)
// CHECK-NEXT: linalg.generic {indexing_maps = [{{.*}}, #[[$XW]], {{.*}}, {{.*}}], {{.*}} ins(%{{.*}}, %[[PC]], %{{.*}} : tensor<16x2048xf32>, tensor<8x16x18x18xf32>, tensor<8x16x16xf32>) outs(%{{.*}} : tensor<16x16x3x3xf32>) attrs =  {gradir.wgrad_conv_kernel = array<i64: 16, 16, 1, 1, 1, 1>}
// CHECK-LABEL: func.func @weight_gradient_dilated(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x16x16x16xf32>,
// CHECK-NOT: ins(%[[X]]
// CHECK: scf.for %[[N0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x32x3x3xf32>)
// CHECK-NEXT: %[[XS:.*]] = tensor.extract_slice %[[X]][0, %[[N0]], 0, 0] [8, 8, 16, 16]
// CHECK-NEXT: %[[P:.*]] = tensor.pad %[[XS]] low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[$XD]], {{.*}}]{{.*}} ins(%[[P]], %{{.*}}, %{{.*}} : tensor<8x8x17x17xf32>,
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<3x4x12x12xf32>,
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[PC:.*]] = linalg.copy {{.*}}ins(%[[P]] : tensor<3x4x14x14xf32>)
// CHECK-NEXT: linalg.generic {indexing_maps = [{{.*}}, #[[$XW]], {{.*}}, {{.*}}], {{.*}} ins(%{{.*}}, %[[PC]], %{{.*}} : tensor<16x27xf32>, tensor<3x4x14x14xf32>, tensor<3x3x3xf32>) outs(%{{.*}} : tensor<4x16x12x12xf32>) attrs =  {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>}

// Once bufferized: x copied once, into the padded buffer; the kernel reads
// a transposed view of it.
// BUF-LABEL: func.func @weight_gradient(
// BUF-SAME: %[[X:[a-z0-9]+]]: memref<8x16x16x16xf32>,
// BUF-NOT: ins(%[[X]]
// BUF: %[[P:.*]] = memref.alloc() {{.*}} : memref<8x16x18x18xf32>
// BUF: %[[IN:.*]] = memref.subview %[[P]][0, 0, 1, 1] [8, 16, 16, 16]
// BUF-NEXT: linalg.copy {{.*}}ins(%[[X]] : memref<8x16x16x16xf32>) outs(%[[IN]] :
// BUF-NOT: ins(%[[X]]
// BUF: %[[T:.*]] = memref.transpose %[[P]] (d0, d1, d2, d3) -> (d1, d0, d2, d3) : memref<8x16x18x18xf32> to memref<16x8x18x18xf32, strided<[324, 5184, 18, 1]>>
// BUF-NOT: linalg.copy
// BUF: %[[TC:.*]] = memref.cast %[[T]]
// BUF-NOT: linalg.copy
// BUF: call @gradir_kernel_{{[0-9a-f]+}}_wgrad_conv_f32(%{{.*}}, %[[TC]],
// BUF-LABEL: func.func @forward(
// BUF: %[[P:.*]] = memref.alloc() {{.*}} : memref<3x4x14x14xf32>
// BUF: %[[T:.*]] = memref.transpose %[[P]] (d0, d1, d2, d3) -> (d1, d0, d2, d3) : memref<3x4x14x14xf32> to memref<4x3x14x14xf32, strided<[196, 784, 14, 1]>>
// BUF: %[[TC:.*]] = memref.cast %[[T]]
// BUF: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(%{{.*}}, %[[TC]],
func.func @weight_gradient(%x: tensor<8x16x16x16xf32>, %g: tensor<8x16x16x16xf32>) -> tensor<16x16x3x3xf32> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0, 2, 3>} : (tensor<8x16x16x16xf32>) -> tensor<16x8x16x16xf32>
  %gt = "rlx.permute_dims"(%g) {axes = array<i64: 1, 0, 2, 3>} : (tensor<8x16x16x16xf32>) -> tensor<16x8x16x16xf32>
  %dw = "rlx.conv2d"(%xt, %gt) {padding = array<i64: 1, 1, 1, 1>} : (tensor<16x8x16x16xf32>, tensor<16x8x16x16xf32>) -> tensor<16x16x3x3xf32>
  %r = "rlx.permute_dims"(%dw) {axes = array<i64: 1, 0, 2, 3>} : (tensor<16x16x3x3xf32>) -> tensor<16x16x3x3xf32>
  return %r : tensor<16x16x3x3xf32>
}
func.func @weight_gradient_dilated(%x: tensor<8x16x16x16xf32>, %g: tensor<8x32x8x8xf32>) -> tensor<32x16x3x3xf32> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0, 2, 3>} : (tensor<8x16x16x16xf32>) -> tensor<16x8x16x16xf32>
  %gt = "rlx.permute_dims"(%g) {axes = array<i64: 1, 0, 2, 3>} : (tensor<8x32x8x8xf32>) -> tensor<32x8x8x8xf32>
  %dw = "rlx.conv2d"(%xt, %gt) {padding = array<i64: 1, 1, 0, 0>, dilation = array<i64: 2, 2>} : (tensor<16x8x16x16xf32>, tensor<32x8x8x8xf32>) -> tensor<16x32x3x3xf32>
  %r = "rlx.permute_dims"(%dw) {axes = array<i64: 1, 0, 2, 3>} : (tensor<16x32x3x3xf32>) -> tensor<32x16x3x3xf32>
  return %r : tensor<32x16x3x3xf32>
}
func.func @forward(%x: tensor<3x4x12x12xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<4x16x12x12xf32> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0, 2, 3>} : (tensor<3x4x12x12xf32>) -> tensor<4x3x12x12xf32>
  %y = "rlx.conv2d"(%xt, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<4x3x12x12xf32>, tensor<16x3x3x3xf32>) -> tensor<4x16x12x12xf32>
  return %y : tensor<4x16x12x12xf32>
}

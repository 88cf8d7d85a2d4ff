// Convolutions of f16/bf16 programs in the GPU pipeline (conv_direct.py,
// rlx-to-linalg{direct-convolutions=true}), up to bufferization: the input
// is padded (or zero-inserted, stride 2) in its own type, and the
// convolution's generic reads the half operands, extending each in its
// body before the f32 multiply-add, so the GEMM kernels see bf16/f16
// tiles (tensor cores) and the result is rounded once by the truncf
// after it.  The weight gradient (a conv2d of transposed operands, its
// result transposed) reads the untransposed padded data through its map
// and writes the transposed result in place: the rounding after it is an
// identity generic (the GEMM's epilogue).
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=bufferize' | FileCheck %s

// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[X:.*]]: memref<2x16x6x6xbf16>, %[[W:.*]]: memref<32x16x3x3xbf16>, %[[Y:.*]]: memref<2x32x6x6xbf16>)
// CHECK-NOT: xf32>
// CHECK: %[[XP:.*]] = memref.alloc() {{.*}} : memref<2x16x8x8xbf16>
// CHECK: linalg.map outs(%[[XP]] : memref<2x16x8x8xbf16>)
// CHECK: %[[IN:.*]] = memref.subview %[[XP]][0, 0, 1, 1] [2, 16, 6, 6] [1, 1, 1, 1]
// CHECK: memref.copy %[[X]], %[[IN]] : memref<2x16x6x6xbf16> to
// CHECK: %[[ACC:.*]] = memref.alloc() {{.*}} : memref<2x32x6x6xf32>
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[XP]] : memref<32x16x3x3xbf16>, memref<2x16x8x8xbf16>) outs(%[[ACC]] : memref<2x32x6x6xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NEXT: arith.addf %[[C]], %[[P]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : memref<2x32x6x6xf32>) outs(%[[Y]] : memref<2x32x6x6xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
func.func @conv(%x: tensor<2x16x6x6xbf16>, %w: tensor<32x16x3x3xbf16>) -> tensor<2x32x6x6xbf16> {
  %y = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x16x6x6xbf16>, tensor<32x16x3x3xbf16>) -> tensor<2x32x6x6xbf16>
  return %y : tensor<2x32x6x6xbf16>
}

// The data gradient of a stride-2 convolution: dy zero-inserted (every
// other row and column) into f16 zeros.
// CHECK-LABEL: func.func @data_grad(
// CHECK-SAME: %[[DY:.*]]: memref<2x32x4x4xf16>, %[[W:.*]]: memref<32x16x3x3xf16>, %[[DX:.*]]: memref<2x16x7x7xf16>)
// CHECK-NOT: xf32>
// CHECK: %[[Z:.*]] = memref.alloc() {{.*}} : memref<2x32x9x9xf16>
// CHECK: %[[IN:.*]] = memref.subview %[[Z]][0, 0, 1, 1] [2, 32, 4, 4] [1, 1, 2, 2]
// CHECK: memref.copy %[[DY]], %[[IN]] : memref<2x32x4x4xf16> to
// CHECK: %[[ACC:.*]] = memref.alloc() {{.*}} : memref<2x16x7x7xf32>
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[Z]] : memref<32x16x3x3xf16>, memref<2x32x9x9xf16>) outs(%[[ACC]] : memref<2x16x7x7xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f16, %{{.*}}: f16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : memref<2x16x7x7xf32>) outs(%[[DX]] : memref<2x16x7x7xf16>)
func.func @data_grad(%dy: tensor<2x32x4x4xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<2x16x7x7xf16> {
  %dx = "rlx.conv2d_transpose"(%dy, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x32x4x4xf16>, tensor<32x16x3x3xf16>) -> tensor<2x16x7x7xf16>
  return %dx : tensor<2x16x7x7xf16>
}

// CHECK-LABEL: func.func @weight_grad(
// CHECK-SAME: %[[X:.*]]: memref<2x16x6x6xbf16>, %[[DY:.*]]: memref<2x32x6x6xbf16>, %[[DW:.*]]: memref<32x16x3x3xbf16>)
// CHECK-NOT: xf32>
// CHECK: %[[XP:.*]] = memref.alloc() {{.*}} : memref<2x16x8x8xbf16>
// CHECK: memref.copy %[[X]], %{{.*}} : memref<2x16x6x6xbf16> to
// CHECK: %[[ACC:.*]] = memref.alloc() {{.*}} : memref<32x16x3x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[DY]], %[[XP]] : memref<2x32x6x6xbf16>, memref<2x16x8x8xbf16>) outs(%[[ACC]] : memref<32x16x3x3xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.extf
// CHECK: linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ID]]], {{.*}} ins(%[[ACC]] : memref<32x16x3x3xf32>) outs(%[[DW]] : memref<32x16x3x3xbf16>)
func.func @weight_grad(%x: tensor<2x16x6x6xbf16>, %dy: tensor<2x32x6x6xbf16>) -> tensor<32x16x3x3xbf16> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0, 2, 3>} : (tensor<2x16x6x6xbf16>) -> tensor<16x2x6x6xbf16>
  %dyt = "rlx.permute_dims"(%dy) {axes = array<i64: 1, 0, 2, 3>} : (tensor<2x32x6x6xbf16>) -> tensor<32x2x6x6xbf16>
  %g = "rlx.conv2d"(%xt, %dyt) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<16x2x6x6xbf16>, tensor<32x2x6x6xbf16>) -> tensor<16x32x3x3xbf16>
  %dw = "rlx.permute_dims"(%g) {axes = array<i64: 1, 0, 2, 3>} : (tensor<16x32x3x3xbf16>) -> tensor<32x16x3x3xbf16>
  return %dw : tensor<32x16x3x3xbf16>
}

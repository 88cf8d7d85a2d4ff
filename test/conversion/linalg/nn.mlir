// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// Convolutions are GEMMs over packed operands: an im2col generic writes the
// (C*KH*KW, N*OH*OW) matrix, its columns padded with zeros to a multiple of
// 32 (the widest register tile of the CPU schedule: no padding copy there),
// a generic packs the weights to (O, C*KH*KW), linalg.matmul multiplies,
// and a generic reads the product back as NCHW.

// CHECK-DAG: #[[$COLX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 * 2 + d1, d5 * 2 + d2, d3 + d6)>
// CHECK-DAG: #[[$COLO:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 * 9 + d2 * 3 + d3, (d4 * 3 + d5) * 5 + d6)>
// CHECK-DAG: #[[$WPACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 9 + d2 * 3 + d3)>
// CHECK-DAG: #[[$UNPACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, (d0 * 3 + d2) * 5 + d3)>
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x5x5xf32>, %[[W:.*]]: tensor<3x2x3x3xf32>)
// CHECK: %[[WM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$WPACK]]], {{.*}} ins(%[[W]] : tensor<3x2x3x3xf32>) outs(%{{.*}} : tensor<3x18xf32>)
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[ZCOLS:.*]] = linalg.fill {{.*}} -> tensor<18x17xf32>
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %[[ZCOLS]] into %{{.*}}[0, 15] [18, 17] [1, 1] : tensor<18x17xf32> into tensor<18x32xf32>
// CHECK: %[[COL:.*]] = linalg.generic {indexing_maps = [#[[$COLX]], #{{.*}}, #{{.*}}, #[[$COLO]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[P]], %{{.*}}, %{{.*}} : tensor<1x2x7x7xf32>, tensor<1x2x3x3xf32>, tensor<1x3x5xf32>) outs(%{{.*}} : tensor<18x15xf32>)
// CHECK: %[[PACKED:.*]] = tensor.insert_slice %[[COL]] into %[[PADDED]][0, 0] [18, 15] [1, 1]
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[WM]], %[[PACKED]] : tensor<3x18xf32>, tensor<18x32xf32>) outs(%{{.*}} : tensor<3x32xf32>)
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$UNPACK]], #{{.*}}], {{.*}} ins(%[[Y]] : tensor<3x32xf32>) outs(%{{.*}} : tensor<1x3x3x5xf32>)
// CHECK: return %[[OUT]]
func.func @conv2d(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x5xf32> {
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x5xf32>
  return %0 : tensor<1x3x3x5xf32>
}

// -----

// Groups: one GEMM per group (linalg.batch_matmul over G, Og x Cg*KH*KW).

// CHECK-DAG: #[[$WPACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 floordiv 3, d0 mod 3, d1 * 9 + d2 * 3 + d3)>
// CHECK-DAG: #[[$UNPACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 3, d1 mod 3, (d0 * 3 + d2) * 3 + d3)>
// CHECK-LABEL: func.func @conv2d_groups(
// CHECK: %[[WM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$WPACK]]], {{.*}} outs(%{{.*}} : tensor<2x3x18xf32>)
// CHECK: %[[COL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x18x9xf32>)
// CHECK: %[[PACKED:.*]] = tensor.insert_slice %[[COL]] into %{{.*}}[0, 0, 0] [2, 18, 9] [1, 1, 1] : tensor<2x18x9xf32> into tensor<2x18x32xf32>
// CHECK: %[[Y:.*]] = linalg.batch_matmul ins(%[[WM]], %[[PACKED]] : tensor<2x3x18xf32>, tensor<2x18x32xf32>) outs(%{{.*}} : tensor<2x3x32xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$UNPACK]], #{{.*}}], {{.*}} ins(%[[Y]] : tensor<2x3x32xf32>) outs(%{{.*}} : tensor<1x6x3x3xf32>)
func.func @conv2d_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// An im2col matrix over 256 KiB is packed and multiplied per block of images
// (here 4 of 16: 4 x 25 x 576 f32 = 225 KiB), in an scf.for that writes the
// output's slices, marked gradir.independent_iterations (each iteration
// writes its own images only: rlx-parallel-loops may run them on threads).

// CHECK-LABEL: func.func @conv2d_blocked(
// CHECK-SAME: %[[X:.*]]: tensor<16x1x28x28xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[WM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6x25xf32>)
// CHECK: %[[R:.*]] = scf.for %[[N0:.*]] = %[[C0]] to %[[C16]] step %[[C4]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<16x6x24x24xf32>)
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[N0]], 0, 0, 0] [4, 1, 28, 28] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[XS]], {{.*}} outs(%{{.*}} : tensor<25x2304xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[WM]], %{{.*}} : tensor<6x25xf32>, tensor<25x2304xf32>)
// CHECK: %[[PART:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<6x2304xf32>) outs(%{{.*}} : tensor<4x6x24x24xf32>)
// CHECK: %[[UPD:.*]] = tensor.insert_slice %[[PART]] into %[[ACC]][%[[N0]], 0, 0, 0] [4, 6, 24, 24] [1, 1, 1, 1]
// CHECK: scf.yield %[[UPD]]
// CHECK-NEXT: } {gradir.independent_iterations}
// CHECK: return %[[R]]
func.func @conv2d_blocked(%x: tensor<16x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) -> tensor<16x6x24x24xf32> {
  %0 = "rlx.conv2d"(%x, %w) : (tensor<16x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<16x6x24x24xf32>
  return %0 : tensor<16x6x24x24xf32>
}

// -----

// Blocks of images with padding: each block pads its own images in the
// loop (PAD_PER_BLOCK: no padded copy of the whole input before it), here
// asymmetrically (top 1, left 2, bottom 3, right 0), 2 images of 28x26
// output pixels a block (25 x 1456 f32 = 142 KiB).

// CHECK-LABEL: func.func @conv2d_blocked_padded(
// CHECK-SAME: %[[X:.*]]: tensor<16x1x28x28xf32>
// CHECK-NOT: tensor.pad
// CHECK: scf.for %[[N0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<16x6x28x26xf32>)
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[N0]], 0, 0, 0] [2, 1, 28, 28] [1, 1, 1, 1]
// CHECK: %[[XP:.*]] = tensor.pad %[[XS]] low[0, 0, 1, 2] high[0, 0, 3, 0]
// CHECK: } : tensor<2x1x28x28xf32> to tensor<2x1x32x30xf32>
// CHECK: linalg.generic {{.*}} ins(%[[XP]], {{.*}} outs(%{{.*}} : tensor<25x1456xf32>)
// CHECK: linalg.matmul
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%[[N0]], 0, 0, 0] [2, 6, 28, 26] [1, 1, 1, 1]
// CHECK: } {gradir.independent_iterations}
func.func @conv2d_blocked_padded(%x: tensor<16x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) -> tensor<16x6x28x26xf32> {
  %0 = "rlx.conv2d"(%x, %w) {padding = array<i64: 1, 2, 3, 0>} : (tensor<16x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<16x6x28x26xf32>
  return %0 : tensor<16x6x28x26xf32>
}

// -----

// conv2d_transpose: a GEMM (O*KH*KW x Cin) x (Cin x N*H*W), then col2im:
// one scf.for over ky around one over kx carries the padded output; its
// body adds the offset's rows of the product (rows ky*KW + kx :: KH*KW) into
// the strided view of the output they reach (one loop nest for the whole
// kernel).  The padding is cropped at the end.  (A product over 256 KiB is
// computed per block of images in an scf.for, as conv2d's im2col.)

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$XPACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, (d0 * 4 + d2) * 4 + d3)>
// CHECK-DAG: #[[$WPACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 * 9 + d2 * 3 + d3, d0)>
// CHECK-LABEL: func.func @conv2d_transpose(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x3x3x3xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[WM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$WPACK]]], {{.*}} ins(%[[W]] : tensor<2x3x3x3xf32>) outs(%{{.*}} : tensor<27x2xf32>)
// CHECK: %[[XM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$XPACK]]], {{.*}} ins(%[[X]] : tensor<1x2x4x4xf32>) outs(%{{.*}} : tensor<2x16xf32>)
// CHECK: %[[XP:.*]] = tensor.insert_slice %[[XM]] into %{{.*}}[0, 0] [2, 16] [1, 1] : tensor<2x16xf32> into tensor<2x32xf32>
// CHECK: %[[COLS:.*]] = linalg.matmul ins(%[[WM]], %[[XP]] : tensor<27x2xf32>, tensor<2x32xf32>) outs(%{{.*}} : tensor<27x32xf32>)
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<1x3x9x9xf32>
// CHECK: %[[OUT:.*]] = scf.for %[[KY:[a-z0-9_]+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[A:.*]] = %[[Z]]) -> (tensor<1x3x9x9xf32>) {
// CHECK-NEXT: %[[IN:.*]] = scf.for %[[KX:[a-z0-9_]+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[B:.*]] = %[[A]]) -> (tensor<1x3x9x9xf32>) {
// CHECK-NEXT: %[[R0:.*]] = arith.muli %[[KY]], %[[C3]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[R0]], %[[KX]] : index
// CHECK-NEXT: %[[ROWS:.*]] = tensor.extract_slice %[[COLS]][%[[ROW]], 0] [3, 32] [9, 1] : tensor<27x32xf32> to tensor<3x32xf32>
// CHECK-NEXT: %[[V:.*]] = tensor.extract_slice %[[B]][0, 0, %[[KY]], %[[KX]]] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x9x9xf32> to tensor<1x3x4x4xf32>
// CHECK-NEXT: %[[U:.*]] = linalg.generic {indexing_maps = [#[[$XPACK]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[ROWS]] : tensor<3x32xf32>) outs(%[[V]] : tensor<1x3x4x4xf32>)
// CHECK: arith.addf
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[U]] into %[[B]][0, 0, %[[KY]], %[[KX]]] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x9x9xf32>
// CHECK-NEXT: scf.yield %[[INS]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[IN]]
// CHECK-NEXT: }
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = tensor.extract_slice %[[OUT]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<1x3x9x9xf32> to tensor<1x3x8x8xf32>
// CHECK: return %[[R]]
func.func @conv2d_transpose(%x: tensor<1x2x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  %0 = "rlx.conv2d_transpose"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

// Groups: the product is one GEMM per group (G, Og*KH*KW, cols); the
// offset's rows are read for every group at once.

// CHECK-DAG: #[[$GROWS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 2, d1 mod 2, (d0 * 3 + d2) * 3 + d3)>
// CHECK-LABEL: func.func @conv2d_transpose_groups(
// CHECK: %[[COLS:.*]] = linalg.batch_matmul {{.*}} -> tensor<2x12x32xf32>
// CHECK: scf.for %[[KY:[a-z0-9_]+]] = {{.*}} -> (tensor<1x4x6x9xf32>)
// CHECK-NEXT: scf.for %[[KX:[a-z0-9_]+]] = {{.*}} iter_args(%[[B:.*]] = %{{.*}}) -> (tensor<1x4x6x9xf32>)
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[COLS]][0, %{{.*}}, 0] [2, 2, 32] [1, 6, 1] : tensor<2x12x32xf32> to tensor<2x2x32xf32>
// CHECK-NEXT: %[[V:.*]] = tensor.extract_slice %[[B]][0, 0, %[[KY]], %[[KX]]] [1, 4, 3, 3] [1, 1, 2, 3]
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[$GROWS]], #{{.*}}], {{.*}} ins(%[[ROWS]] : tensor<2x2x32xf32>) outs(%[[V]] : tensor<1x4x3x3xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 1] [1, 4, 5, 8] [1, 1, 1, 1] : tensor<1x4x6x9xf32> to tensor<1x4x5x8xf32>
func.func @conv2d_transpose_groups(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x2x3xf32>) -> tensor<1x4x5x8xf32> {
  %0 = "rlx.conv2d_transpose"(%x, %w) {strides = array<i64: 2, 3>, padding = array<i64: 0, 1, 2, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64, output_padding = array<i64: 1, 0>} : (tensor<1x4x3x3xf32>, tensor<4x2x2x3xf32>) -> tensor<1x4x5x8xf32>
  return %0 : tensor<1x4x5x8xf32>
}

// -----

// Strides over 1: a GEMM per block of images, then col2im.
// CHECK-LABEL: func.func @conv2d_transpose_blocked(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<8x6x19x19xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<150x16xf32>, tensor<16x256xf32>)
// CHECK: scf.for {{.*}} -> (tensor<4x6x19x19xf32>)
// CHECK-NEXT: scf.for {{.*}} -> (tensor<4x6x19x19xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [6, 256] [25, 1] : tensor<150x256xf32> to tensor<6x256xf32>
// CHECK-COUNT-1: tensor.insert_slice %{{.*}} [4, 6, 8, 8] [1, 1, 2, 2]
// CHECK-NOT: tensor.insert_slice %{{.*}} [4, 6, 8, 8] [1, 1, 2, 2]
// CHECK: tensor.insert_slice %{{.*}} [4, 6, 19, 19] [1, 1, 1, 1]
// CHECK: scf.yield
// CHECK-NEXT: } {gradir.independent_iterations}
func.func @conv2d_transpose_blocked(%x: tensor<8x16x8x8xf32>, %w: tensor<16x6x5x5xf32>) -> tensor<8x6x19x19xf32> {
  %0 = "rlx.conv2d_transpose"(%x, %w) {strides = array<i64: 2, 2>} : (tensor<8x16x8x8xf32>, tensor<16x6x5x5xf32>) -> tensor<8x6x19x19xf32>
  return %0 : tensor<8x6x19x19xf32>
}

// -----

// Stride 1: conv2d of the input padded by the kernel's reach less the
// padding (3 - 1 - 1 = 1 here) with the kernel flipped and its input and
// output channels swapped: an im2col GEMM, no col2im (16 output channels or
// more, an output no larger than the input by a quarter).  Otherwise, as a
// 3x3 input growing to 5x5 with no padding (the padded convolution would
// multiply mostly zeros), col2im.
// CHECK-DAG: #[[$FLIP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
// CHECK-LABEL: func.func @conv2d_transpose_flipped(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x5x5xf32>, %[[W:.*]]: tensor<4x16x3x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$FLIP]]], {{.*}} ins(%[[W]] : tensor<4x16x3x3xf32>) outs(%{{.*}} : tensor<16x4x3x3xf32>)
// CHECK: tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x36xf32>, tensor<36x64xf32>)
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @conv2d_transpose_grows(
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<144x4xf32>, tensor<4x32xf32>)
// CHECK: scf.for
func.func @conv2d_transpose_flipped(%x: tensor<2x4x5x5xf32>, %w: tensor<4x16x3x3xf32>) -> tensor<2x16x5x5xf32> {
  %0 = "rlx.conv2d_transpose"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x5x5xf32>, tensor<4x16x3x3xf32>) -> tensor<2x16x5x5xf32>
  return %0 : tensor<2x16x5x5xf32>
}
func.func @conv2d_transpose_grows(%x: tensor<2x4x3x3xf32>, %w: tensor<4x16x3x3xf32>) -> tensor<2x16x5x5xf32> {
  %0 = "rlx.conv2d_transpose"(%x, %w) : (tensor<2x4x3x3xf32>, tensor<4x16x3x3xf32>) -> tensor<2x16x5x5xf32>
  return %0 : tensor<2x16x5x5xf32>
}

// -----

// max_pool2d: windows of up to 16 elements are that many strided views of the
// (padded) input, combined by one all-parallel generic.

// With a column stride over 1 the padded input's columns are first copied
// de-interleaved (column j*2 + r to [.., r, j]), and the views are unit-stride
// rows of that copy (offset kx = 2q + r: [.., r, q ::1], 5-D views read
// through a map with the unit axis 0).
// CHECK-DAG: #[[$DEINT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4 * 2 + d3)>
// CHECK-DAG: #[[$VIEW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0, d3)>
// CHECK-LABEL: func.func @max_pool2d(
// CHECK: %[[P:.*]] = tensor.pad
// CHECK: tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
// CHECK: %[[D:.*]] = linalg.generic {indexing_maps = [#[[$DEINT]], #{{.*}}], {{.*}} ins(%[[P]] : tensor<1x2x8x8xf32>) outs(%{{.*}} : tensor<1x2x8x2x4xf32>)
// CHECK: %[[V0:.*]] = tensor.extract_slice %[[D]][0, 0, 0, 0, 0] [1, 2, 3, 1, 3] [1, 1, 2, 1, 1] : tensor<1x2x8x2x4xf32> to tensor<1x2x3x1x3xf32>
// CHECK: tensor.extract_slice %[[D]][0, 0, 0, 1, 0] [1, 2, 3, 1, 3] [1, 1, 2, 1, 1]
// CHECK: tensor.extract_slice %[[D]][0, 0, 0, 0, 1] [1, 2, 3, 1, 3] [1, 1, 2, 1, 1]
// CHECK: %[[V8:.*]] = tensor.extract_slice %[[D]][0, 0, 2, 0, 1] [1, 2, 3, 1, 3] [1, 1, 2, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[$VIEW]], {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V0]], {{.*}}, %[[V8]] : {{.*}}) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK-COUNT-8: arith.maximumf
// CHECK-NOT: linalg.pooling_nchw_max
func.func @max_pool2d(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Larger windows keep linalg's pooling op.

// CHECK-LABEL: func.func @max_pool2d_large(
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x1x6x6xf32>, tensor<5x5xf32>) outs(%{{.*}} : tensor<1x1x2x2xf32>)
func.func @max_pool2d_large(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 5, 5>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// avg_pool2d: the window sum divided by the window counts (a constant) in
// the same generic.

// CHECK-DAG: #[[$HW:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @avg_pool2d(
// CHECK: %[[CNT:.*]] = arith.constant dense<4.000000e+00> : tensor<3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$HW]], {{.*}} ins(%[[CNT]], {{.*}} outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK-COUNT-3: arith.addf
// CHECK: arith.divf
func.func @avg_pool2d(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "rlx.avg_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// max_pool2d_backward, windows tiling the input exactly: per kernel offset,
// one generic over the windows finds the first maximum (NaN counting as
// the maximum: greater-or-unordered while the maximum so far is ordered)
// and writes the gradient (or 0) into that offset's strided view; no zero
// fill, no scatter.

// CHECK-LABEL: func.func @max_pool2d_backward(
// CHECK-SAME: %[[G:.*]]: tensor<1x2x3x3xf32>, %[[X:.*]]: tensor<1x2x6x6xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x6x6xf32>
// CHECK: %[[P0:.*]] = linalg.generic {{.*}} ins(%[[G]], {{.*}}) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK: arith.cmpf ugt, %{{.*}}, %[[M0:.*]] : f32
// CHECK: %[[U:.*]] = arith.cmpf ugt, %{{.*}}, %[[M:.*]] : f32
// CHECK-NEXT: %[[O:.*]] = arith.cmpf ord, %[[M]], %[[M]] : f32
// CHECK-NEXT: arith.andi %[[U]], %[[O]] : i1
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[P0]] into %[[E]][0, 0, 0, 0] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK: %[[P1:.*]] = linalg.generic
// CHECK: tensor.insert_slice %[[P1]] into %[[R0]][0, 0, 0, 1] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 0] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK: %[[R:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK: return %[[R]]
func.func @max_pool2d_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %0 = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// Overlapping windows (at most UNROLLED_WINDOW elements): one all-parallel
// generic over the windows reads their nine views and writes each window's
// first arg-max; the gradient is then gathered: with stride 1 one phase, every
// input element reached by all nine offsets, each a shifted unit-stride view
// of the zero-padded gradient and arg-max, summed in offset order (the
// phase is the whole gradient: no insert_slice left).

// CHECK-LABEL: func.func @max_pool2d_backward_overlap(
// CHECK-SAME: %[[G:.*]]: tensor<1x1x3x3xf32>, %[[X:.*]]: tensor<1x1x5x5xf32>)
// CHECK-COUNT-9: tensor.extract_slice %[[X]]
// CHECK: %[[ARG:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins({{.*}} : tensor<1x1x3x3xf32>{{.*}}) outs(%{{.*}} : tensor<1x1x3x3xi32>)
// CHECK: %[[GP:.*]] = tensor.pad %[[G]] low[0, 0, 2, 2] high[0, 0, 2, 2]
// CHECK: %[[AP:.*]] = tensor.pad %[[ARG]] low[0, 0, 2, 2] high[0, 0, 2, 2]
// CHECK: tensor.extract_slice %[[GP]][0, 0, 2, 2] [1, 1, 5, 5] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[AP]][0, 0, 2, 2] [1, 1, 5, 5] [1, 1, 1, 1]
// CHECK: %[[U:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins({{.*}}) outs(%{{.*}} : tensor<1x1x5x5xf32>)
// CHECK-COUNT-9: arith.cmpi eq
// CHECK-NOT: linalg.fill
// CHECK-NOT: scf.for
// CHECK: return %[[U]]
func.func @max_pool2d_backward_overlap(%g: tensor<1x1x3x3xf32>, %x: tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32> {
  %0 = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// Stride 2, padding 1 (ResNet's 3x3 pool): four phases of the input; even
// rows are reached by ky = 1 alone, odd rows by ky = 0 and 2 (windows one
// apart), and likewise the columns: 1, 2, 2 and 4 offsets per phase, each
// phase written once into its strided view of the gradient.

// CHECK-LABEL: func.func @max_pool2d_backward_phases(
// CHECK-SAME: %[[G:.*]]: tensor<1x2x3x3xf32>, %[[X:.*]]: tensor<1x2x5x5xf32>)
// CHECK: %[[ARG:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x3x3xi32>)
// CHECK: %[[P0:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[ARG]] : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK: arith.cmpi eq, %{{.*}}, %c4_i32 : i32
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[P0]] into %{{.*}}[0, 0, 0, 0] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK: %[[P1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x3x2xf32>)
// CHECK: arith.cmpi eq, %{{.*}}, %c3_i32 : i32
// CHECK: arith.cmpi eq, %{{.*}}, %c5_i32 : i32
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[P1]] into %[[R0]][0, 0, 0, 1] [1, 2, 3, 2] [1, 1, 2, 2]
// CHECK: %[[P2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x2x3xf32>)
// CHECK: %[[R2:.*]] = tensor.insert_slice %[[P2]] into %[[R1]][0, 0, 1, 0] [1, 2, 2, 3] [1, 1, 2, 2]
// CHECK: %[[P3:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK-COUNT-4: arith.cmpi eq
// CHECK: %[[R3:.*]] = tensor.insert_slice %[[P3]] into %[[R2]][0, 0, 1, 1] [1, 2, 2, 2] [1, 1, 2, 2]
// CHECK: return %[[R3]]
func.func @max_pool2d_backward_phases(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %0 = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}

// -----

// Larger windows (over UNROLLED_WINDOW elements): one reduction generic finds
// each window's first maximum, then, per kernel offset, an in-place strided
// update of the padded gradient (a zero fill first).

// CHECK-LABEL: func.func @max_pool2d_backward_large(
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[ARG:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<1x1x7x7xf32>
// CHECK: scf.for %[[KY:[a-z0-9_]+]] = %{{.*}} to %[[C5]] step %{{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK-NEXT: scf.for %[[KX:[a-z0-9_]+]] = %{{.*}} to %[[C5]] step %{{.*}} iter_args(%[[G:.*]] = %{{.*}})
// CHECK-NEXT: %[[V:.*]] = tensor.extract_slice %[[G]][0, 0, %[[KY]], %[[KX]]] [1, 1, 3, 3] [1, 1, 1, 1]
// CHECK-NEXT: %[[P0:.*]] = arith.muli %[[KY]], %[[C5]] : index
// CHECK-NEXT: %[[POS:.*]] = arith.addi %[[P0]], %[[KX]] : index
// CHECK-NEXT: %[[U:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[ARG]]#1 : tensor<1x1x3x3xf32>, tensor<1x1x3x3xindex>) outs(%[[V]] : tensor<1x1x3x3xf32>)
// CHECK: arith.cmpi eq, %{{.*}}, %[[POS]] : index
// CHECK: tensor.insert_slice %[[U]] into %[[G]][0, 0, %[[KY]], %[[KX]]] [1, 1, 3, 3] [1, 1, 1, 1]
// CHECK-NOT: tensor.insert_slice
func.func @max_pool2d_backward_large(%g: tensor<1x1x3x3xf32>, %x: tensor<1x1x7x7xf32>) -> tensor<1x1x7x7xf32> {
  %0 = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 5, 5>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x7x7xf32>) -> tensor<1x1x7x7xf32>
  return %0 : tensor<1x1x7x7xf32>
}

// -----

// avg_pool2d_backward, exact windows: each offset's view gets grad / (kh*kw).

// CHECK-LABEL: func.func @avg_pool2d_backward(
// CHECK-SAME: %[[G:.*]]: tensor<1x2x3x3xf32>, %[[X:.*]]: tensor<1x2x6x6xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[C:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: linalg.generic {{.*}} ins(%[[G]] : tensor<1x2x3x3xf32>) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK: arith.divf %{{.*}}, %[[C]]
// CHECK-COUNT-4: tensor.insert_slice %{{.*}} [1, 2, 3, 3] [1, 1, 2, 2]
func.func @avg_pool2d_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %0 = "rlx.avg_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// softmax: max, exp(x - max), sum, divide.
// CHECK-LABEL: func.func @softmax(
// CHECK: %[[M:.*]] = linalg.reduce {{.*}} dimensions = [1]
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[M]] : tensor<3x4xf32>, tensor<3xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[S:.*]] = linalg.reduce ins(%[[E]] : tensor<3x4xf32>) {{.*}} dimensions = [1]
// CHECK: linalg.generic {{.*}} ins(%[[E]], %[[S]] : tensor<3x4xf32>, tensor<3xf32>)
// CHECK: arith.divf
func.func @softmax(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "rlx.softmax"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// log_softmax: (x - max) - log(sum(exp(x - max))).
// CHECK-LABEL: func.func @log_softmax(
// CHECK: %[[M:.*]] = linalg.reduce {{.*}} dimensions = [0]
// CHECK: %[[S:.*]] = linalg.reduce {{.*}} dimensions = [0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[M]], %[[S]] : tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[D:.*]] = arith.subf
// CHECK: %[[L:.*]] = math.log
// CHECK: arith.subf %[[D]], %[[L]]
func.func @log_softmax(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "rlx.log_softmax"(%x) {axis = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_with_logits(
// CHECK: %[[N:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<f32>)
// CHECK: %[[NEG:.*]] = arith.negf
// CHECK: arith.divf %[[NEG]], %[[N]]
func.func @cross_entropy_with_logits(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>) -> tensor<f32> {
  %0 = "rlx.cross_entropy_with_logits"(%x, %y) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// nll_loss "mean": one reduction over the targets gathering the picked
// predictions and weights; the sum of losses over the sum of weights.
// CHECK-LABEL: func.func @nll_loss(
// CHECK-SAME: %[[P:.*]]: tensor<3x4xf32>, %[[T:.*]]: tensor<3xi64>, %[[W:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[T]] : tensor<3xi64>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// CHECK: %[[VALID:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i64
// CHECK: tensor.extract %[[P]]
// CHECK: tensor.extract %[[W]]
// CHECK: linalg.generic {{.*}} ins(%[[R]]#0, %[[R]]#1 : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @nll_loss(%p: tensor<3x4xf32>, %t: tensor<3xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = "rlx.nll_loss"(%p, %t, %w) {reduction = "mean"} : (tensor<3x4xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// layer_norm over unsorted axes: gamma/beta dim i is the data's axis axes[i].
// CHECK-DAG: #[[$GAMMA:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x3xf32>)
// CHECK: linalg.reduce {{.*}} dimensions = [1, 2]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$GAMMA]], #[[$GAMMA]], #{{.*}}], {{.*}} ins(%[[X]], %{{.*}}, %{{.*}}, %[[G]], %[[B]] :
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3x4xf32> {
  %0 = "rlx.layer_norm"(%x, %g, %b) {axes = array<i64: 2, 1>, epsilon = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm(
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: %[[MS:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MS]], %{{.*}} : tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>)
// CHECK: math.sqrt
func.func @rms_norm(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "rlx.rms_norm"(%x, %w) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// An op whose results have no element is not computed: tensor.empty (linalg's
// tiling of the zero-size dimension aborted).
// CHECK-LABEL: func.func @conv2d_no_out_channels
// CHECK-NOT: linalg.
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x0x2x2xf32>
// CHECK-NEXT: return %[[E]]
func.func @conv2d_no_out_channels(%a: tensor<1x1x4x4xf32>, %w: tensor<0x1x3x3xf32>) -> tensor<1x0x2x2xf32> {
  %r = "rlx.conv2d"(%a, %w) : (tensor<1x1x4x4xf32>, tensor<0x1x3x3xf32>) -> tensor<1x0x2x2xf32>
  return %r : tensor<1x0x2x2xf32>
}

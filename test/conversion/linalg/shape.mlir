// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// Shape ops: views (collapse/expand_shape, extract_slice) where possible,
// linalg.transpose / linalg.broadcast, insert_slice for concat, generics for
// gathers and negative strides.

// CHECK-LABEL: func.func @permute_dims(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x4x2xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<3x4x2xf32>) permutation = [1, 2, 0]
// CHECK: return %[[T]]
func.func @permute_dims(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

// Absent axes reverse the dimensions.
// CHECK-LABEL: func.func @permute_dims_default(
// CHECK: linalg.transpose {{.*}} permutation = [2, 1, 0]
func.func @permute_dims_default(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = "rlx.permute_dims"(%x) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

// Higher ranks that keep the innermost axis: a copy generic (fused into its
// generic producers and consumers by the CPU pipeline's elementwise fusion).
// CHECK-DAG: #[[$PERM:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d0, d3)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @permute_dims_rows(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4x5xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x3x5xf32>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[$PERM]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x3x4x5xf32>) outs(%[[E]] : tensor<4x2x3x5xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NOT: linalg.transpose
// CHECK: return %[[T]]
func.func @permute_dims_rows(%x: tensor<2x3x4x5xf32>) -> tensor<4x2x3x5xf32> {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 2, 0, 1, 3>} : (tensor<2x3x4x5xf32>) -> tensor<4x2x3x5xf32>
  return %0 : tensor<4x2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK: return %[[E]]
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "rlx.reshape"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// One reassociation when the dims group: a single collapse.
// CHECK-LABEL: func.func @reshape_group(
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-NOT: tensor.expand_shape
func.func @reshape_group(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = "rlx.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// Neither side groups into the other, but both collapse to a common shape:
// through it, not through a 1-D view (loads through a 1-D view fold into
// div/mod index arithmetic per element after bufferization).
// CHECK-LABEL: func.func @reshape_common(
// CHECK-SAME: %[[X:.*]]: tensor<64x1x28x28xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2], [3]] : tensor<64x1x28x28xf32> into tensor<64x28x28xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1], [2], [3]] output_shape [1, 64, 28, 28] : tensor<64x28x28xf32> into tensor<1x64x28x28xf32>
// CHECK: return %[[E]]
func.func @reshape_common(%x: tensor<64x1x28x28xf32>) -> tensor<1x64x28x28xf32> {
  %0 = "rlx.reshape"(%x) : (tensor<64x1x28x28xf32>) -> tensor<1x64x28x28xf32>
  return %0 : tensor<1x64x28x28xf32>
}

// -----

// Stretched unit dims are collapsed away, then linalg.broadcast adds dims.
// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME: %[[X:.*]]: tensor<3x1xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[C]] : tensor<3xf32>) outs(%[[E]] : tensor<2x3x4xf32>) dimensions = [0, 2]
// CHECK: return %[[B]]
func.func @broadcast_to(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = "rlx.broadcast_to"(%x) : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @expand_dims(
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3]] output_shape [1, 2, 3, 1] : tensor<2x3xf32> into tensor<1x2x3x1xf32>
func.func @expand_dims(%x: tensor<2x3xf32>) -> tensor<1x2x3x1xf32> {
  %0 = "rlx.expand_dims"(%x) {axis = array<i64: 0, -1>} : (tensor<2x3xf32>) -> tensor<1x2x3x1xf32>
  return %0 : tensor<1x2x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze(
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2, 3]] : tensor<1x3x1x2xf32> into tensor<3x2xf32>
func.func @squeeze(%x: tensor<1x3x1x2xf32>) -> tensor<3x2xf32> {
  %0 = "rlx.squeeze"(%x) : (tensor<1x3x1x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @flatten(
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
func.func @flatten(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %0 = "rlx.flatten"(%x) : (tensor<2x3x4xf32>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}

// -----

// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x1xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 1] [1, 1]
// CHECK: return %[[I1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %0 = "rlx.concat"(%a, %b) {axis = array<i64: 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// sections = 3 of 7 rows: Relax's ceil pieces 3, 3, 1.
// CHECK-LABEL: func.func @split(
// CHECK-SAME: %[[X:.*]]: tensor<7x2xf32>)
// CHECK: %[[P0:.*]] = tensor.extract_slice %[[X]][0, 0] [3, 2] [1, 1]
// CHECK: %[[P1:.*]] = tensor.extract_slice %[[X]][3, 0] [3, 2] [1, 1]
// CHECK: %[[P2:.*]] = tensor.extract_slice %[[X]][6, 0] [1, 2] [1, 1]
// CHECK: return %[[P0]], %[[P1]], %[[P2]]
func.func @split(%x: tensor<7x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1x2xf32>) {
  %0:3 = "rlx.split"(%x) {sections = 3 : i64, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<7x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<1x2xf32>
}

// -----

// CHECK-LABEL: func.func @strided_slice(
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [2, 5] [2, 1] : tensor<6x5xf32> to tensor<2x5xf32>
func.func @strided_slice(%x: tensor<6x5xf32>) -> tensor<2x5xf32> {
  %0 = "rlx.strided_slice"(%x) {axes = array<i64: 0>, begin = array<i64: 1>, end = array<i64: 5>, strides = array<i64: 2>} : (tensor<6x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// A negative stride walks backwards in the input's indexing map.
// CHECK: #[[$BACK:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 * -2 + 4)>
// CHECK-LABEL: func.func @strided_slice_negative(
// CHECK: linalg.generic {indexing_maps = [#[[$BACK]], #{{.*}}]
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
func.func @strided_slice_negative(%x: tensor<6x5xf32>) -> tensor<6x2xf32> {
  %0 = "rlx.strided_slice"(%x) {axes = array<i64: 1>, begin = array<i64: 4>, end = array<i64: 0>, strides = array<i64: -2>} : (tensor<6x5xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

// take gathers with tensor.extract; negative indices count from the end,
// then the index is clamped to the axis.
// CHECK-DAG: #[[$IDX:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @take(
// CHECK-SAME: %[[X:.*]]: tensor<6x5xf32>, %[[I:.*]]: tensor<3xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[$IDX]], #{{.*}}], {{.*}} ins(%[[I]] : tensor<3xi64>) outs(%{{.*}} : tensor<6x3xf32>)
// CHECK: %[[K:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: arith.cmpi slt, %[[K]]
// CHECK: arith.maxsi
// CHECK: %[[C:.*]] = arith.minsi
// CHECK: %[[R:.*]] = linalg.index 0 : index
// CHECK: tensor.extract %[[X]][%[[R]], %[[C]]] : tensor<6x5xf32>
func.func @take(%x: tensor<6x5xf32>, %i: tensor<3xi64>) -> tensor<6x3xf32> {
  %0 = "rlx.take"(%x, %i) {axis = array<i64: 1>} : (tensor<6x5xf32>, tensor<3xi64>) -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

// CHECK-LABEL: func.func @triu(
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[D:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[K:.*]] = arith.cmpi sge, %[[D]], %{{.*}} : index
// CHECK: arith.select %[[K]], %{{.*}}, %{{.*}} : f32
func.func @triu(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "rlx.triu"(%x) {k = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-to-linalg=sum-block=256 | FileCheck %s --check-prefix=BLOCK

// Reductions: linalg.reduce from a linalg.fill of the identity; keepdims is
// an expand_shape of the reduced tensor.

// CHECK-LABEL: func.func @sum(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<3xf32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<3x4xf32>) outs(%[[F]] : tensor<3xf32>) dimensions = [1]
// CHECK-NEXT: (%[[IN:.*]]: f32, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[R]]
func.func @sum(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = "rlx.sum"(%x) {axis = array<i64: -1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @prod(
// CHECK: %[[O:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: linalg.fill ins(%[[O]] : f64)
// CHECK: linalg.reduce {{.*}} dimensions = [0, 1]
// CHECK: arith.mulf
func.func @prod(%x: tensor<3x4xf64>) -> tensor<f64> {
  %0 = "rlx.prod"(%x) : (tensor<3x4xf64>) -> tensor<f64>
  return %0 : tensor<f64>
}

// -----

// CHECK-LABEL: func.func @max(
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[R:.*]] = linalg.reduce {{.*}} dimensions = [0]
// CHECK: arith.maximumf
// CHECK: %[[K:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK: return %[[K]]
func.func @max(%x: tensor<3x4xf32>) -> tensor<1x4xf32> {
  %0 = "rlx.max"(%x) {axis = array<i64: 0>, keepdims = true} : (tensor<3x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// CHECK-LABEL: func.func @min(
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[INF]] : f32)
// CHECK: linalg.reduce
// CHECK: arith.minimumf
func.func @min(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = "rlx.min"(%x) {axis = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// mean = sum / count (a true division, as numpy).
// CHECK-LABEL: func.func @mean(
// CHECK: %[[N:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[S:.*]] = linalg.reduce
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<3xf32>)
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
// CHECK: tensor.expand_shape %[[M]] {{\[}}[0, 1]] output_shape [3, 1]
func.func @mean(%x: tensor<3x4xf32>) -> tensor<3x1xf32> {
  %0 = "rlx.mean"(%x) {axis = array<i64: 1>, keepdims = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

// variance: the population variance, sum((x - mean)^2) / n in one reduction
// generic that reads the mean through a projected map.
// CHECK-DAG: #[[$ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @variance(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>)
// CHECK: %[[S:.*]] = linalg.reduce
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[M]] : tensor<3x4xf32>, tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[MV:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[MV]]
// CHECK-NEXT: %[[D2:.*]] = arith.mulf %[[D]], %[[D]]
// CHECK-NEXT: arith.addf %[[D2]], %[[ACC]]
// CHECK: arith.divf
// BLOCK-LABEL: func.func @variance_blocked(
// BLOCK-SAME: %[[X:.*]]: tensor<8x4x8x8xf32>)
// BLOCK: %[[AB:.*]]:2 = linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<8x4x8x8xf32>, tensor<4x8x8xf32>) {{.*}} attrs =  {gradir.moments = array<i64: 0, 2, 3>}
// BLOCK-NOT: tensor<8x4x8x8xf32>
// BLOCK: return
func.func @variance(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = "rlx.variance"(%x) {axis = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// (sum-block=256: a variance over more than 256 elements whose sum goes
// batch first reads x in one sweep: batch-norm-stats.mlir)
func.func @variance_blocked(%x: tensor<8x4x8x8xf32>) -> tensor<4xf32> {
  %0 = "rlx.variance"(%x) {axis = array<i64: 0, 2, 3>} : (tensor<8x4x8x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// cumsum: an scf.for over the scanned axis, adding the previous column in
// place.
// CHECK-LABEL: func.func @cumsum(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>)
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 0] [3, 1] [1, 1]
// CHECK: %[[INIT:.*]] = tensor.insert_slice %[[FIRST]] into %{{.*}}[0, 0] [3, 1] [1, 1]
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<3x4xf32>)
// CHECK: %[[PREV:.*]] = tensor.extract_slice %[[ACC]][0, %{{.*}}] [3, 1] [1, 1]
// CHECK: %[[CUR:.*]] = tensor.extract_slice %[[X]][0, %[[K]]] [3, 1] [1, 1]
// CHECK: %[[DEST:.*]] = tensor.extract_slice %[[ACC]][0, %[[K]]] [3, 1] [1, 1]
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[PREV]], %[[CUR]] : {{.*}}) outs(%[[DEST]] : tensor<3x1xf32>)
// CHECK: arith.addf
// CHECK: %[[UPD:.*]] = tensor.insert_slice %[[S]] into %[[ACC]][0, %[[K]]] [3, 1] [1, 1]
// CHECK: scf.yield %[[UPD]]
// CHECK: return %[[R]]
func.func @cumsum(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "rlx.cumsum"(%x) {axis = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// collapse_sum_to sums the leading dims and the stretched unit dims.
// CHECK-LABEL: func.func @collapse_sum_to(
// CHECK: %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3xf32>) dimensions = [0, 2]
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1]] output_shape [3, 1]
func.func @collapse_sum_to(%x: tensor<2x3x4xf32>) -> tensor<3x1xf32> {
  %0 = "rlx.collapse_sum_to"(%x) : (tensor<2x3x4xf32>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

// sum-block=256: a sum of more than 256 elements goes in stages from the
// innermost axis out; reduced axes whose elements number at most 256
// together are one stage, an axis longer than 256 is blocked.  When the
// innermost axis is summed but too short for lanes (under 64), the reduced
// axes before the first kept one go first (a conv bias gradient: the
// batch, its sums along the contiguous rest vectorized, then the 8x8 rows
// and columns; issue 43).

// CHECK-LABEL: func.func @sum_stages(
// CHECK: linalg.reduce ins(%{{.*}} : tensor<64x16x8x8xf32>) outs(%{{.*}} : tensor<16xf32>) dimensions = [0, 2, 3]
// BLOCK-LABEL: func.func @sum_stages(
// BLOCK: %[[N:.*]] = linalg.reduce ins(%{{.*}} : tensor<64x16x8x8xf32>) outs(%{{.*}} : tensor<16x8x8xf32>) dimensions = [0]
// BLOCK: %[[HW:.*]] = linalg.reduce ins(%[[N]] : tensor<16x8x8xf32>) outs(%{{.*}} : tensor<16xf32>) dimensions = [1, 2]
// BLOCK-NOT: linalg.reduce
// BLOCK: return %[[HW]]
func.func @sum_stages(%x: tensor<64x16x8x8xf32>) -> tensor<16xf32> {
  %0 = "rlx.sum"(%x) {axis = array<i64: 0, 2, 3>} : (tensor<64x16x8x8xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @sum_stages_blocked_axis(
// BLOCK-LABEL: func.func @sum_stages_blocked_axis(
// BLOCK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [3, 256, 4, 2]
// BLOCK: linalg.reduce ins(%{{.*}} : tensor<3x1x256x4x2xf32>) outs(%{{.*}} : tensor<3x1x4x2xf32>) dimensions = [2]
// BLOCK: tensor.extract_slice %{{.*}}[0, 256, 0, 0] [3, 44, 4, 2]
// BLOCK: %[[P:.*]] = linalg.generic
// BLOCK: arith.addf
// BLOCK: %[[N:.*]] = linalg.reduce ins(%[[P]] : tensor<3x4x2xf32>) outs(%{{.*}} : tensor<4x2xf32>) dimensions = [0]
// BLOCK: %[[R:.*]] = linalg.reduce ins(%[[N]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1]
// BLOCK: return %[[R]]
func.func @sum_stages_blocked_axis(%x: tensor<3x300x4x2xf32>) -> tensor<4xf32> {
  %0 = "rlx.sum"(%x) {axis = array<i64: 0, 1, 3>} : (tensor<3x300x4x2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// sum-block=256: a summed innermost axis of 64 elements or more is summed
// as 16 interleaved partial sums (the row viewed as 4 x 16: a reduction
// over the 4, its loop over the 16 lanes innermost), then the lanes.  An
// axis over 256 elements is blocked first; each block's 256 go the same way.
// CHECK-LABEL: func.func @sum_lanes(
// CHECK: linalg.reduce ins(%{{.*}} : tensor<8x64xf32>) outs(%{{.*}} : tensor<8xf32>) dimensions = [1]
// BLOCK-LABEL: func.func @sum_lanes(
// BLOCK: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [8, 4, 16] : tensor<8x64xf32> into tensor<8x4x16xf32>
// BLOCK: %[[L:.*]] = linalg.reduce ins(%[[V]] : tensor<8x4x16xf32>) outs(%{{.*}} : tensor<8x16xf32>) dimensions = [1]
// BLOCK: %[[S:.*]] = linalg.reduce ins(%[[L]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8xf32>) dimensions = [1]
// BLOCK: return %[[S]]
// BLOCK-LABEL: func.func @sum_lanes_short(
// BLOCK: linalg.reduce ins(%{{.*}} : tensor<8x48xf32>) outs(%{{.*}} : tensor<8xf32>) dimensions = [1]
// BLOCK-NOT: linalg.reduce
// BLOCK-LABEL: func.func @sum_lanes_blocked(
// BLOCK: tensor.expand_shape %{{.*}} output_shape [2, 4, 256] : tensor<2x1024xf32> into tensor<2x4x256xf32>
// BLOCK: tensor.expand_shape %{{.*}} output_shape [2, 4, 16, 16] : tensor<2x4x256xf32> into tensor<2x4x16x16xf32>
// BLOCK: linalg.reduce ins(%{{.*}} : tensor<2x4x16x16xf32>) outs(%{{.*}} : tensor<2x4x16xf32>) dimensions = [2]
// BLOCK: linalg.reduce ins(%{{.*}} : tensor<2x4x16xf32>) outs(%{{.*}} : tensor<2x4xf32>) dimensions = [2]
// BLOCK: linalg.reduce ins(%{{.*}} : tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
func.func @sum_lanes(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  %0 = "rlx.sum"(%x) {axis = array<i64: 1>} : (tensor<8x64xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @sum_lanes_short(%x: tensor<8x48xf32>) -> tensor<8xf32> {
  %0 = "rlx.sum"(%x) {axis = array<i64: 1>} : (tensor<8x48xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @sum_lanes_blocked(%x: tensor<2x1024xf32>) -> tensor<2xf32> {
  %0 = "rlx.sum"(%x) {axis = array<i64: 1>} : (tensor<2x1024xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A reduction over an empty axis is a constant (numpy's answer); no kernel.
// CHECK-LABEL: func.func @reduce_empty_axis
// CHECK-DAG: arith.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-DAG: arith.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK-DAG: arith.constant dense<0x7FC00000> : tensor<3xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @reduce_empty_axis(%a: tensor<3x0xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %s = "rlx.sum"(%a) {axis = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  %p = "rlx.prod"(%a) {axis = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  %m = "rlx.mean"(%a) {axis = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  return %s, %p, %m : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// sum-block=256 (the CPU pipeline): max/min over an innermost axis of 128
// elements or more run as 32 interleaved partial extrema over its first
// multiple of 32, then the lanes, then the tail (any order gives the same
// value; NaN propagates either way).
// CHECK-LABEL: func.func @max_lanes(
// CHECK: linalg.reduce ins(%{{.*}} : tensor<3x200xf64>) outs(%{{.*}} : tensor<3xf64>) dimensions = [1]
// BLOCK-LABEL: func.func @max_lanes(
// BLOCK: %[[H:.*]] = tensor.extract_slice %{{.*}}[0, 0] [3, 192] [1, 1] : tensor<3x200xf64> to tensor<3x192xf64>
// BLOCK: %[[V:.*]] = tensor.expand_shape %[[H]] {{\[\[}}0], [1, 2]] output_shape [3, 6, 32] : tensor<3x192xf64> into tensor<3x6x32xf64>
// BLOCK: %[[L:.*]] = linalg.reduce ins(%[[V]] : tensor<3x6x32xf64>) outs(%{{.*}} : tensor<3x32xf64>) dimensions = [1]
// BLOCK: arith.maximumf
// BLOCK: %[[M:.*]] = linalg.reduce ins(%[[L]] : tensor<3x32xf64>) outs(%{{.*}} : tensor<3xf64>) dimensions = [1]
// BLOCK: %[[T:.*]] = tensor.extract_slice %{{.*}}[0, 192] [3, 8] [1, 1] : tensor<3x200xf64> to tensor<3x8xf64>
// BLOCK: linalg.reduce ins(%[[T]] : tensor<3x8xf64>) outs(%{{.*}} : tensor<3xf64>) dimensions = [1]
// BLOCK: arith.maximumf
// BLOCK-LABEL: func.func @min_lanes_short(
// BLOCK: linalg.reduce ins(%{{.*}} : tensor<100xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0]
// BLOCK-NOT: linalg.reduce
func.func @max_lanes(%x: tensor<3x200xf64>) -> tensor<3xf64> {
  %0 = "rlx.max"(%x) {axis = array<i64: 1>} : (tensor<3x200xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func @min_lanes_short(%x: tensor<100xf32>) -> tensor<f32> {
  %0 = "rlx.min"(%x) : (tensor<100xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

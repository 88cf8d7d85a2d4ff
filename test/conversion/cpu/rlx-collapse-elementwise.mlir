// RUN: gradir-opt %s --split-input-file --rlx-collapse-elementwise | FileCheck %s
// Elementwise generics on rows shorter than 16 elements (8x8 NCHW images)
// have their trailing loops collapsed where every operand reads them as one
// contiguous span or not at all; per-channel operands (1xCx1x1 read through
// (0, d1, 0, 0)) lose their unit dims.

// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$CH:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @per_channel(
// CHECK-SAME:      %[[X:.*]]: tensor<32x64x8x8xf32>, %[[C:.*]]: tensor<1x64x1x1xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<32x64x8x8xf32>
// CHECK:         %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0], [1], [2, 3]] : tensor<32x64x8x8xf32> into tensor<32x64x64xf32>
// CHECK:         %[[CC:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1, 2, 3]] : tensor<1x64x1x1xf32> into tensor<64xf32>
// CHECK:         %[[EC:.*]] = tensor.collapse_shape %[[E]] {{\[\[}}0], [1], [2, 3]] : tensor<32x64x8x8xf32> into tensor<32x64x64xf32>
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$CH]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XC]], %[[CC]] : tensor<32x64x64xf32>, tensor<64xf32>) outs(%[[EC]] : tensor<32x64x64xf32>) attrs =  {keep = 1 : i64} {
// CHECK:           %[[D:.*]] = arith.divf
// CHECK:           linalg.yield %[[D]] : f32
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[G]] {{\[\[}}0], [1], [2, 3]] output_shape [32, 64, 8, 8] : tensor<32x64x64xf32> into tensor<32x64x8x8xf32>
// CHECK:         return %[[R]]
func.func @per_channel(%x: tensor<32x64x8x8xf32>, %c: tensor<1x64x1x1xf32>) -> tensor<32x64x8x8xf32> {
  %e = tensor.empty() : tensor<32x64x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %c : tensor<32x64x8x8xf32>, tensor<1x64x1x1xf32>) outs(%e : tensor<32x64x8x8xf32>)
      attrs = {keep = 1} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<32x64x8x8xf32>
  return %r : tensor<32x64x8x8xf32>
}

// -----

// Every loop collapses when each operand spans them all (a 0-d operand
// reads none).
// CHECK-DAG:   #[[$ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG:   #[[$S:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @scalar(
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<4x4x4xf64> into tensor<64xf64>
// CHECK:         linalg.generic {indexing_maps = [#[[$ID1]], #[[$S]], #[[$ID1]]], iterator_types = ["parallel"]}
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [4, 4, 4] : tensor<64xf64> into tensor<4x4x4xf64>
func.func @scalar(%x: tensor<4x4x4xf64>, %s: tensor<f64>) -> tensor<4x4x4xf64> {
  %e = tensor.empty() : tensor<4x4x4xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> ()>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<4x4x4xf64>, tensor<f64>) outs(%e : tensor<4x4x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    linalg.yield %m : f64
  } -> tensor<4x4x4xf64>
  return %r : tensor<4x4x4xf64>
}

// -----

// Left alone: an operand reading one of the trailing loops only (a
// per-row operand), a transposed operand, rows of 16 and more, reductions,
// a body reading its loop indices.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return
func.func @left_alone(%x: tensor<2x8x8xf32>, %r: tensor<8xf32>, %y: tensor<4x16xf32>,
                      %z: tensor<4x4xf32>) -> (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x8xf32>) {
  %e = tensor.empty() : tensor<2x8x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d1)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %r : tensor<2x8x8xf32>, tensor<8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<2x8x8xf32>
  %ey = tensor.empty() : tensor<4x16xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x16xf32>) outs(%ey : tensor<4x16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<4x16xf32>
  %ez = tensor.empty() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<4x4xf32>) outs(%ez : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %i = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %s = arith.addf %p, %kf : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8xf32>
  return %a, %b, %c, %d, %i : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x8xf32>
}

// -----

// Several results (rlx-merge-elementwise's merged loops): every result
// collapsed alike, each expanded back.
// CHECK-DAG:   #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$CH3:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @two_results(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8x8x8xf32>, %[[C:.*]]: tensor<1x8x1x1xf32>)
// CHECK:         %[[G:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID3]], #[[$CH3]], #[[$ID3]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<4x8x64xf32>, tensor<8xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x8x64xf32>, tensor<4x8x64xf32>)
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-DAG:     %[[R0:.*]] = tensor.expand_shape %[[G]]#0 {{\[\[}}0], [1], [2, 3]] output_shape [4, 8, 8, 8] : tensor<4x8x64xf32> into tensor<4x8x8x8xf32>
// CHECK-DAG:     %[[R1:.*]] = tensor.expand_shape %[[G]]#1 {{\[\[}}0], [1], [2, 3]] output_shape [4, 8, 8, 8] : tensor<4x8x64xf32> into tensor<4x8x8x8xf32>
// CHECK:         return %[[R0]], %[[R1]]
func.func @two_results(%x: tensor<4x8x8x8xf32>, %c: tensor<1x8x1x1xf32>) -> (tensor<4x8x8x8xf32>, tensor<4x8x8x8xf32>) {
  %e0 = tensor.empty() : tensor<4x8x8x8xf32>
  %e1 = tensor.empty() : tensor<4x8x8x8xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                          affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>,
                                          affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                          affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %c : tensor<4x8x8x8xf32>, tensor<1x8x1x1xf32>) outs(%e0, %e1 : tensor<4x8x8x8xf32>, tensor<4x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o0: f32, %o1: f32):
    %d = arith.subf %a, %b : f32
    %m = arith.mulf %d, %b : f32
    linalg.yield %d, %m : f32, f32
  } -> (tensor<4x8x8x8xf32>, tensor<4x8x8x8xf32>)
  return %r#0, %r#1 : tensor<4x8x8x8xf32>, tensor<4x8x8x8xf32>
}

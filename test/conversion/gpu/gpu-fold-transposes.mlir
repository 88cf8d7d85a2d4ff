// RUN: gradir-opt %s --split-input-file --gpu-fold-transposes --canonicalize | FileCheck %s

// A transpose feeding a matmul becomes the matmul's indexing map for B; the
// transpose is gone.

// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_transposed(
// CHECK-SAME: %[[A:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<5x3xf32>, %[[C:.*]]: tensor<4x5xf32>)
// CHECK-NEXT: %[[M:.*]] = linalg.generic {indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]], {{.*}}} ins(%[[A]], %[[W]] : tensor<4x3xf32>, tensor<5x3xf32>) outs(%[[C]] : tensor<4x5xf32>)
// CHECK:      return %[[M]]
#t_in = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_transposed(%a: tensor<4x3xf32>, %w: tensor<5x3xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %t = linalg.generic {indexing_maps = [#t_in, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<5x3xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<3x5xf32>
  %m = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %t : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %m : tensor<4x5xf32>
}

// -----

// A broadcast read by a reduction: the consumer reads the source directly.

// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @broadcast_into_sum(
// CHECK-SAME: %[[V:.*]]: tensor<6xf32>, %[[INIT:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$ROW]], #[[$COL]]], {{.*}}} ins(%[[V]] : tensor<6xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK:      return %[[S]]
func.func @broadcast_into_sum(%v: tensor<6xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<4x6xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A broadcast along the reduced dimension, which no other operand of the sum
// has (collapse_sum_to(broadcast_to(x))): folding it would leave the
// reduction loop without an extent (non-invertible indexing maps), so the
// broadcast stays.

// CHECK-LABEL: func.func @broadcast_along_reduced(
// CHECK-SAME: %[[V:.*]]: tensor<3xf32>, %[[INIT:.*]]: tensor<3xf32>)
// CHECK:      %[[B:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<3xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK:      %[[S:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4x3xf32>) outs(%[[INIT]] : tensor<3xf32>)
// CHECK:      return %[[S]]
func.func @broadcast_along_reduced(%v: tensor<3xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%b : tensor<4x3xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

// Two broadcasts along the reduced dimension d1: the first folds (the second
// still reads d1), the second then has to stay.

// CHECK-DAG: #[[$B0:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @two_broadcasts_along_reduced(
// CHECK-SAME: %[[X:.*]]: tensor<2x5xf32>, %[[Y:.*]]: tensor<2x5xf32>, %[[INIT:.*]]: tensor<2x5xf32>)
// CHECK:      %[[B:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x5xf32>) outs(%{{.*}} : tensor<2x4x5xf32>)
// CHECK:      %[[S:.*]] = linalg.generic {indexing_maps = [#[[$B0]], #[[$ID]], #[[$B0]]], {{.*}}} ins(%[[X]], %[[B]] : tensor<2x5xf32>, tensor<2x4x5xf32>) outs(%[[INIT]] : tensor<2x5xf32>)
// CHECK:      return %[[S]]
#bcast = affine_map<(d0, d1, d2) -> (d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @two_broadcasts_along_reduced(%x: tensor<2x5xf32>, %y: tensor<2x5xf32>, %init: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %e = tensor.empty() : tensor<2x4x5xf32>
  %bx = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x5xf32>) outs(%e : tensor<2x4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x5xf32>
  %by = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x5xf32>) outs(%e : tensor<2x4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x5xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3, #bcast], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%bx, %by : tensor<2x4x5xf32>, tensor<2x4x5xf32>) outs(%init : tensor<2x5xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}

// -----

// Not a pure copy (the body computes): nothing to fold.

// CHECK-LABEL: func.func @not_a_copy(
// CHECK:      %[[N:.*]] = linalg.generic
// CHECK:        arith.negf
// CHECK:      linalg.generic {{.*}} ins(%[[N]] :
func.func @not_a_copy(%w: tensor<5x3xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<5x3xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<3x5xf32>
  %e2 = tensor.empty() : tensor<3x5xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<3x5xf32>) outs(%e2 : tensor<3x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<3x5xf32>
  return %u : tensor<3x5xf32>
}

// -----

// A cast (bf16 -> f32, here also transposed) feeding the multiplication of a
// contraction: the contraction reads the bf16 tensor and casts in its body
// (what lets the GEMM kernels use bf16 tensor cores); the cast is gone.

// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @cast_into_matmul(
// CHECK-SAME: %[[A:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<5x3xbf16>, %[[C:.*]]: tensor<4x5xf32>)
// CHECK-NEXT: %[[M:.*]] = linalg.generic {indexing_maps = [#[[$MK]], #[[$NK]], {{.*}}]{{.*}} ins(%[[A]], %[[W]] : tensor<4x3xf32>, tensor<5x3xbf16>) outs(%[[C]] : tensor<4x5xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT:   %[[E:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[X]], %[[E]] : f32
// CHECK:      return %[[M]]
func.func @cast_into_matmul(%a: tensor<4x3xf32>, %w: tensor<5x3xbf16>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<5x3xbf16>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %f = arith.extf %x : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<3x5xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %t : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %m : tensor<4x5xf32>
}

// -----

// A cast feeding an elementwise op stays (only contractions take casts).

// CHECK-LABEL: func.func @cast_into_add(
// CHECK: arith.extf
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @cast_into_add(%a: tensor<4xf32>, %w: tensor<4xbf16>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%w : tensor<4xbf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %f = arith.extf %x : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a, %t : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.addf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

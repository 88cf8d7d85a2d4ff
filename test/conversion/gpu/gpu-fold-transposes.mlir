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

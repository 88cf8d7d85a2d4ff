// RUN: gradir-opt %s --rlx-to-linalg=matmul-kernels=true | FileCheck %s
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=OFF

// rlx-to-linalg{matmul-kernels=true}: batched f32/f64 matmuls become 3-D
// linalg.contract ops marked gradir.kernel over (batch, M, N, K) = (d0, d1,
// d2, d3), the batch dims collapsed to one; rlx-matmul-kernels calls the
// kernel per batch element.  Each operand is read in place where it can be:
// a transpose of the last two axes, or a head split (permute_dims and
// reshapes that only split or merge dims), is a permutation of the
// operand's dims in the indexing map, on a reshape of the tensor it was
// made of; an operand whose batch dims are all 1 is one 2-D matrix for
// every batch element.  Without the option: linalg.batch_matmul.
// CHECK-DAG: #[[$AMK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$BKN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$CMN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$AKM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$BNK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$QH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
// CHECK-DAG: #[[$KH:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3)>
// CHECK-DAG: #[[$VH:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d2)>
// CHECK-DAG: #[[$A2:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[$A2T:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d1)>
// CHECK-DAG: #[[$CM:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>

// CHECK-LABEL: func.func @plain(
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x5xf32>)
// CHECK: linalg.contract indexing_maps = [#[[$AMK]], #[[$BKN]], #[[$CMN]]] {gradir.kernel} ins(%arg0, %arg1 : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%[[Z]] : tensor<2x4x5xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
// OFF-LABEL: func.func @plain(
// OFF-NOT: gradir.kernel
// OFF: linalg.batch_matmul
func.func @plain(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x4x5xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// Both operands transposes of their last two axes (f64): read in place.
// CHECK-LABEL: func.func @transposed(
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: linalg.contract indexing_maps = [#[[$AKM]], #[[$BNK]], #[[$CMN]]] {gradir.kernel} ins(%arg0, %arg1 : tensor<2x3x4xf64>, tensor<2x5x3xf64>) outs(%{{.*}} : tensor<2x4x5xf64>)
func.func @transposed(%a: tensor<2x3x4xf64>, %b: tensor<2x5x3xf64>) -> tensor<2x4x5xf64> {
  %at = "rlx.permute_dims"(%a) {axes = array<i64: 0, 2, 1>} : (tensor<2x3x4xf64>) -> tensor<2x4x3xf64>
  %bt = "rlx.permute_dims"(%b) {axes = array<i64: 0, 2, 1>} : (tensor<2x5x3xf64>) -> tensor<2x3x5xf64>
  %0 = "rlx.matmul"(%at, %bt) : (tensor<2x4x3xf64>, tensor<2x3x5xf64>) -> tensor<2x4x5xf64>
  return %0 : tensor<2x4x5xf64>
}

// Attention's head splits, as torch's multi-head attention makes them:
// (S, B, H*D) -> (S, B*H, D) -> (B*H, S, D) -> (B, H, S, D).  The batch
// (B, H) merges in the source (S, B*H, D): q @ k^T reads q and k as
// (S, B*H, D) tensors (views of the projections) through the maps
// (m, b, k) and (n, b, k), p @ v reads v as (k, b, n); no copy of a head.
// CHECK-LABEL: func.func @heads(
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: %[[Q:.*]] = scf.execute_region -> tensor<4x4x3xf32> no_inline {
// CHECK: %[[K:.*]] = scf.execute_region -> tensor<4x4x3xf32> no_inline {
// CHECK: linalg.contract indexing_maps = [#[[$QH]], #[[$KH]], #[[$CMN]]] {gradir.kernel} ins(%[[Q]], %[[K]] : tensor<4x4x3xf32>, tensor<4x4x3xf32>) outs(%{{.*}} : tensor<4x4x4xf32>)
// CHECK: %[[V:.*]] = scf.execute_region -> tensor<4x4x3xf32> no_inline {
// CHECK: linalg.contract indexing_maps = [#[[$AMK]], #[[$VH]], #[[$CMN]]] {gradir.kernel} ins(%{{.*}}, %[[V]] : tensor<4x4x4xf32>, tensor<4x4x3xf32>) outs(%{{.*}} : tensor<4x4x3xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @heads(%q: tensor<4x2x6xf32>, %k: tensor<4x2x6xf32>, %v: tensor<4x2x6xf32>,
                 %p: tensor<2x2x4x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32>) {
  %q1 = "rlx.reshape"(%q) : (tensor<4x2x6xf32>) -> tensor<4x4x3xf32>
  %q2 = "rlx.permute_dims"(%q1) {axes = array<i64: 1, 0, 2>} : (tensor<4x4x3xf32>) -> tensor<4x4x3xf32>
  %q3 = "rlx.reshape"(%q2) : (tensor<4x4x3xf32>) -> tensor<2x2x4x3xf32>
  %k1 = "rlx.reshape"(%k) : (tensor<4x2x6xf32>) -> tensor<4x4x3xf32>
  %k2 = "rlx.permute_dims"(%k1) {axes = array<i64: 1, 0, 2>} : (tensor<4x4x3xf32>) -> tensor<4x4x3xf32>
  %k3 = "rlx.reshape"(%k2) : (tensor<4x4x3xf32>) -> tensor<2x2x4x3xf32>
  %kt = "rlx.permute_dims"(%k3) {axes = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x3xf32>) -> tensor<2x2x3x4xf32>
  %s = "rlx.matmul"(%q3, %kt) : (tensor<2x2x4x3xf32>, tensor<2x2x3x4xf32>) -> tensor<2x2x4x4xf32>
  %v1 = "rlx.reshape"(%v) : (tensor<4x2x6xf32>) -> tensor<4x4x3xf32>
  %v2 = "rlx.permute_dims"(%v1) {axes = array<i64: 1, 0, 2>} : (tensor<4x4x3xf32>) -> tensor<4x4x3xf32>
  %v3 = "rlx.reshape"(%v2) : (tensor<4x4x3xf32>) -> tensor<2x2x4x3xf32>
  %o = "rlx.matmul"(%p, %v3) : (tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32>) -> tensor<2x2x4x3xf32>
  return %s, %o : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32>
}

// A lhs whose batch dims are all 1 (and a 2-D transposed one) is one matrix
// for every batch element: a 2-D operand, no linalg.broadcast.
// CHECK-LABEL: func.func @shared_lhs(
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.contract indexing_maps = [#[[$A2]], #[[$BKN]], #[[$CMN]]] {gradir.kernel} ins(%{{.*}}, %arg1 : tensor<5x3xf32>, tensor<4x3x6xf32>)
// CHECK: linalg.contract indexing_maps = [#[[$A2T]], #[[$BKN]], #[[$CMN]]] {gradir.kernel} ins(%arg2, %{{.*}} : tensor<3x5xf32>, tensor<6x3x6xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: return
func.func @shared_lhs(%a: tensor<1x5x3xf32>, %b: tensor<4x3x6xf32>, %c: tensor<3x5xf32>,
                      %d: tensor<2x3x3x6xf32>) -> (tensor<4x5x6xf32>, tensor<2x3x5x6xf32>) {
  %0 = "rlx.matmul"(%a, %b) : (tensor<1x5x3xf32>, tensor<4x3x6xf32>) -> tensor<4x5x6xf32>
  %ct = "rlx.permute_dims"(%c) : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %1 = "rlx.matmul"(%ct, %d) : (tensor<5x3xf32>, tensor<2x3x3x6xf32>) -> tensor<2x3x5x6xf32>
  return %0, %1 : tensor<4x5x6xf32>, tensor<2x3x5x6xf32>
}

// Materialized: batch dims broadcast in part ((2, 1) against (1, 3)), a
// permutation whose batch dims do not merge in the source, one that puts
// the batch innermost.  f16 is computed in f32, as in 2-D.
// CHECK-LABEL: func.func @copied(
// CHECK: linalg.broadcast
// CHECK: linalg.broadcast
// CHECK: linalg.contract indexing_maps = [#[[$AMK]], #[[$BKN]], #[[$CMN]]] {gradir.kernel} ins({{.*}} : tensor<6x5x7xf32>, tensor<6x7x4xf32>)
// CHECK: linalg.generic
// CHECK: linalg.contract indexing_maps = [#[[$AMK]], #[[$BKN]], #[[$CMN]]] {gradir.kernel} ins({{.*}} : tensor<6x5x7xf32>, tensor<6x7x4xf32>)
// CHECK: linalg.transpose
// CHECK: linalg.contract indexing_maps = [#[[$AMK]], #[[$BKN]], #[[$CMN]]] {gradir.kernel} ins({{.*}} : tensor<3x5x7xf32>, tensor<3x7x4xf32>)
// CHECK: arith.extf
// CHECK: linalg.contract indexing_maps = [#[[$AMK]], #[[$BKN]], #[[$CMN]]] {gradir.kernel} ins({{.*}} : tensor<3x5x7xf32>, tensor<3x7x4xf32>)
// CHECK: arith.truncf
// CHECK: return
func.func @copied(%a: tensor<2x1x5x7xf32>, %b: tensor<1x3x7x4xf32>, %c: tensor<3x2x5x7xf32>,
                  %d: tensor<2x3x7x4xf32>, %e: tensor<5x7x3xf32>, %f: tensor<3x7x4xf32>,
                  %g: tensor<3x5x7xf16>, %h: tensor<3x7x4xf16>)
    -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf16>) {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x1x5x7xf32>, tensor<1x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  %ct = "rlx.permute_dims"(%c) {axes = array<i64: 1, 0, 2, 3>} : (tensor<3x2x5x7xf32>) -> tensor<2x3x5x7xf32>
  %1 = "rlx.matmul"(%ct, %d) : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  %et = "rlx.permute_dims"(%e) {axes = array<i64: 2, 0, 1>} : (tensor<5x7x3xf32>) -> tensor<3x5x7xf32>
  %2 = "rlx.matmul"(%et, %f) : (tensor<3x5x7xf32>, tensor<3x7x4xf32>) -> tensor<3x5x4xf32>
  %3 = "rlx.matmul"(%g, %h) : (tensor<3x5x7xf16>, tensor<3x7x4xf16>) -> tensor<3x5x4xf16>
  return %0, %1, %2, %3 : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf16>
}

// A head merge, (B, H, S, D) -> (S, B, H*D) -> (S*B, H*D), the result's only
// reader: the contraction writes (S, B*H, D) (C's map (m, b, n)) and the
// merge is a reshape of it, no copy.  The chain may end before its last
// op: a permute read twice (@merge_shared) is written in place and both its
// readers read views of it.
// CHECK-LABEL: func.func @merge(
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x4x3xf32>)
// CHECK: %[[M:.*]] = linalg.contract indexing_maps = [#[[$AMK]], #[[$BKN]], #[[$CM]]] {gradir.kernel} ins(%{{.*}}, %{{.*}} : tensor<4x4x4xf32>, tensor<4x4x3xf32>) outs(%[[Z]] : tensor<4x4x3xf32>)
// CHECK-NEXT: scf.yield %[[M]]
// CHECK-NEXT: }
// CHECK-NEXT: tensor.collapse_shape
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK-LABEL: func.func @merge_shared(
// CHECK-NOT: linalg.transpose
// CHECK: scf.execute_region -> tensor<4x4x4xf32> no_inline {
// CHECK: scf.execute_region -> tensor<4x4x3xf32> no_inline {
// CHECK: %[[C:.*]] = scf.execute_region -> tensor<4x4x3xf32> no_inline {
// CHECK-NEXT: linalg.contract indexing_maps = [#[[$AMK]], #[[$BKN]], #[[$CM]]] {gradir.kernel}
// CHECK: %[[T:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1, 2], [3]] output_shape [4, 2, 2, 3]
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[T]]
// CHECK-NEXT: return %[[R]], %[[T]]
func.func @merge(%p: tensor<2x2x4x4xf32>, %v: tensor<2x2x4x3xf32>) -> tensor<8x6xf32> {
  %o = "rlx.matmul"(%p, %v) : (tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32>) -> tensor<2x2x4x3xf32>
  %t = "rlx.permute_dims"(%o) {axes = array<i64: 2, 0, 1, 3>} : (tensor<2x2x4x3xf32>) -> tensor<4x2x2x3xf32>
  %r = "rlx.reshape"(%t) : (tensor<4x2x2x3xf32>) -> tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}
func.func @merge_shared(%p: tensor<2x2x4x4xf32>, %v: tensor<2x2x4x3xf32>)
    -> (tensor<8x6xf32>, tensor<4x2x2x3xf32>) {
  %o = "rlx.matmul"(%p, %v) : (tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32>) -> tensor<2x2x4x3xf32>
  %t = "rlx.permute_dims"(%o) {axes = array<i64: 2, 0, 1, 3>} : (tensor<2x2x4x3xf32>) -> tensor<4x2x2x3xf32>
  %r = "rlx.reshape"(%t) : (tensor<4x2x2x3xf32>) -> tensor<8x6xf32>
  return %r, %t : tensor<8x6xf32>, tensor<4x2x2x3xf32>
}

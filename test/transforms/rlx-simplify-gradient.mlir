// RUN: gradir-opt %s --rlx-simplify-gradient | FileCheck %s
// RUN: gradir-opt %s --rlx-simplify-gradient | gradir-opt --rlx-verify | gradir-opt --rlx-simplify-gradient | FileCheck %s
// One function per pattern: positive cases first, then where it must not fire.

// --- permute_dims(permute_dims(a)) ------------------------------------------

// General axes composing to the identity: both go.
// CHECK-LABEL: func.func @permute_permute_identity
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[A]]
func.func @permute_permute_identity(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "rlx.permute_dims"(%a) {axes = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// Absent axes (reversed) twice is the identity too.
// CHECK-LABEL: func.func @permute_permute_reversed
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[A]]
func.func @permute_permute_reversed(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "rlx.permute_dims"(%a) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %1 = "rlx.permute_dims"(%0) : (tensor<4x3x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// Not the identity: one permute_dims with the composed axes, never `a`.
// CHECK-LABEL: func.func @permute_permute_not_identity
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[P:.*]] = "rlx.permute_dims"(%[[A]]) {axes = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[P]]
func.func @permute_permute_not_identity(%a: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = "rlx.permute_dims"(%a) {axes = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0, 2>} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// An identity permutation goes; a real one stays.
// CHECK-LABEL: func.func @permute_identity
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[T:.*]] = "rlx.permute_dims"(%[[A]]) {axes = array<i64: 1, 0>}
// CHECK-NEXT: return %[[A]], %[[T]]
func.func @permute_identity(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = "rlx.permute_dims"(%a) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.permute_dims"(%a) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3x2xf32>
}

// A permutation that only moves size-1 axes is a reshape (here merged with
// the reshape before it); one that reorders two axes of size 2 is not.
// CHECK-LABEL: func.func @permute_unit_axes
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<2x2xf32>)
// CHECK-NEXT: %[[R:.*]] = "rlx.reshape"(%[[A]]) : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: %[[T:.*]] = "rlx.permute_dims"(%[[B]]) {axes = array<i64: 1, 0>}
// CHECK-NEXT: return %[[R]], %[[T]]
func.func @permute_unit_axes(%a: tensor<3xf32>, %b: tensor<2x2xf32>) -> (tensor<1x3xf32>, tensor<2x2xf32>) {
  %0 = "rlx.reshape"(%a) : (tensor<3xf32>) -> tensor<3x1xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<3x1xf32>) -> tensor<1x3xf32>
  %2 = "rlx.permute_dims"(%b) {axes = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %1, %2 : tensor<1x3xf32>, tensor<2x2xf32>
}

// --- transpose(matmul(a, b)) -> matmul(transpose(b), transpose(a)) ------------

// b is a transpose: its source is used, one new transpose (of a).
// CHECK-LABEL: func.func @transpose_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<5x4xf32>)
// CHECK-NEXT: %[[AT:.*]] = "rlx.permute_dims"(%[[A]]) {axes = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[M:.*]] = "rlx.matmul"(%[[B]], %[[AT]]) : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: return %[[M]]
func.func @transpose_matmul(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<5x3xf32> {
  %bt = "rlx.permute_dims"(%b) {axes = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %0 = "rlx.matmul"(%a, %bt) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  return %1 : tensor<5x3xf32>
}

// An existing transpose of a is reused; batch dimensions are kept.
// CHECK-LABEL: func.func @transpose_matmul_reuse
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<2x5x4xf32>)
// CHECK-NEXT: %[[AT:.*]] = "rlx.permute_dims"(%[[A]]) {axes = array<i64: 0, 2, 1>}
// CHECK-NEXT: %[[E:.*]] = "rlx.exp"(%[[AT]])
// CHECK-NEXT: %[[M:.*]] = "rlx.matmul"(%[[B]], %[[AT]]) : (tensor<2x5x4xf32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT: return %[[M]], %[[E]]
func.func @transpose_matmul_reuse(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> (tensor<2x5x3xf32>, tensor<2x4x3xf32>) {
  %at = "rlx.permute_dims"(%a) {axes = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %e = "rlx.exp"(%at) : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %bt = "rlx.permute_dims"(%b) {axes = array<i64: 0, 2, 1>} : (tensor<2x5x4xf32>) -> tensor<2x4x5xf32>
  %0 = "rlx.matmul"(%a, %bt) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 0, 2, 1>} : (tensor<2x3x5xf32>) -> tensor<2x5x3xf32>
  return %1, %e : tensor<2x5x3xf32>, tensor<2x4x3xf32>
}

// Must not fire: a 1-D operand (the seed skips it), a matmul with another
// use, two new transposes (the rewrite would add an op).
// CHECK-LABEL: func.func @transpose_matmul_negative
// CHECK: %[[M1:.*]] = "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: "rlx.permute_dims"(%[[M1]])
// CHECK: %[[M2:.*]] = "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: "rlx.permute_dims"(%[[M2]])
// CHECK-NEXT: "rlx.exp"(%[[M2]])
// CHECK-NEXT: %[[M3:.*]] = "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: "rlx.permute_dims"(%[[M3]])
func.func @transpose_matmul_negative(%a: tensor<2x3x4xf32>, %v: tensor<4xf32>, %x: tensor<3x4xf32>, %b: tensor<5x4xf32>, %y: tensor<4x5xf32>)
    -> (tensor<3x2xf32>, tensor<5x3xf32>, tensor<3x5xf32>, tensor<5x3xf32>) {
  %0 = "rlx.matmul"(%a, %v) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %bt = "rlx.permute_dims"(%b) {axes = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %2 = "rlx.matmul"(%x, %bt) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %3 = "rlx.permute_dims"(%2) {axes = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %4 = "rlx.exp"(%2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %5 = "rlx.matmul"(%x, %y) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %6 = "rlx.permute_dims"(%5) {axes = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  return %1, %3, %4, %6 : tensor<3x2xf32>, tensor<5x3xf32>, tensor<3x5xf32>, tensor<5x3xf32>
}

// --- identity shape ops, reshape and broadcast chains --------------------------

// CHECK-LABEL: func.func @identity_shape_ops
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[A]], %[[A]], %[[A]], %[[A]]
func.func @identity_shape_ops(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "rlx.reshape"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.broadcast_to"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "rlx.astype"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "rlx.squeeze"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// Must not fire: shape or element type changes.
// CHECK-LABEL: func.func @non_identity_shape_ops
// CHECK-NEXT: "rlx.reshape"
// CHECK-NEXT: "rlx.broadcast_to"
// CHECK-NEXT: "rlx.astype"
// CHECK-NEXT: return
func.func @non_identity_shape_ops(%a: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<4x2x3xf32>, tensor<2x3xf64>) {
  %0 = "rlx.reshape"(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "rlx.broadcast_to"(%a) : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %2 = "rlx.astype"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf64>
  return %0, %1, %2 : tensor<3x2xf32>, tensor<4x2x3xf32>, tensor<2x3xf64>
}

// reshape(reshape(x)) -> one reshape (expand_dims is a reshape too), or x.
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[R:.*]] = "rlx.reshape"(%[[A]]) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: return %[[R]], %[[A]]
func.func @reshape_reshape(%a: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<2x3xf32>) {
  %0 = "rlx.expand_dims"(%a) {axis = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %1 = "rlx.reshape"(%0) : (tensor<1x2x3xf32>) -> tensor<6xf32>
  %2 = "rlx.reshape"(%1) : (tensor<6xf32>) -> tensor<3x2xf32>
  %3 = "rlx.reshape"(%2) : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1, %3 : tensor<6xf32>, tensor<2x3xf32>
}

// Must not fire: a reshape of something else than a reshape.
// CHECK-LABEL: func.func @reshape_of_permute
// CHECK-NEXT: "rlx.permute_dims"
// CHECK-NEXT: "rlx.reshape"
// CHECK-NEXT: return
func.func @reshape_of_permute(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = "rlx.permute_dims"(%a) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "rlx.reshape"(%0) : (tensor<3x2xf32>) -> tensor<6xf32>
  return %1 : tensor<6xf32>
}

// CHECK-LABEL: func.func @broadcast_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[B:.*]] = "rlx.broadcast_to"(%[[A]]) : (tensor<3xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[B]]
func.func @broadcast_broadcast(%a: tensor<3xf32>) -> tensor<4x2x3xf32> {
  %0 = "rlx.broadcast_to"(%a) : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.broadcast_to"(%0) : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// Must not fire: the inner reshape adds a trailing size-1 axis (broadcasting
// aligns on the right, so the source alone would broadcast differently).
// CHECK-LABEL: func.func @broadcast_of_reshape
// CHECK-NEXT: "rlx.reshape"
// CHECK-NEXT: "rlx.broadcast_to"
// CHECK-NEXT: return
func.func @broadcast_of_reshape(%a: tensor<3xf32>) -> tensor<3x4xf32> {
  %0 = "rlx.reshape"(%a) : (tensor<3xf32>) -> tensor<3x1xf32>
  %1 = "rlx.broadcast_to"(%0) : (tensor<3x1xf32>) -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// A shape op of a broadcast single element is a broadcast.
// CHECK-LABEL: func.func @permute_of_scalar_broadcast
// CHECK-SAME: (%[[S:.*]]: tensor<f32>)
// CHECK-NEXT: %[[B:.*]] = "rlx.broadcast_to"(%[[S]]) : (tensor<f32>) -> tensor<3x2xf32>
// CHECK-NEXT: return %[[B]]
func.func @permute_of_scalar_broadcast(%s: tensor<f32>) -> tensor<3x2xf32> {
  %0 = "rlx.broadcast_to"(%s) : (tensor<f32>) -> tensor<2x3xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// Must not fire: the broadcast source has several elements.
// CHECK-LABEL: func.func @permute_of_broadcast
// CHECK-NEXT: "rlx.broadcast_to"
// CHECK-NEXT: "rlx.permute_dims"
// CHECK-NEXT: return
func.func @permute_of_broadcast(%x: tensor<3xf32>) -> tensor<3x2xf32> {
  %0 = "rlx.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// --- reductions of broadcasts -------------------------------------------------

// Over the broadcast axes: x times the count (sum, collapse_sum_to), x
// itself (mean), reshaped to the result.
// CHECK-LABEL: func.func @sum_of_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3x1xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant dense<4.000000e+00> : tensor<f32>
// CHECK-DAG: %[[S:.*]] = "rlx.multiply"(%[[X]], %[[C4]]) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-DAG: %[[C5:.*]] = arith.constant dense<5.000000e+00> : tensor<f32>
// CHECK-DAG: %[[K:.*]] = "rlx.multiply"(%[[Y]], %[[C5]]) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
// CHECK-DAG: %[[R:.*]] = "rlx.reshape"(%[[Y]]) : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK: return %[[S]], %[[S]], %[[K]], %[[R]]
func.func @sum_of_broadcast(%x: tensor<3xf32>, %y: tensor<3x1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>, tensor<3xf32>) {
  %0 = "rlx.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<4x3xf32>
  %1 = "rlx.sum"(%0) {axis = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  %2 = "rlx.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<4x3xf32>
  %3 = "rlx.collapse_sum_to"(%2) : (tensor<4x3xf32>) -> tensor<3xf32>
  %4 = "rlx.broadcast_to"(%y) : (tensor<3x1xf32>) -> tensor<3x5xf32>
  %5 = "rlx.sum"(%4) {axis = array<i64: 1>, keepdims = true} : (tensor<3x5xf32>) -> tensor<3x1xf32>
  %6 = "rlx.broadcast_to"(%y) : (tensor<3x1xf32>) -> tensor<3x5xf32>
  %7 = "rlx.mean"(%6) {axis = array<i64: 1>} : (tensor<3x5xf32>) -> tensor<3xf32>
  return %1, %3, %5, %7 : tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>, tensor<3xf32>
}

// Must not fire: the sum covers an axis x varies along (axis 1 here), or
// the broadcast has other uses (the rewrite would add ops).
// CHECK-LABEL: func.func @sum_of_broadcast_negative
// CHECK-NEXT: %[[B:.*]] = "rlx.broadcast_to"
// CHECK-NEXT: "rlx.sum"(%[[B]]) {axis = array<i64: 1>}
// CHECK-NEXT: "rlx.sum"(%[[B]]) {axis = array<i64: 0>}
// CHECK-NEXT: return
func.func @sum_of_broadcast_negative(%x: tensor<3xf32>) -> (tensor<4xf32>, tensor<3xf32>, tensor<4x3xf32>) {
  %0 = "rlx.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<4x3xf32>
  %1 = "rlx.sum"(%0) {axis = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  %2 = "rlx.sum"(%0) {axis = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  return %1, %2, %0 : tensor<4xf32>, tensor<3xf32>, tensor<4x3xf32>
}

// Reducing only size-1 axes is a reshape; a size-2 axis is not.
// CHECK-LABEL: func.func @size_one_reduction
// CHECK-SAME: (%[[X:.*]]: tensor<2x1xf32>)
// CHECK-NEXT: %[[R:.*]] = "rlx.reshape"(%[[X]]) : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[S:.*]] = "rlx.sum"(%[[X]]) {axis = array<i64: 0>}
// CHECK-NEXT: return %[[R]], %[[X]], %[[S]]
func.func @size_one_reduction(%x: tensor<2x1xf32>) -> (tensor<2xf32>, tensor<2x1xf32>, tensor<1xf32>) {
  %0 = "rlx.sum"(%x) {axis = array<i64: 1>} : (tensor<2x1xf32>) -> tensor<2xf32>
  %1 = "rlx.max"(%x) {axis = array<i64: 1>, keepdims = true} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %2 = "rlx.sum"(%x) {axis = array<i64: 0>} : (tensor<2x1xf32>) -> tensor<1xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2x1xf32>, tensor<1xf32>
}

// --- neutral elements ------------------------------------------------------------

// x * 1, 1 * x, x + 0, x - 0, x / 1 -> x; 0 - x -> -x; - - x -> x.
// CHECK-LABEL: func.func @neutral
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[N:.*]] = "rlx.negative"(%[[X]])
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[N]], %[[X]]
func.func @neutral(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %one = "rlx.ones"() : () -> tensor<2x3xf32>
  %zero = "rlx.zeros"() : () -> tensor<f32>
  %c1 = arith.constant dense<1.0> : tensor<3xf32>
  %0 = "rlx.multiply"(%x, %one) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.multiply"(%c1, %x) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "rlx.add"(%x, %zero) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %3 = "rlx.subtract"(%x, %zero) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %4 = "rlx.divide"(%x, %c1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = "rlx.subtract"(%zero, %x) : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "rlx.negative"(%5) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// Broadcasting: x + zeros with a larger result is broadcast_to(x), never x
// (the types would differ).
// CHECK-LABEL: func.func @neutral_broadcasting
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[B:.*]] = "rlx.broadcast_to"(%[[X]]) : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[B]], %[[B]]
func.func @neutral_broadcasting(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = "rlx.zeros"() : () -> tensor<2x3xf32>
  %one = "rlx.ones"() : () -> tensor<2x1xf32>
  %0 = "rlx.add"(%x, %zero) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.multiply"(%one, %x) : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// Must not fire: x + 1, x * 2, x - y (no neutral operand).
// CHECK-LABEL: func.func @not_neutral
// CHECK-NEXT: %[[ONE:.*]] = "rlx.ones"() : () -> tensor<f32>
// CHECK-NEXT: %[[TWO:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: "rlx.add"(%{{.*}}, %[[ONE]])
// CHECK-NEXT: "rlx.multiply"(%{{.*}}, %[[TWO]])
// CHECK-NEXT: "rlx.subtract"
// CHECK-NEXT: return
func.func @not_neutral(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %one = "rlx.ones"() : () -> tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %0 = "rlx.add"(%x, %one) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = "rlx.multiply"(%x, %two) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = "rlx.subtract"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// Negations fold into add/subtract, and move out of reductions onto the
// smaller tensor; a negation with another use stays.
// CHECK-LABEL: func.func @negations
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[S:.*]] = "rlx.subtract"(%[[X]], %[[Y]])
// CHECK-DAG: %[[A:.*]] = "rlx.add"(%[[Y]], %[[X]])
// CHECK-DAG: %[[R:.*]] = "rlx.sum"(%[[X]]) {axis = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK-DAG: %[[NR:.*]] = "rlx.negative"(%[[R]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-DAG: %[[N:.*]] = "rlx.negative"(%[[Y]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-DAG: %[[K:.*]] = "rlx.add"(%[[X]], %[[N]])
// CHECK: return %[[S]], %[[A]], %[[NR]], %[[K]], %[[N]]
func.func @negations(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "rlx.negative"(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.add"(%x, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "rlx.negative"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "rlx.subtract"(%y, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "rlx.negative"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = "rlx.sum"(%4) {axis = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %6 = "rlx.negative"(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = "rlx.add"(%x, %6) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1, %3, %5, %7, %6 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// where(c, x, x) -> x; where(c, x, y) stays.
// CHECK-LABEL: func.func @where_same
// CHECK-SAME: (%[[C:.*]]: tensor<3xi1>, %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[W:.*]] = "rlx.where"(%[[C]], %[[X]], %[[Y]])
// CHECK-NEXT: return %[[X]], %[[W]]
func.func @where_same(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "rlx.where"(%c, %x, %x) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.where"(%c, %x, %y) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// --- symbolic zeros ---------------------------------------------------------------

// A zero adjoint through reshape, permute_dims, matmul, multiply: its
// consumers are zeros, and y + 0 is y; the chain is gone.
// CHECK-LABEL: func.func @symbolic_zeros
// CHECK-SAME: (%[[W:.*]]: tensor<3x4xf32>, %[[Y:.*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[Z:.*]] = "rlx.zeros"() : () -> tensor<3x4xf32>
// CHECK-NEXT: return %[[Y]], %[[Z]]
func.func @symbolic_zeros(%w: tensor<3x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>) {
  %z = "rlx.zeros"() : () -> tensor<6xf32>
  %0 = "rlx.reshape"(%z) : (tensor<6xf32>) -> tensor<3x2xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %2 = "rlx.matmul"(%1, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %3 = "rlx.add"(%y, %2) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %z4 = "rlx.zeros"() : () -> tensor<4xf32>
  %4 = "rlx.multiply"(%w, %z4) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %3, %4 : tensor<2x4xf32>, tensor<3x4xf32>
}

// Must not fire: one branch of a where is zero (the zeros only become a
// 0-d operand), exp of zeros is ones, not zeros.
// CHECK-LABEL: func.func @not_all_zero
// CHECK-SAME: (%[[C:.*]]: tensor<3xi1>, %[[X:.*]]: tensor<3xf32>)
// CHECK-DAG: %[[Z:.*]] = "rlx.zeros"() : () -> tensor<f32>
// CHECK-DAG: %[[W:.*]] = "rlx.where"(%[[C]], %[[X]], %[[Z]]) : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-DAG: %[[O:.*]] = "rlx.ones"() : () -> tensor<3xf32>
// CHECK: return %[[W]], %[[O]]
func.func @not_all_zero(%c: tensor<3xi1>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %z = "rlx.zeros"() : () -> tensor<3xf32>
  %0 = "rlx.where"(%c, %x, %z) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.exp"(%z) : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// --- constant folding of zeros / ones / full ------------------------------------------

// CHECK-LABEL: func.func @fold_constants
// CHECK-DAG: %[[SIX:.*]] = arith.constant dense<6.000000e+00> : tensor<f32>
// CHECK-DAG: %[[ONES:.*]] = "rlx.ones"() : () -> tensor<2x3xf32>
// CHECK-DAG: %[[FULL:.*]] = arith.constant dense<2.500000e+00> : tensor<4xf32>
// CHECK-DAG: %[[NEG:.*]] = arith.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: return %[[SIX]], %[[ONES]], %[[FULL]], %[[NEG]]
func.func @fold_constants() -> (tensor<f32>, tensor<2x3xf32>, tensor<4xf32>, tensor<f32>) {
  %one = "rlx.ones"() : () -> tensor<f32>
  %ones = "rlx.ones"() : () -> tensor<2x3xf32>
  %0 = "rlx.sum"(%ones) : (tensor<2x3xf32>) -> tensor<f32>
  %1 = "rlx.broadcast_to"(%one) : (tensor<f32>) -> tensor<2x3xf32>
  %c = arith.constant dense<2.5> : tensor<f32>
  %2 = "rlx.full"(%c) : (tensor<f32>) -> tensor<4xf32>
  %3 = "rlx.negative"(%one) : (tensor<f32>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<2x3xf32>, tensor<4xf32>, tensor<f32>
}

// Must not fire: full of a value that is not a constant, exp of a non-splat.
// CHECK-LABEL: func.func @no_fold
// CHECK-NEXT: "rlx.full"
// CHECK-NEXT: "rlx.exp"
// CHECK-NEXT: return
func.func @no_fold(%s: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = "rlx.full"(%s) : (tensor<f32>) -> tensor<4xf32>
  %1 = "rlx.exp"(%s) : (tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<4xf32>, tensor<f32>
}

// --- implicit broadcasting ----------------------------------------------------------

// A broadcast (full, leading size-1 reshape) operand whose shape the op
// broadcasts by itself is dropped; a splat operand becomes 0-d; a
// broadcast of a leading size-1 reshape broadcasts the source.
// CHECK-LABEL: func.func @implicit_broadcast
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %[[G:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[M:.*]] = "rlx.multiply"(%[[S]], %[[Y]]) : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-DAG: %[[F:.*]] = "rlx.subtract"(%[[Y]], %[[S]]) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-DAG: %[[B:.*]] = "rlx.broadcast_to"(%[[G]]) : (tensor<3xf32>) -> tensor<4x2x3xf32>
// CHECK-DAG: %[[A:.*]] = "rlx.add"(%[[Y]], %[[G]]) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<3.000000e+00> : tensor<f32>
// CHECK-DAG: %[[D:.*]] = "rlx.divide"(%[[Y]], %[[C]]) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: return %[[M]], %[[A]], %[[D]], %[[F]], %[[B]]
func.func @implicit_broadcast(%s: tensor<f32>, %g: tensor<3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>) {
  %0 = "rlx.broadcast_to"(%s) : (tensor<f32>) -> tensor<2x3xf32>
  %1 = "rlx.multiply"(%0, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "rlx.reshape"(%g) : (tensor<3xf32>) -> tensor<1x3xf32>
  %3 = "rlx.add"(%y, %2) : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %c = arith.constant dense<3.0> : tensor<2x3xf32>
  %4 = "rlx.divide"(%y, %c) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = "rlx.full"(%s) : (tensor<f32>) -> tensor<2x3xf32>
  %6 = "rlx.subtract"(%y, %5) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = "rlx.broadcast_to"(%2) : (tensor<1x3xf32>) -> tensor<4x2x3xf32>
  return %1, %3, %4, %6, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>
}

// Must not fire: the broadcast decides the result shape; the reshape does
// not only prepend size-1 axes.
// CHECK-LABEL: func.func @explicit_broadcast
// CHECK-NEXT: "rlx.broadcast_to"
// CHECK-NEXT: "rlx.multiply"
// CHECK-NEXT: "rlx.reshape"
// CHECK-NEXT: "rlx.add"
// CHECK-NEXT: return
func.func @explicit_broadcast(%g: tensor<3xf32>, %y: tensor<3xf32>, %z: tensor<3x2xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = "rlx.broadcast_to"(%g) : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.multiply"(%0, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = "rlx.reshape"(%g) : (tensor<3xf32>) -> tensor<3x1xf32>
  %3 = "rlx.add"(%z, %2) : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  return %1, %3 : tensor<2x3xf32>, tensor<3x2xf32>
}

// --- checkpointing marks ------------------------------------------------------------

// A recomputed op is not folded into a forward one (its operands may not
// be live in the backward); ops built while rewriting a recomputed op are
// recomputed too; pins move to the op that replaces the pinned one.
// CHECK-LABEL: func.func @marks
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NEXT: %[[F:.*]] = "rlx.permute_dims"(%[[A]]) {axes = array<i64: 1, 2, 0>}
// CHECK-NEXT: %[[R:.*]] = "rlx.permute_dims"(%[[F]]) {axes = array<i64: 2, 0, 1>, grad.recomputed}
// CHECK-NEXT: %[[P:.*]] = "rlx.permute_dims"(%[[A]]) {axes = array<i64: 2, 1, 0>, grad.recomputed}
// CHECK-NEXT: %[[V:.*]] = "rlx.reshape"(%[[A]]) {grad.save} : (tensor<2x3x4xf32>) -> tensor<24xf32>
// CHECK-NEXT: %[[B:.*]] = "rlx.broadcast_to"(%[[S]])
// CHECK-NEXT: %[[M:.*]] = "rlx.multiply"(%[[B]], %[[A]]) {grad.recomputed}
// CHECK-NEXT: return %[[R]], %[[P]], %[[V]], %[[M]]
func.func @marks(%a: tensor<2x3x4xf32>, %s: tensor<f32>) -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<24xf32>, tensor<2x3x4xf32>) {
  %0 = "rlx.permute_dims"(%a) {axes = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 2, 0, 1>, grad.recomputed} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %2 = "rlx.permute_dims"(%a) {axes = array<i64: 1, 2, 0>, grad.recomputed} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %3 = "rlx.permute_dims"(%2) {axes = array<i64: 1, 0, 2>, grad.recomputed} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
  %4 = "rlx.reshape"(%a) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %5 = "rlx.reshape"(%4) {grad.save} : (tensor<6x4xf32>) -> tensor<24xf32>
  %6 = "rlx.broadcast_to"(%s) : (tensor<f32>) -> tensor<2x3x4xf32>
  %7 = "rlx.multiply"(%6, %a) {grad.recomputed} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %1, %3, %5, %7 : tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<24xf32>, tensor<2x3x4xf32>
}

// --- contractions reduced to vector products --------------------------------------

// The total of a product: column sums of a dotted with row sums of b.
// CHECK-LABEL: func.func @sum_of_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>)
// CHECK-NEXT: %[[CA:.*]] = "rlx.sum"(%[[A]]) {axis = array<i64: -2>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[RB:.*]] = "rlx.sum"(%[[B]]) {axis = array<i64: -1>} : (tensor<3x5xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[D:.*]] = "rlx.multiply"(%[[CA]], %[[RB]])
// CHECK-NEXT: %[[S:.*]] = "rlx.sum"(%[[D]]) : (tensor<3xf32>) -> tensor<f32>
// CHECK-NEXT: return %[[S]]
func.func @sum_of_matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<f32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = "rlx.sum"(%0) : (tensor<4x5xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// Batched, keepdims: per-batch dot products; the 0-d total broadcast back.
// CHECK-LABEL: func.func @sum_of_batch_matmul_keepdims
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x3xf32>, %[[B:.*]]: tensor<2x3x5xf32>)
// CHECK-NEXT: %[[CA:.*]] = "rlx.sum"(%[[A]]) {axis = array<i64: -2>} : (tensor<2x4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[RB:.*]] = "rlx.sum"(%[[B]]) {axis = array<i64: -1>} : (tensor<2x3x5xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[D:.*]] = "rlx.multiply"(%[[CA]], %[[RB]])
// CHECK-NEXT: %[[S:.*]] = "rlx.sum"(%[[D]]) : (tensor<2x3xf32>) -> tensor<f32>
// CHECK-NEXT: %[[R:.*]] = "rlx.{{broadcast_to|reshape}}"(%[[S]]) : (tensor<f32>) -> tensor<1x1x1xf32>
// CHECK-NEXT: return %[[R]]
func.func @sum_of_batch_matmul_keepdims(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>) -> tensor<1x1x1xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %1 = "rlx.sum"(%0) {keepdims = true} : (tensor<2x4x5xf32>) -> tensor<1x1x1xf32>
  return %1 : tensor<1x1x1xf32>
}

// A matmul with a splat operand: scaled column sums, broadcast over the rows;
// with the splat on the right, row sums (read through a's transpose).
// CHECK-LABEL: func.func @matmul_of_splat
// CHECK-SAME: (%[[B:.*]]: tensor<4x3xf32>, %[[X:.*]]: tensor<3x6xf32>)
// CHECK-DAG: %[[CB:.*]] = "rlx.sum"(%[[B]]) {axis = array<i64: -2>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK-DAG: %[[L:.*]] = "rlx.broadcast_to"(%[[CB]]) : (tensor<3xf32>) -> tensor<5x3xf32>
// CHECK-DAG: %[[RX:.*]] = "rlx.sum"(%[[X]]) {axis = array<i64: -2>} : (tensor<3x6xf32>) -> tensor<6xf32>
// CHECK-DAG: %[[E:.*]] = "rlx.expand_dims"(%[[RX]]) {axis = array<i64: -1>} : (tensor<6xf32>) -> tensor<6x1xf32>
// CHECK-DAG: %[[SC:.*]] = "rlx.multiply"(%[[E]], %{{.*}}) : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x1xf32>
// CHECK-DAG: %[[R:.*]] = "rlx.broadcast_to"(%[[SC]]) : (tensor<6x1xf32>) -> tensor<6x2xf32>
// CHECK-NOT: rlx.matmul
// CHECK: return %[[L]], %[[R]]
func.func @matmul_of_splat(%b: tensor<4x3xf32>, %x: tensor<3x6xf32>) -> (tensor<5x3xf32>, tensor<6x2xf32>) {
  %ones = "rlx.ones"() : () -> tensor<5x4xf32>
  %0 = "rlx.matmul"(%ones, %b) : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %c = arith.constant dense<2.0> : tensor<3x2xf32>
  %xt = "rlx.permute_dims"(%x) : (tensor<3x6xf32>) -> tensor<6x3xf32>
  %1 = "rlx.matmul"(%xt, %c) : (tensor<6x3xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %0, %1 : tensor<5x3xf32>, tensor<6x2xf32>
}

// Not rewritten: the product is used besides the sum, the sum is partial,
// a 1-D operand, broadcast batch dimensions.
// CHECK-LABEL: func.func @sum_of_matmul_not
// CHECK-COUNT-4: "rlx.matmul"
// CHECK-NOT: "rlx.matmul"
// CHECK: return
func.func @sum_of_matmul_not(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %v: tensor<3xf32>, %c: tensor<2x4x3xf32>) -> (tensor<f32>, tensor<4x5xf32>, tensor<5xf32>, tensor<f32>, tensor<f32>) {
  %0 = "rlx.matmul"(%a, %b) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = "rlx.sum"(%0) : (tensor<4x5xf32>) -> tensor<f32>
  %2 = "rlx.matmul"(%a, %b) {grad.save} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %3 = "rlx.sum"(%2) {axis = array<i64: 0>} : (tensor<4x5xf32>) -> tensor<5xf32>
  %4 = "rlx.matmul"(%v, %b) : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32>
  %5 = "rlx.sum"(%4) : (tensor<5xf32>) -> tensor<f32>
  %6 = "rlx.matmul"(%c, %b) : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  %7 = "rlx.sum"(%6) : (tensor<2x4x5xf32>) -> tensor<f32>
  return %1, %0, %3, %5, %7 : tensor<f32>, tensor<4x5xf32>, tensor<5xf32>, tensor<f32>, tensor<f32>
}

// collapse_sum_to(x * c) -> collapse_sum_to(x) * c for a factor the same along
// every summed axis (a batch norm's per-channel gamma * rsqrt(var)); with x's
// sum already there, rlx-cse merges the two: one sum of %g left for three.
// CHECK-LABEL: func.func @factor_out_of_sum
// CHECK-SAME: (%[[G:.*]]: tensor<4x3x2x2xf32>, %[[A:.*]]: tensor<1x3x1x1xf32>, %[[B:.*]]: tensor<3x1x1xf32>)
// CHECK-DAG: %[[S:.*]] = "rlx.collapse_sum_to"(%[[G]]) : (tensor<4x3x2x2xf32>) -> tensor<1x3x1x1xf32>
// CHECK-DAG: %[[SA:.*]] = "rlx.multiply"(%[[S]], %[[A]]) : (tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x1x1xf32>
// CHECK-DAG: %[[SAB:.*]] = "rlx.multiply"(%[[SA]], %[[B]]) : (tensor<1x3x1x1xf32>, tensor<3x1x1xf32>) -> tensor<1x3x1x1xf32>
// CHECK-NOT: "rlx.collapse_sum_to"
// CHECK: return %[[S]], %[[SA]], %[[SAB]], %{{.*}}
func.func @factor_out_of_sum(%g: tensor<4x3x2x2xf32>, %a: tensor<1x3x1x1xf32>, %b: tensor<3x1x1xf32>) -> (tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<4x3x2x2xf32>) {
  %0 = "rlx.collapse_sum_to"(%g) : (tensor<4x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  %1 = "rlx.multiply"(%g, %a) : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<4x3x2x2xf32>
  %2 = "rlx.collapse_sum_to"(%1) : (tensor<4x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  %3 = "rlx.multiply"(%b, %1) : (tensor<3x1x1xf32>, tensor<4x3x2x2xf32>) -> tensor<4x3x2x2xf32>
  %4 = "rlx.collapse_sum_to"(%3) : (tensor<4x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  return %0, %2, %4, %3 : tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<4x3x2x2xf32>
}

// Not: a factor that varies along a summed axis (%h: per row, summed over
// rows), or with a result too small for it (a 1x1 sum of a per-channel
// product).
// CHECK-LABEL: func.func @factor_out_of_sum_not
// CHECK-COUNT-2: "rlx.collapse_sum_to"(%{{[0-9]+}})
// CHECK: return
func.func @factor_out_of_sum_not(%g: tensor<4x3xf32>, %h: tensor<4x1xf32>, %c: tensor<3xf32>) -> (tensor<3xf32>, tensor<1x1xf32>) {
  %0 = "rlx.multiply"(%g, %h) : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %1 = "rlx.collapse_sum_to"(%0) : (tensor<4x3xf32>) -> tensor<3xf32>
  %2 = "rlx.multiply"(%g, %c) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = "rlx.collapse_sum_to"(%2) : (tensor<4x3xf32>) -> tensor<1x1xf32>
  return %1, %3 : tensor<3xf32>, tensor<1x1xf32>
}

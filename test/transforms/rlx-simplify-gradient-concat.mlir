// RUN: gradir-opt %s --rlx-simplify-gradient | FileCheck %s
// RUN: gradir-opt %s --rlx-simplify-gradient | gradir-opt --rlx-verify | gradir-opt --rlx-simplify-gradient | FileCheck %s
// simplify/concat.py: add(concat, concat) along one axis with disjoint
// non-zero pieces -> one concat.  Positive cases first, then where it must
// not fire.

// The adjoint of a value cut into three slices (a Transformer's q, k, v):
// three zero-padded adjoints and two adds -> one concat of the three, in
// order; no zeros, no add.
// CHECK-LABEL: func.func @three_slices
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x8xf32>, %[[K:.*]]: tensor<1x4x8xf32>, %[[V:.*]]: tensor<1x4x8xf32>)
// CHECK-NEXT: %[[C:.*]] = "rlx.concat"(%[[Q]], %[[K]], %[[V]]) {axis = array<i64: 0>{{.*}}} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<3x4x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @three_slices(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %v: tensor<1x4x8xf32>) -> tensor<3x4x8xf32> {
  %z2 = "rlx.zeros"() : () -> tensor<2x4x8xf32>
  %z1 = "rlx.zeros"() : () -> tensor<1x4x8xf32>
  %pv = "rlx.concat"(%z2, %v) {axis = array<i64: 0>} : (tensor<2x4x8xf32>, tensor<1x4x8xf32>) -> tensor<3x4x8xf32>
  %pk = "rlx.concat"(%z1, %k, %z1) {axis = array<i64: 0>} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<3x4x8xf32>
  %s = "rlx.add"(%pv, %pk) : (tensor<3x4x8xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %pq = "rlx.concat"(%q, %z2) {axis = array<i64: 0>} : (tensor<1x4x8xf32>, tensor<2x4x8xf32>) -> tensor<3x4x8xf32>
  %r = "rlx.add"(%s, %pq) : (tensor<3x4x8xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  return %r : tensor<3x4x8xf32>
}

// Slices along the last axis (negative axis attribute), pieces of other
// extents: one concat.
// CHECK-LABEL: func.func @last_axis
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf64>, %[[B:.*]]: tensor<2x5xf64>)
// CHECK-NEXT: %[[C:.*]] = "rlx.concat"(%[[A]], %[[B]]) {axis = array<i64: 1>{{.*}}} : (tensor<2x3xf64>, tensor<2x5xf64>) -> tensor<2x8xf64>
// CHECK-NEXT: return %[[C]]
func.func @last_axis(%a: tensor<2x3xf64>, %b: tensor<2x5xf64>) -> tensor<2x8xf64> {
  %z5 = "rlx.zeros"() : () -> tensor<2x5xf64>
  %z3 = "rlx.zeros"() : () -> tensor<2x3xf64>
  %pa = "rlx.concat"(%a, %z5) {axis = array<i64: -1>} : (tensor<2x3xf64>, tensor<2x5xf64>) -> tensor<2x8xf64>
  %pb = "rlx.concat"(%z3, %b) {axis = array<i64: 1>} : (tensor<2x3xf64>, tensor<2x5xf64>) -> tensor<2x8xf64>
  %r = "rlx.add"(%pa, %pb) : (tensor<2x8xf64>, tensor<2x8xf64>) -> tensor<2x8xf64>
  return %r : tensor<2x8xf64>
}

// Slices that leave a gap: the gap is zeros, a zero operand of its extent
// reused.
// CHECK-LABEL: func.func @gap_reuses_zeros
// CHECK-SAME: (%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<1x4xf32>)
// CHECK-NEXT: %[[Z:.*]] = "rlx.zeros"() : () -> tensor<1x4xf32>
// CHECK-NEXT: %[[C:.*]] = "rlx.concat"(%[[A]], %[[Z]], %[[B]]) {axis = array<i64: 0>{{.*}}} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @gap_reuses_zeros(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %z1 = "rlx.zeros"() : () -> tensor<1x4xf32>
  %z2 = "rlx.zeros"() : () -> tensor<2x4xf32>
  %pa = "rlx.concat"(%a, %z1, %z1) {axis = array<i64: 0>} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %pb = "rlx.concat"(%z2, %b) {axis = array<i64: 0>} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %r = "rlx.add"(%pa, %pb) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// A gap of an extent no zero operand has: a new zeros for it.
// CHECK-LABEL: func.func @gap_new_zeros
// CHECK-SAME: (%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<1x4xf32>)
// CHECK-NEXT: %[[Z:.*]] = "rlx.zeros"() : () -> tensor<2x4xf32>
// CHECK-NEXT: %[[C:.*]] = "rlx.concat"(%[[A]], %[[Z]], %[[B]]) {axis = array<i64: 0>{{.*}}} : (tensor<1x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @gap_new_zeros(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> tensor<4x4xf32> {
  %z3 = "rlx.zeros"() : () -> tensor<3x4xf32>
  %pa = "rlx.concat"(%a, %z3) {axis = array<i64: 0>} : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  %pb = "rlx.concat"(%z3, %b) {axis = array<i64: 0>} : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %r = "rlx.add"(%pa, %pb) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// Pieces cut at other places on each side: the non-zero ones are disjoint.
// CHECK-LABEL: func.func @other_cuts
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<1x3xf32>, %[[C:.*]]: tensor<1x3xf32>)
// CHECK-NEXT: %[[R:.*]] = "rlx.concat"(%[[A]], %[[B]], %[[C]]) {axis = array<i64: 0>{{.*}}} : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @other_cuts(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %c: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %z1 = "rlx.zeros"() : () -> tensor<1x3xf32>
  %z2 = "rlx.zeros"() : () -> tensor<2x3xf32>
  %pa = "rlx.concat"(%a, %z1, %c) {axis = array<i64: 0>} : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %pb = "rlx.concat"(%z1, %z1, %b, %z1) {axis = array<i64: 0>} : (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %r = "rlx.add"(%pa, %pb) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// --- must not fire ------------------------------------------------------------

// Non-zero pieces overlap: a real sum stays.
// CHECK-LABEL: func.func @overlap
// CHECK: "rlx.concat"
// CHECK: "rlx.concat"
// CHECK: "rlx.add"
func.func @overlap(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %z = "rlx.zeros"() : () -> tensor<1x4xf32>
  %pa = "rlx.concat"(%a, %z) {axis = array<i64: 0>} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %pb = "rlx.concat"(%z, %b) {axis = array<i64: 0>} : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %r = "rlx.add"(%pa, %pb) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// Concats along different axes.
// CHECK-LABEL: func.func @other_axes
// CHECK: "rlx.add"
func.func @other_axes(%a: tensor<1x2xf32>, %b: tensor<2x1xf32>) -> tensor<2x2xf32> {
  %z1 = "rlx.zeros"() : () -> tensor<1x2xf32>
  %z2 = "rlx.zeros"() : () -> tensor<2x1xf32>
  %pa = "rlx.concat"(%a, %z1) {axis = array<i64: 0>} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %pb = "rlx.concat"(%z2, %b) {axis = array<i64: 1>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %r = "rlx.add"(%pa, %pb) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// Both padded values used elsewhere and a gap to fill: the rewrite would add
// ops (a concat and a zeros for one add), so the add stays.
// CHECK-LABEL: func.func @would_grow
// CHECK: %[[S:.*]] = "rlx.add"
// CHECK: return {{.*}}%[[S]]
func.func @would_grow(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %z3 = "rlx.zeros"() : () -> tensor<3x4xf32>
  %pa = "rlx.concat"(%a, %z3) {axis = array<i64: 0>} : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  %pb = "rlx.concat"(%z3, %b) {axis = array<i64: 0>} : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %r = "rlx.add"(%pa, %pb) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %pa, %pb, %r : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// An operand broadcast by the add (not the result's type): left alone.
// CHECK-LABEL: func.func @broadcast_operand
// CHECK: "rlx.add"
func.func @broadcast_operand(%a: tensor<1x4xf32>, %b: tensor<1x1xf32>) -> tensor<2x4xf32> {
  %z = "rlx.zeros"() : () -> tensor<1x4xf32>
  %z1 = "rlx.zeros"() : () -> tensor<1x1xf32>
  %pa = "rlx.concat"(%a, %z) {axis = array<i64: 0>} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %pb = "rlx.concat"(%z1, %b) {axis = array<i64: 0>} : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
  %r = "rlx.add"(%pa, %pb) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

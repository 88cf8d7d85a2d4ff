// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// Tuples are flattened depth-first: signatures, calls and returns carry the
// tensors; rlx.tuple, rlx.tuple_get_item and markers on tuples vanish; each
// function keeps its original type in gradir.original_type.

// CHECK-LABEL: func.func @make(
// CHECK-SAME: %[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<f32>)
// CHECK-SAME: gradir.original_type = (tensor<2xf32>, tensor<f32>) -> tuple<tensor<2xf32>, tuple<tensor<2xf32>, tensor<f32>>>
// CHECK-NOT: rlx.tuple
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: return %[[A]], %[[E]], %[[B]] : tensor<2xf32>, tensor<2xf32>, tensor<f32>
func.func @make(%a: tensor<2xf32>, %b: tensor<f32>) -> tuple<tensor<2xf32>, tuple<tensor<2xf32>, tensor<f32>>> {
  %e = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %inner = "rlx.tuple"(%e, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2xf32>, tensor<f32>) -> tuple<tensor<2xf32>, tensor<f32>>
  %t = "rlx.tuple"(%a, %inner) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2xf32>, tuple<tensor<2xf32>, tensor<f32>>) -> tuple<tensor<2xf32>, tuple<tensor<2xf32>, tensor<f32>>>
  return %t : tuple<tensor<2xf32>, tuple<tensor<2xf32>, tensor<f32>>>
}

// -----

// A tuple argument becomes its tensors; tuple_get_item picks one (or a
// nested tuple's tensors).
// CHECK-LABEL: func.func @take_apart(
// CHECK-SAME: %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[Z:.*]]: tensor<f32>) -> (tensor<3xf32>, tensor<f32>)
// CHECK-NOT: tuple_get_item
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: return %[[S]], %[[Z]]
func.func @take_apart(%t: tuple<tensor<3xf32>, tuple<tensor<3xf32>, tensor<f32>>>) -> (tensor<3xf32>, tensor<f32>) {
  %x = "rlx.tuple_get_item"(%t) {index = 0 : i64} : (tuple<tensor<3xf32>, tuple<tensor<3xf32>, tensor<f32>>>) -> tensor<3xf32>
  %inner = "rlx.tuple_get_item"(%t) {index = 1 : i64} : (tuple<tensor<3xf32>, tuple<tensor<3xf32>, tensor<f32>>>) -> tuple<tensor<3xf32>, tensor<f32>>
  %m = "grad.no_grad"(%inner) : (tuple<tensor<3xf32>, tensor<f32>>) -> tuple<tensor<3xf32>, tensor<f32>>
  %y = "rlx.tuple_get_item"(%m) {index = 0 : i64} : (tuple<tensor<3xf32>, tensor<f32>>) -> tensor<3xf32>
  %z = "rlx.tuple_get_item"(%m) {index = 1 : i64} : (tuple<tensor<3xf32>, tensor<f32>>) -> tensor<f32>
  %s = "rlx.add"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %s, %z : tensor<3xf32>, tensor<f32>
}

// -----

// Calls with tuple operands and results are flattened too.
// CHECK-LABEL: func.func private @pair(
// CHECK-SAME: %{{.*}}: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-LABEL: func.func @caller(
// CHECK-SAME: %[[A:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[R:.*]]:2 = call @pair(%[[A]]) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[R]]#0, %[[R]]#1 : tensor<2xf32>, tensor<2xf32>)
func.func private @pair(%a: tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>> {
  %n = "rlx.negative"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %t = "rlx.tuple"(%a, %n) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  return %t : tuple<tensor<2xf32>, tensor<2xf32>>
}
func.func @caller(%a: tensor<2xf32>) -> tensor<2xf32> {
  %t = call @pair(%a) : (tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  %x = "rlx.tuple_get_item"(%t) {index = 0 : i64} : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %y = "rlx.tuple_get_item"(%t) {index = 1 : i64} : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %s = "rlx.multiply"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// Bool constants are stored as bytes as well.
// CHECK-LABEL: func.func @bool_constant(
// CHECK: %[[C:.*]] = arith.constant dense<[1, 0, 1]> : tensor<3xi8>
// CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.*}}, %{{.*}} : tensor<3xi8>, tensor<3xf32>, tensor<3xf32>)
func.func @bool_constant(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %0 = "rlx.where"(%c, %a, %b) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

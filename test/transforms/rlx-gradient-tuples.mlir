// RUN: gradir-opt %s --rlx-gradient | FileCheck %s
// RUN: gradir-opt %s --rlx-gradient | gradir-opt --rlx-verify > /dev/null
// Tuple arguments get tuple gradients, zero-filled where a field receives
// none (as in Relax); tuple results pass through.

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[T:.*]]: tuple<tensor<3xf32>, tensor<2xf32>>, %[[W:.*]]: tensor<3xf32>)
// CHECK-SAME: -> (tensor<f32>, tuple<tensor<3xf32>, tensor<f32>>, tuple<tensor<3xf32>, tensor<2xf32>>, tensor<3xf32>)
// CHECK: %[[Z:.*]] = "rlx.zeros"() : () -> tensor<2xf32>
// CHECK: %[[GT:.*]] = "rlx.tuple"(%{{.*}}, %[[Z]])
// CHECK-SAME: -> tuple<tensor<3xf32>, tensor<2xf32>>
// CHECK: return %{{.*}}, %{{.*}}, %[[GT]], %{{.*}} : tensor<f32>, tuple<tensor<3xf32>, tensor<f32>>, tuple<tensor<3xf32>, tensor<2xf32>>, tensor<3xf32>
func.func @main(%t: tuple<tensor<3xf32>, tensor<2xf32>>, %w: tensor<3xf32>) -> (tensor<f32>, tuple<tensor<3xf32>, tensor<f32>>) {
  %a = "rlx.tuple_get_item"(%t) {index = 0 : i64} : (tuple<tensor<3xf32>, tensor<2xf32>>) -> tensor<3xf32>
  %0 = "rlx.multiply"(%a, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  %p = "rlx.tuple"(%0, %1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3xf32>, tensor<f32>) -> tuple<tensor<3xf32>, tensor<f32>>
  return %1, %p : tensor<f32>, tuple<tensor<3xf32>, tensor<f32>>
}

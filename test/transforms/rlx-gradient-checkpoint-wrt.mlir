// Markers with a wrt subset (Relax's test_tree, require_grads=z): only z's
// gradient is built, so the backward needs lv1 (kept) and lv3 = u * v,
// which it recomputes; lv2 is not needed at all.
// RUN: gradir-opt %s --rlx-gradient='wrt=2 simplify=false' | FileCheck %s
// RUN: gradir-opt %s --rlx-gradient='wrt=2' | FileCheck %s --check-prefix=SIMP
// RUN: gradir-opt %s --rlx-gradient='wrt=3,4 simplify=false' | FileCheck %s --check-prefix=UV

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3x3xf32>, %[[Y:[^:]*]]: tensor<3x3xf32>, %[[Z:[^:]*]]: tensor<3x3xf32>, %[[U:[^:]*]]: tensor<3x3xf32>, %[[V:[^:]*]]: tensor<3x3xf32>) -> (tensor<f32>, tensor<3x3xf32>)
// CHECK: %[[LV1:.*]] = "rlx.multiply"(%[[X]], %[[Y]])
// CHECK: "rlx.sum"
// CHECK: %[[LV3CP:.*]] = "rlx.multiply"(%[[U]], %[[V]]) {grad.recomputed}
// CHECK-NEXT: %[[LV2ADJ:.*]] = "rlx.multiply"(%{{.*}}, %[[LV3CP]])
// CHECK-NOT: grad.recomputed
// CHECK: %[[ZADJ:.*]] = "rlx.multiply"(%[[LV2ADJ]], %[[LV1]])
// CHECK: return %{{.*}}, %[[ZADJ]]

// SIMP-LABEL: func.func @main_adjoint(
// SIMP-COUNT-1: {grad.recomputed}
// SIMP-NOT: grad.recomputed
// SIMP: return

// With u and v only, lv2 = lv1 * z is recomputed (u's and v's gradients
// need it), and lv3 is not needed.
// UV-LABEL: func.func @main_adjoint(
// UV-SAME: %[[X:[^:]*]]: tensor<3x3xf32>, %[[Y:[^:]*]]: tensor<3x3xf32>, %[[Z:[^:]*]]: tensor<3x3xf32>, %{{[^:]*}}: tensor<3x3xf32>, %{{[^:]*}}: tensor<3x3xf32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>)
// UV: %[[LV1:.*]] = "rlx.multiply"(%[[X]], %[[Y]])
// UV: "rlx.multiply"(%[[LV1]], %[[Z]]) {grad.recomputed}
// UV-NOT: grad.recomputed
// UV: return
func.func @main(%x: tensor<3x3xf32>, %y: tensor<3x3xf32>, %z: tensor<3x3xf32>, %u: tensor<3x3xf32>, %v: tensor<3x3xf32>) -> tensor<f32> {
  %lv1 = "rlx.multiply"(%x, %y) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv1_scp = "grad.start_checkpoint"(%lv1) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %z_scp = "grad.start_checkpoint"(%z) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv2 = "rlx.multiply"(%lv1_scp, %z_scp) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv2_ecp = "grad.end_checkpoint"(%lv2) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %u_scp = "grad.start_checkpoint"(%u) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %v_scp = "grad.start_checkpoint"(%v) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv3 = "rlx.multiply"(%u_scp, %v_scp) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv3_ecp = "grad.end_checkpoint"(%lv3) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv4 = "rlx.multiply"(%lv2_ecp, %lv3_ecp) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %gv = "rlx.sum"(%lv4) : (tensor<3x3xf32>) -> tensor<f32>
  return %gv : tensor<f32>
}

// The structures of TVM Relax's checkpointing tests
// (tests/python/relax/test_transform_gradient_checkpoint.py).  Kept: the
// arguments, values wrapped by grad.start_checkpoint, and values all of whose
// operands are kept or close a checkpoint; the backward recomputes the rest
// (clones marked grad.recomputed) right before it first needs them.
// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient | FileCheck %s --check-prefix=SIMP
// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | gradir-opt --split-input-file --rlx-cse | FileCheck %s --check-prefix=CSE
// RUN: gradir-opt %s --split-input-file --rlx-gradient='split=true' | FileCheck %s --check-prefix=SPLIT
// RUN: gradir-opt %s --split-input-file --rlx-gradient | gradir-opt --split-input-file --rlx-verify | FileCheck %s --check-prefix=SIMP

// test_sequential: x and lv2 are wrapped, so kept; lv1 and lv3 are inside
// checkpoints and recomputed from x and lv2 right before their first use;
// lv4 is not needed by the backward.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:.*]]: tensor<3x3xf32>)
// CHECK-NOT: grad.start_checkpoint
// CHECK-NOT: grad.end_checkpoint
// CHECK: %[[C:.*]] = arith.constant dense<3.0
// CHECK-NEXT: %[[LV1:.*]] = "rlx.power"(%[[X]], %[[C]])
// CHECK-NEXT: %[[LV2:.*]] = "rlx.power"(%[[LV1]], %[[C]])
// CHECK-NEXT: %[[LV3:.*]] = "rlx.power"(%[[LV2]], %[[C]])
// CHECK-NEXT: %[[LV4:.*]] = "rlx.power"(%[[LV3]], %[[C]])
// CHECK-NEXT: %[[GV:.*]] = "rlx.sum"(%[[LV4]])
// CHECK-NOT: %[[LV1]]{{[,)]}}
// CHECK-NOT: %[[LV3]]{{[,)]}}
// CHECK: %[[LV3CP:.*]] = "rlx.power"(%[[LV2]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: "rlx.power"(%[[LV3CP]],
// CHECK-NOT: %[[LV1]]{{[,)]}}
// CHECK: "rlx.power"(%[[LV2]], %{{[^)]*}}) :
// CHECK-NOT: %[[LV1]]{{[,)]}}
// CHECK: %[[LV1CP:.*]] = "rlx.power"(%[[X]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: "rlx.power"(%[[LV1CP]],
// CHECK-NOT: {grad.recomputed}
// CHECK: return %[[GV]], %{{.*}} : tensor<f32>, tensor<3x3xf32>

// The simplified gradient recomputes the same values.
// SIMP-LABEL: func.func @main_adjoint(
// SIMP-SAME: %[[X:.*]]: tensor<3x3xf32>)
// SIMP-NOT: grad.
// SIMP: %[[LV1:.*]] = "rlx.power"(%[[X]],
// SIMP-NEXT: %[[LV2:.*]] = "rlx.power"(%[[LV1]],
// SIMP: "rlx.power"(%[[LV2]], %{{.*}}) {grad.recomputed}
// SIMP: "rlx.power"(%[[X]], %{{.*}}) {grad.recomputed}
// SIMP-NOT: {grad.recomputed}
// SIMP: return

// rlx-cse does not merge the recomputed values back into the forward.
// CSE-LABEL: func.func @main_adjoint(
// CSE-COUNT-2: {grad.recomputed}
// CSE-NOT: {grad.recomputed}
// CSE: return

// split=true: the forward saves what is kept (x, the constant, lv2); the
// backward recomputes lv3 and lv1.
// SPLIT-LABEL: func.func @main_fwd(
// SPLIT-SAME: %[[X:.*]]: tensor<3x3xf32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<f32>, tensor<3x3xf32>)
// SPLIT-NOT: grad.
// SPLIT: %[[LV1:.*]] = "rlx.power"(%[[X]],
// SPLIT-NEXT: %[[LV2:.*]] = "rlx.power"(%[[LV1]],
// SPLIT: return %{{.*}}, %[[LV2]], %{{.*}}, %[[X]] :
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-SAME: %[[S0:[^:]*]]: tensor<3x3xf32>, %[[S1:[^:]*]]: tensor<f32>, %[[S2:[^:]*]]: tensor<3x3xf32>, %{{[^:]*}}: tensor<f32>) -> tensor<3x3xf32>
// SPLIT: "rlx.power"(%[[S0]], %[[S1]]) {grad.recomputed}
// SPLIT: "rlx.power"(%[[S2]], %[[S1]]) {grad.recomputed}
// SPLIT: return
func.func @main(%x: tensor<3x3xf32>) -> tensor<f32> {
  %c = arith.constant dense<3.0> : tensor<f32>
  %x_scp = "grad.start_checkpoint"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv1 = "rlx.power"(%x_scp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv1_ecp = "grad.end_checkpoint"(%lv1) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv2 = "rlx.power"(%lv1_ecp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv2_scp = "grad.start_checkpoint"(%lv2) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv3 = "rlx.power"(%lv2_scp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv4 = "rlx.power"(%lv3, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %gv = "rlx.sum"(%lv4) : (tensor<3x3xf32>) -> tensor<f32>
  %gv_ecp = "grad.end_checkpoint"(%gv) : (tensor<f32>) -> tensor<f32>
  return %gv_ecp : tensor<f32>
}

// -----

// test_sequential_consecutive: end_checkpoint then start_checkpoint of the
// same value keeps it (lv2); the same adjoint as test_sequential.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:.*]]: tensor<3x3xf32>)
// CHECK: %[[C:.*]] = arith.constant dense<3.0
// CHECK-NEXT: %[[LV1:.*]] = "rlx.power"(%[[X]], %[[C]])
// CHECK-NEXT: %[[LV2:.*]] = "rlx.power"(%[[LV1]], %[[C]])
// CHECK: %[[LV3CP:.*]] = "rlx.power"(%[[LV2]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: "rlx.power"(%[[LV3CP]],
// CHECK: %[[LV1CP:.*]] = "rlx.power"(%[[X]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: "rlx.power"(%[[LV1CP]],
// CHECK-NOT: {grad.recomputed}
// CHECK: return

// SIMP-LABEL: func.func @main_adjoint(
// SIMP-COUNT-2: {grad.recomputed}
// SIMP-NOT: {grad.recomputed}
// SIMP: return

// CSE-LABEL: func.func @main_adjoint(
// CSE-COUNT-2: {grad.recomputed}
// CSE-NOT: {grad.recomputed}
// CSE: return

// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-COUNT-2: {grad.recomputed}
// SPLIT-NOT: {grad.recomputed}
// SPLIT: return
func.func @main(%x: tensor<3x3xf32>) -> tensor<f32> {
  %c = arith.constant dense<3.0> : tensor<f32>
  %x_scp = "grad.start_checkpoint"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv1 = "rlx.power"(%x_scp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv2 = "rlx.power"(%lv1, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv2_ecp = "grad.end_checkpoint"(%lv2) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv2_scp = "grad.start_checkpoint"(%lv2_ecp) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv3 = "rlx.power"(%lv2_scp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv4 = "rlx.power"(%lv3, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv4_ecp = "grad.end_checkpoint"(%lv4) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %gv = "rlx.sum"(%lv4_ecp) : (tensor<3x3xf32>) -> tensor<f32>
  return %gv : tensor<f32>
}

// -----

// test_tuple: lv1 is inside the checkpoint, so are the tuple and the item
// taken from it; the backward rebuilds the chain tuple -> item.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:.*]]: tensor<3x3xf32>)
// CHECK: %[[LV1:.*]] = "rlx.power"(%[[X]], %[[C:[^)]*]])
// CHECK-NEXT: %[[T:.*]] = "rlx.tuple"(%[[X]], %[[LV1]])
// CHECK-NEXT: %[[LV4:.*]] = "rlx.tuple_get_item"(%[[T]])
// CHECK-NEXT: "rlx.power"(%[[LV4]], %[[C]])
// CHECK: %[[LV1CP:.*]] = "rlx.power"(%[[X]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: %[[TCP:.*]] = "rlx.tuple"(%[[X]], %[[LV1CP]]) {grad.recomputed
// CHECK-NEXT: %[[LV4CP:.*]] = "rlx.tuple_get_item"(%[[TCP]]) {grad.recomputed
// CHECK-NEXT: "rlx.power"(%[[LV4CP]],
// CHECK-NOT: {grad.recomputed
// CHECK: return

// SIMP-LABEL: func.func @main_adjoint(
// SIMP-COUNT-3: grad.recomputed
// SIMP-NOT: grad.recomputed
// SIMP: return

// CSE-LABEL: func.func @main_adjoint(
// CSE-COUNT-3: grad.recomputed
// CSE-NOT: grad.recomputed
// CSE: return

// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-COUNT-3: grad.recomputed
// SPLIT-NOT: grad.recomputed
// SPLIT: return
func.func @main(%x: tensor<3x3xf32>) -> tensor<f32> {
  %c = arith.constant dense<3.0> : tensor<f32>
  %x_scp = "grad.start_checkpoint"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv1 = "rlx.power"(%x_scp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv2 = "rlx.tuple"(%x, %lv1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x3xf32>, tensor<3x3xf32>) -> tuple<tensor<3x3xf32>, tensor<3x3xf32>>
  %lv4 = "rlx.tuple_get_item"(%lv2) {index = 0 : i64} : (tuple<tensor<3x3xf32>, tensor<3x3xf32>>) -> tensor<3x3xf32>
  %lv4_1 = "rlx.power"(%lv4, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv4_ecp = "grad.end_checkpoint"(%lv4_1) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %gv = "rlx.sum"(%lv4_ecp) : (tensor<3x3xf32>) -> tensor<f32>
  return %gv : tensor<f32>
}

// -----

// test_tree: lv1 (all operands are arguments) and lv4 (both operands close
// checkpoints) are kept; lv2 and lv3 are recomputed, from lv1 and z, u, v.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3x3xf32>, %[[Y:[^:]*]]: tensor<3x3xf32>, %[[Z:[^:]*]]: tensor<3x3xf32>, %[[U:[^:]*]]: tensor<3x3xf32>, %[[V:[^:]*]]: tensor<3x3xf32>)
// CHECK: %[[LV1:.*]] = "rlx.multiply"(%[[X]], %[[Y]])
// CHECK: "rlx.sum"
// CHECK: %[[LV3CP:.*]] = "rlx.multiply"(%[[U]], %[[V]]) {grad.recomputed}
// CHECK-NEXT: "rlx.multiply"(%{{.*}}, %[[LV3CP]])
// CHECK: %[[LV2CP:.*]] = "rlx.multiply"(%[[LV1]], %[[Z]]) {grad.recomputed}
// CHECK-NEXT: "rlx.multiply"(%{{.*}}, %[[LV2CP]])
// CHECK-NOT: {grad.recomputed}
// CHECK: "rlx.multiply"(%{{.*}}, %[[LV1]])
// CHECK: return

// SIMP-LABEL: func.func @main_adjoint(
// SIMP-COUNT-2: {grad.recomputed}
// SIMP-NOT: {grad.recomputed}
// SIMP: return

// CSE-LABEL: func.func @main_adjoint(
// CSE-COUNT-2: {grad.recomputed}
// CSE-NOT: {grad.recomputed}
// CSE: return

// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-COUNT-2: {grad.recomputed}
// SPLIT-NOT: {grad.recomputed}
// SPLIT: return
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

// -----

// test_dag: the checkpoints' inputs (x, lv4, lv9) and the joins after them
// are kept; each checkpoint's two multiplications are recomputed.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:.*]]: tensor<3x3xf32>)
// CHECK: %[[C:.*]] = arith.constant dense<2.0
// CHECK-NEXT: %[[LV1:.*]] = "rlx.multiply"(%[[X]], %[[C]])
// CHECK-NEXT: %[[LV2:.*]] = "rlx.multiply"(%[[LV1]], %[[C]])
// CHECK-NEXT: %[[LV4:.*]] = "rlx.multiply"(%[[X]], %[[LV2]])
// CHECK-NEXT: %[[LV6:.*]] = "rlx.multiply"(%[[LV4]], %[[C]])
// CHECK-NEXT: %[[LV7:.*]] = "rlx.multiply"(%[[LV6]], %[[C]])
// CHECK-NEXT: %[[LV9:.*]] = "rlx.multiply"(%[[LV4]], %[[LV7]])
// CHECK: %[[A:.*]] = "rlx.multiply"(%[[LV9]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: "rlx.multiply"(%[[A]], %[[C]]) {grad.recomputed}
// CHECK: %[[B:.*]] = "rlx.multiply"(%[[LV4]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: "rlx.multiply"(%[[B]], %[[C]]) {grad.recomputed}
// CHECK: %[[D:.*]] = "rlx.multiply"(%[[X]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: "rlx.multiply"(%[[D]], %[[C]]) {grad.recomputed}
// CHECK-NOT: {grad.recomputed}
// CHECK: return

// SIMP-LABEL: func.func @main_adjoint(
// SIMP-COUNT-6: {grad.recomputed}
// SIMP-NOT: {grad.recomputed}
// SIMP: return

// CSE-LABEL: func.func @main_adjoint(
// CSE-COUNT-6: {grad.recomputed}
// CSE-NOT: {grad.recomputed}
// CSE: return

// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-COUNT-6: {grad.recomputed}
// SPLIT-NOT: {grad.recomputed}
// SPLIT: return
func.func @main(%x: tensor<3x3xf32>) -> tensor<f32> {
  %c = arith.constant dense<2.0> : tensor<f32>
  %lv = "grad.start_checkpoint"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv1 = "rlx.multiply"(%lv, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv2 = "rlx.multiply"(%lv1, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv3 = "grad.end_checkpoint"(%lv2) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv4 = "rlx.multiply"(%x, %lv3) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv5 = "grad.start_checkpoint"(%lv4) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv6 = "rlx.multiply"(%lv5, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv7 = "rlx.multiply"(%lv6, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv8 = "grad.end_checkpoint"(%lv7) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv9 = "rlx.multiply"(%lv4, %lv8) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv10 = "grad.start_checkpoint"(%lv9) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv11 = "rlx.multiply"(%lv10, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv12 = "rlx.multiply"(%lv11, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv13 = "grad.end_checkpoint"(%lv12) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %lv14 = "rlx.multiply"(%lv9, %lv13) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %gv = "rlx.sum"(%lv14) : (tensor<3x3xf32>) -> tensor<f32>
  return %gv : tensor<f32>
}

// -----

// Without markers everything is kept: no recomputation.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-NOT: grad.recomputed
// CHECK: return
// SIMP-LABEL: func.func @main_adjoint(
// SIMP-NOT: grad.recomputed
// SIMP: return
// CSE-LABEL: func.func @main_adjoint(
// CSE-NOT: grad.recomputed
// CSE: return
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-NOT: grad.recomputed
// SPLIT: return
func.func @main(%x: tensor<3x3xf32>) -> tensor<f32> {
  %c = arith.constant dense<3.0> : tensor<f32>
  %lv1 = "rlx.power"(%x, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv2 = "rlx.tanh"(%lv1) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %gv = "rlx.sum"(%lv2) : (tensor<3x3xf32>) -> tensor<f32>
  return %gv : tensor<f32>
}

// -----

// An empty checkpoint (end right after start) keeps its value, and the
// values computed from it.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-NOT: grad.
// CHECK: return
// SIMP-LABEL: func.func @main_adjoint(
// SIMP-NOT: grad.
// SIMP: return
// CSE-LABEL: func.func @main_adjoint(
// CSE-NOT: grad.
// CSE: return
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-NOT: grad.
// SPLIT: return
func.func @main(%x: tensor<3x3xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %s = "grad.start_checkpoint"(%0) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %e = "grad.end_checkpoint"(%s) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = "rlx.tanh"(%e) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = "rlx.multiply"(%1, %0) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %3 = "rlx.sum"(%2) : (tensor<3x3xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}

// grad.save / grad.recompute pins on forward ops override the markers and
// remat=auto; the generated functions do not carry them (@main keeps them).
// RUN: gradir-opt %s --split-input-file --rlx-gradient | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient='remat=auto budget=0.8' 2>/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: gradir-opt %s --split-input-file --rlx-gradient='remat=auto budget=0.3' 2>/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: gradir-opt %s --split-input-file --rlx-gradient='split=true' | FileCheck %s --check-prefix=SPLIT

// Without markers everything is kept but the pinned h5, recomputed from h4.
// CHECK-LABEL: func.func @main(
// CHECK: {grad.save}
// CHECK: {grad.recompute}
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:[^:]*]]: tensor<64xf32>)
// CHECK-NOT: grad.save
// CHECK: %[[H1:.*]] = "rlx.tanh"(%[[X]]) :
// CHECK-NEXT: %[[H2:.*]] = "rlx.tanh"(%[[H1]]) :
// CHECK-NEXT: %[[H3:.*]] = "rlx.tanh"(%[[H2]]) :
// CHECK-NEXT: %[[H4:.*]] = "rlx.tanh"(%[[H3]]) :
// CHECK-NEXT: %[[H5:.*]] = "rlx.tanh"(%[[H4]]) :
// CHECK-NOT: grad.recompute}
// CHECK: %[[R5:.*]] = "rlx.tanh"(%[[H4]]) {grad.recomputed}
// CHECK-NEXT: "rlx.square"(%[[R5]])
// CHECK-NOT: grad.
// CHECK: return

// remat=auto keeps the pinned h1 (it would recompute h1 and h2 otherwise)
// and recomputes h5; at 30% it still cannot drop h1.
// AUTO-LABEL: func.func @main_adjoint(
// AUTO-SAME: %[[X:[^:]*]]: tensor<64xf32>)
// AUTO: %[[H1:.*]] = "rlx.tanh"(%[[X]]) :
// AUTO-NEXT: %[[H2:.*]] = "rlx.tanh"(%[[H1]]) :
// AUTO-NEXT: %[[H3:.*]] = "rlx.tanh"(%[[H2]]) :
// AUTO-NEXT: %[[H4:.*]] = "rlx.tanh"(%[[H3]]) :
// AUTO: "rlx.tanh"(%[[H4]]) {grad.recomputed}
// AUTO-NOT: "rlx.tanh"(%[[X]]) {grad.recomputed}
// AUTO: "rlx.tanh"(%[[H1]]) {grad.recomputed}
// AUTO-NOT: "rlx.tanh"(%[[X]]) {grad.recomputed}
// AUTO: return

// SPLIT-LABEL: func.func @main_fwd(
// SPLIT-NOT: grad.
// SPLIT: return
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-COUNT-1: {grad.recomputed}
// SPLIT-NOT: grad.
// SPLIT: return
func.func @main(%x: tensor<64xf32>) -> tensor<f32> {
  %h1 = "rlx.tanh"(%x) {grad.save} : (tensor<64xf32>) -> tensor<64xf32>
  %h2 = "rlx.tanh"(%h1) : (tensor<64xf32>) -> tensor<64xf32>
  %h3 = "rlx.tanh"(%h2) : (tensor<64xf32>) -> tensor<64xf32>
  %h4 = "rlx.tanh"(%h3) : (tensor<64xf32>) -> tensor<64xf32>
  %h5 = "rlx.tanh"(%h4) {grad.recompute} : (tensor<64xf32>) -> tensor<64xf32>
  %h6 = "rlx.tanh"(%h5) : (tensor<64xf32>) -> tensor<64xf32>
  %l = "rlx.sum"(%h6) : (tensor<64xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// With markers: h2 is inside the checkpoint but pinned, so kept, and h3
// (all operands kept) with it; h1 is recomputed from x; h5 is pinned and
// h6, computed from it, is recomputed too.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:[^:]*]]: tensor<64xf32>)
// CHECK: %[[H1:.*]] = "rlx.tanh"(%[[X]]) :
// CHECK-NEXT: %[[H2:.*]] = "rlx.tanh"(%[[H1]]) :
// CHECK-NEXT: %[[H3:.*]] = "rlx.tanh"(%[[H2]]) :
// CHECK-NEXT: %[[H4:.*]] = "rlx.tanh"(%[[H3]]) :
// CHECK: %[[R5:.*]] = "rlx.tanh"(%[[H4]]) {grad.recomputed}
// CHECK-NEXT: "rlx.tanh"(%[[R5]]) {grad.recomputed}
// CHECK: "rlx.tanh"(%[[X]]) {grad.recomputed}
// CHECK-NOT: grad.
// CHECK: return

// AUTO-LABEL: func.func @main_adjoint(
// AUTO-SAME: %[[X:[^:]*]]: tensor<64xf32>)
// AUTO: %[[H1:.*]] = "rlx.tanh"(%[[X]]) :
// AUTO-NEXT: %[[H2:.*]] = "rlx.tanh"(%[[H1]]) :
// AUTO-NEXT: %[[H3:.*]] = "rlx.tanh"(%[[H2]]) :
// AUTO-NEXT: %[[H4:.*]] = "rlx.tanh"(%[[H3]]) :
// AUTO: "rlx.tanh"(%[[H4]]) {grad.recomputed}
// AUTO-NOT: "rlx.tanh"(%[[H1]]) {grad.recomputed}
// AUTO: return

// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-COUNT-3: {grad.recomputed}
// SPLIT-NOT: grad.
// SPLIT: return
func.func @main(%x: tensor<64xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %h1 = "rlx.tanh"(%s) : (tensor<64xf32>) -> tensor<64xf32>
  %h2 = "rlx.tanh"(%h1) {grad.save} : (tensor<64xf32>) -> tensor<64xf32>
  %h3 = "rlx.tanh"(%h2) : (tensor<64xf32>) -> tensor<64xf32>
  %e = "grad.end_checkpoint"(%h3) : (tensor<64xf32>) -> tensor<64xf32>
  %h4 = "rlx.tanh"(%e) : (tensor<64xf32>) -> tensor<64xf32>
  %h5 = "rlx.tanh"(%h4) {grad.recompute} : (tensor<64xf32>) -> tensor<64xf32>
  %h6 = "rlx.tanh"(%h5) : (tensor<64xf32>) -> tensor<64xf32>
  %l = "rlx.sum"(%h6) : (tensor<64xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

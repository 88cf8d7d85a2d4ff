// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient | FileCheck %s
// Markers TVM Relax's Gradient accepts though they look wrong (nested starts, an end
// that closes nothing) keep Relax's meaning, with a warning (these were errors before
// issue 12).  Relax: the operand of a start is kept, the result of an end is kept.

// Nested: start of a start.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-warning @+1 {{nested 'grad.start_checkpoint': its operand already starts a checkpoint (kept, as in Relax)}}
  %t = "grad.start_checkpoint"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.exp"(%t) : (tensor<3xf32>) -> tensor<3xf32>
  %e = "grad.end_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// CHECK-LABEL: func.func @main_adjoint
// CHECK: return

// -----

// Nested: a checkpoint started inside one that is still open.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.exp"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-warning-re @+1 {{nested 'grad.start_checkpoint': its operand is inside the checkpoint started at {{.*}}:24:8; it is kept, as in Relax}}
  %t = "grad.start_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sin"(%t) : (tensor<3xf32>) -> tensor<3xf32>
  %e = "grad.end_checkpoint"(%1) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// CHECK-LABEL: func.func @main_adjoint
// CHECK: return

// -----

// An end without a start.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-warning @+1 {{'grad.end_checkpoint' closes no checkpoint: its operand does not depend on a 'grad.start_checkpoint' result}}
  %e = "grad.end_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// CHECK-LABEL: func.func @main_adjoint
// CHECK: return

// -----

// An end of an end closes nothing.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.exp"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  %e = "grad.end_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-warning @+1 {{'grad.end_checkpoint' closes no checkpoint}}
  %f = "grad.end_checkpoint"(%e) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%f) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// CHECK-LABEL: func.func @main_adjoint
// CHECK: return

// -----

// Markers inside a callee are checked once inlined into the caller.
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-warning @+1 {{'grad.end_checkpoint' closes no checkpoint}}
  %e = "grad.end_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %e : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @f(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.sum"(%1) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// CHECK-LABEL: func.func @main_adjoint
// CHECK: return

// -----

// A start on a constant (Relax accepts one on a Var bound to a constant; it
// was refused): the constant is kept, what the checkpoint computes from it
// is recomputed in the backward.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c = arith.constant dense<2.0> : tensor<3xf32>
  %s = "grad.start_checkpoint"(%c) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.multiply"(%x, %s) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.exp"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %e = "grad.end_checkpoint"(%1) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:.*]]: tensor<3xf32>)
// CHECK: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK: "rlx.multiply"(%[[X]], %[[C]]) :
// CHECK: %[[M:.*]] = "rlx.multiply"(%[[X]], %[[C]]) {grad.recomputed}
// CHECK-NEXT: %[[E:.*]] = "rlx.exp"(%[[M]]) {grad.recomputed}
// CHECK-NEXT: %[[G:.*]] = "rlx.multiply"(%[[E]], %[[C]])
// CHECK-NEXT: return %{{.*}}, %[[G]] : tensor<f32>, tensor<3xf32>

// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient='remat=auto budget=0.5'
// Malformed checkpoint markers and pins are refused at the offending op.

// A marker on a constant: Relax's markers take a variable, and a constant
// is not a value the function computes.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c = arith.constant dense<2.0> : tensor<3xf32>
  // expected-error @+1 {{'grad.start_checkpoint' must mark an argument or a value the function computes, not a constant}}
  %s = "grad.start_checkpoint"(%c) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.multiply"(%x, %s) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Nested: start of a start.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{nested 'grad.start_checkpoint': its operand already starts a checkpoint}}
  %t = "grad.start_checkpoint"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.exp"(%t) : (tensor<3xf32>) -> tensor<3xf32>
  %e = "grad.end_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Nested: a checkpoint started inside one that is still open.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.exp"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error-re @+1 {{nested 'grad.start_checkpoint': its operand is inside the checkpoint started at {{.*}}:33:8; close that one with 'grad.end_checkpoint' first}}
  %t = "grad.start_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sin"(%t) : (tensor<3xf32>) -> tensor<3xf32>
  %e = "grad.end_checkpoint"(%1) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// An end without a start.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'grad.end_checkpoint' closes no checkpoint: its operand does not depend on a 'grad.start_checkpoint' result}}
  %e = "grad.end_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// An end of an end closes nothing.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.exp"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  %e = "grad.end_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'grad.end_checkpoint' closes no checkpoint}}
  %f = "grad.end_checkpoint"(%e) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%f) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Markers inside a callee are checked once inlined into the caller.
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'grad.end_checkpoint' closes no checkpoint}}
  %e = "grad.end_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %e : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @f(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.sum"(%1) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Pins: unit attributes, one per op, on ops that compute values.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'grad.save' must be a unit attribute (write {grad.save}), not true}}
  %0 = "rlx.exp"(%x) {grad.save = true} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'rlx.exp' has both 'grad.save' and 'grad.recompute'}}
  %0 = "rlx.exp"(%x) {grad.save, grad.recompute} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = "rlx.exp"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'grad.save' pins go on ops that compute values, not on 'grad.end_checkpoint'}}
  %e = "grad.end_checkpoint"(%0) {grad.save} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

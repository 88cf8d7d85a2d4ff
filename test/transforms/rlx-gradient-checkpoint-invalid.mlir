// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient='remat=auto budget=0.5'
// Malformed checkpoint markers and pins are refused at the offending op.
// Markers Relax's Gradient accepts: rlx-gradient-checkpoint-relax.mlir.

// (A marker on a constant is accepted, as in Relax: rlx-gradient-checkpoint-relax.mlir.)

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

// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(rlx-gradient{func=main mode=vjp})'
// rlx-gradient refuses reverse mode through rlx.max_pool2d_indices_backward
// (its adjoint w.r.t. output_grad gathers at the saved arg-max, which no rlx
// op expresses), at its location; forward mode has a rule.

func.func @main(%g: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi32>) -> tensor<f32> {
  // expected-error @+1 {{no gradient rule for 'rlx.max_pool2d_indices_backward' on the path to the target}}
  %0 = "rlx.max_pool2d_indices_backward"(%g, %i) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>) -> tensor<1x1x4x4xf32>
  %1 = "rlx.sum"(%0) : (tensor<1x1x4x4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Its output gradient depending on the differentiated argument (a second
// derivative written by hand through the saved positions).
func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<f32> {
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>)
  // expected-error @+1 {{no gradient rule for 'rlx.max_pool2d_indices_backward' on the path to the target}}
  %dx = "rlx.max_pool2d_indices_backward"(%y#0, %y#1) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>) -> tensor<1x1x4x4xf32>
  %s = "rlx.sum"(%dx) : (tensor<1x1x4x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

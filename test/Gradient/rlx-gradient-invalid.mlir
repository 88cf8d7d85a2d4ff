// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(rlx-gradient{func=main})'
// Refusals of rlx-gradient, each at the offending location.

// expected-error @+1 {{rlx-gradient: no function named '@main' in the module}}
module {
  func.func @other(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{rlx-gradient: the target (result 0) must be a 0-d tensor, not tensor<3xf32>}}
  return %0 : tensor<3xf32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<i32> {
  %0 = arith.constant dense<1> : tensor<i32>
  // expected-error @+1 {{must be a floating-point 0-d tensor, not tensor<i32>}}
  return %0 : tensor<i32>
}

// -----

// expected-error @+1 {{'@main_adjoint' already exists}}
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @main_adjoint(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Control flow is refused.
func.func @main(%x: tensor<f32>, %c: i1) -> tensor<f32> {
  // expected-error @+1 {{control flow is not supported: 'scf.if' has regions}}
  %0 = scf.if %c -> tensor<f32> {
    scf.yield %x : tensor<f32>
  } else {
    scf.yield %x : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// expected-error @+1 {{control flow is not supported: the function must have exactly one block}}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  cf.br ^bb1
^bb1:
  return %x : tensor<f32>
}

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

// Control flow other than scf.for/if/while is refused (see rlx-gradient-scf-invalid.mlir).
func.func @main(%x: tensor<f32>, %c: i1) -> tensor<f32> {
  // expected-error @+1 {{'scf.execute_region' is not supported by rlx-gradient (control flow must be scf.for, scf.if or scf.while)}}
  %0 = scf.execute_region -> tensor<f32> {
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

// -----

// An op without a VJP rule on the path to the target is named at its location
// (max_pool2d_backward has none: its derivative is a gather at the argmax).
func.func @main(%g: tensor<1x1x2x2xf32>, %x: tensor<1x1x4x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{no gradient rule for 'rlx.max_pool2d_backward' on the path to the target}}
  %0 = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %1 = "rlx.sum"(%0) : (tensor<1x1x4x4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// The same op off the path (its operands do not depend on a wrt argument) is fine.
func.func @main(%g: tensor<1x1x2x2xf32>, %x: tensor<1x1x4x4xf32>, %w: tensor<f32>) -> tensor<f32> {
  %0 = "grad.no_grad"(%g) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %1 = "grad.no_grad"(%x) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %2 = "rlx.max_pool2d_backward"(%0, %1) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %3 = "rlx.sum"(%2) : (tensor<1x1x4x4xf32>) -> tensor<f32>
  %4 = "rlx.multiply"(%3, %w) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// A call to a function without a body needs a grad.vjp.
func.func private @external(tensor<3xf32>) -> tensor<f32>
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{cannot differentiate through '@external': it has no body (give the call a grad.vjp function)}}
  %0 = func.call @external(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A grad.vjp function of the wrong type.
func.func private @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_vjp(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{grad.vjp function '@f_vjp' must have type (tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>)}}
  %0 = func.call @f(%x) {grad.vjp = @f_vjp} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{grad.vjp names '@missing', which does not exist}}
  %0 = func.call @main2(%x) {grad.vjp = @missing} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @main2(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Recursion cannot be differentiated through.
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{recursive call to '@main' is not supported}}
  %0 = func.call @main(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// grad.vjp names a function with a symbol reference (a string was an internal error).
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{grad.vjp must name a function (grad.vjp = @f_vjp), got "f"}}
  %0 = func.call @f(%x) {grad.vjp = "f"} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient='mode=jvp'
// Refusals of forward mode and its compositions, each at the offending
// location.

func.func private @opaque(tensor<3xf32>) -> tensor<3xf32>
func.func private @opaque_vjp(%x: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<3xf32> {
  return %g : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{forward mode cannot differentiate through '@opaque': it has no body (give the call a grad.jvp function; a grad.vjp function serves reverse mode only)}}
  %0 = func.call @opaque(%x) {grad.vjp = @opaque_vjp} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// expected-error @+1 {{rlx-gradient: '@main_jvp' already exists}}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @main_jvp(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func private @f_jvp(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{grad.jvp function '@f_jvp' must have type (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>), it has (tensor<3xf32>) -> tensor<3xf32>}}
  %0 = func.call @f(%x) {grad.jvp = @f_jvp} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{grad.jvp names '@nope', which does not exist}}
  %0 = func.call @f(%x) {grad.jvp = @nope} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

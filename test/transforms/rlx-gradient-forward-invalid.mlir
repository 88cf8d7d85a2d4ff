// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient='mode=jvp'
// RUN: not gradir-opt %s --split-input-file --rlx-gradient='mode=jacobian jacobian-mode=reverse' 2>&1 | FileCheck %s --check-prefix=REV
// RUN: not gradir-opt %s --split-input-file --rlx-gradient='mode=hessian' 2>&1 | FileCheck %s --check-prefix=HESS
// Refusals of forward mode and its compositions, each at the offending
// location (the first RUN line checks the mode=jvp ones in place; the
// others check the messages of the other modes on the same input).
// REV-NOT: Traceback
// HESS-NOT: Traceback

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

// A while loop's reverse sweep keeps a stack of run-time size, which
// forward mode does not carry: reverse rows and Hessians refuse it (mode=jvp
// and mode=hvp take it).
// REV: rlx-gradient-forward-invalid.mlir:[[@LINE+11]]:{{[0-9]+}}: error: rlx-gradient: jacobian-mode=reverse does not support scf.while
// HESS: rlx-gradient-forward-invalid.mlir:[[@LINE+10]]:{{[0-9]+}}: error: rlx-gradient: mode=hessian does not support scf.while
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %lim = arith.constant dense<4.0> : tensor<f32>
  %s0 = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  %abs = "rlx.abs"(%s0) : (tensor<f32>) -> tensor<f32>
  %start = "rlx.add"(%abs, %lim) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %two = arith.constant dense<0.5> : tensor<f32>
  %r = scf.while (%v = %start) : (tensor<f32>) -> tensor<f32> {
    %big = "rlx.greater"(%v, %lim) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %big[] : tensor<i1>
    scf.condition(%c) %v : tensor<f32>
  } do {
  ^bb0(%w: tensor<f32>):
    %h = "rlx.multiply"(%w, %two) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %h : tensor<f32>
  }
  return %r : tensor<f32>
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

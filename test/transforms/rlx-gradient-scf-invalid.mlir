// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient
// Refusals of rlx-gradient on control flow, each at the offending op.

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'scf.parallel' is not supported by rlx-gradient (control flow must be scf.for, scf.if or scf.while)}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.reduce
  }
  %s = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'scf.execute_region' is not supported by rlx-gradient}}
  %r = scf.execute_region -> tensor<3xf32> {
    scf.yield %x : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'tensor.generate' has regions and is not scf control flow: rlx-gradient differentiates only scf.for, scf.if and scf.while}}
  %g = tensor.generate {
  ^bb0(%i: index):
    %f = arith.constant 1.0 : f32
    tensor.yield %f : f32
  } : tensor<3xf32>
  %m = "rlx.multiply"(%x, %g) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = "rlx.sum"(%m) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{loop-carried value #0 changes type: enters as tensor<3xf32>, scf.condition passes tensor<?xf32>}}
  %r:2 = scf.while (%h = %x, %i = %c0) : (tensor<3xf32>, index) -> (tensor<?xf32>, index) {
    %c4 = arith.constant 4 : index
    %ci = arith.cmpi slt, %i, %c4 : index
    %d = tensor.cast %h : tensor<3xf32> to tensor<?xf32>
    scf.condition(%ci) %d, %i : tensor<?xf32>, index
  } do {
  ^bb0(%h: tensor<?xf32>, %i: index):
    %c1 = arith.constant 1 : index
    %in = arith.addi %i, %c1 : index
    %e = tensor.cast %h : tensor<?xf32> to tensor<3xf32>
    scf.yield %e, %in : tensor<3xf32>, index
  }
  %e = tensor.cast %r#0 : tensor<?xf32> to tensor<3xf32>
  %s = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %t = "rlx.tuple"(%x, %x) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3xf32>, tensor<3xf32>) -> tuple<tensor<3xf32>, tensor<3xf32>>
  // expected-error @+1 {{loop-carried value #0 is a tuple (tuple<tensor<3xf32>, tensor<3xf32>>); carry its tensors separately}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %t) -> (tuple<tensor<3xf32>, tensor<3xf32>>) {
    scf.yield %h : tuple<tensor<3xf32>, tensor<3xf32>>
  }
  %a = "rlx.tuple_get_item"(%r) {index = 0 : i64} : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %s = "rlx.sum"(%a) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tensor.extract' on floating-point elements is not supported by rlx-gradient}}
  %e = tensor.extract %x[%c0] : tensor<3xf32>
  %s = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>, %n: tensor<i64>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n64 = tensor.extract %n[] : tensor<i64>
  %ub = arith.index_cast %n64 : i64 to index
  // expected-error @+1 {{grad.checkpoint = "sqrt" needs a static trip count (constant bounds); give an integer period instead}}
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%h = %x) -> (tensor<3xf32>) {
    %t = "rlx.tanh"(%h) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  } {grad.checkpoint = "sqrt"}
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{grad.checkpoint must be "all", "sqrt", "revolve" or a positive integer period, got "often"}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<3xf32>) {
    %t = "rlx.tanh"(%h) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  } {grad.checkpoint = "often"}
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A tensor of run-time size carried by a loop (the stack of a while loop's
// adjoint, differentiated in reverse again).
func.func @main(%x: tensor<3xf32>, %n: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%n) : tensor<?x3xf32>
  // expected-error @+1 {{loop-carried value #1 has a dynamic shape (tensor<?x3xf32>); reverse mode needs static shapes (a while loop's adjoint is differentiated forward: mode=jvp, hvp or hessian)}}
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x, %s = %e) -> (tensor<3xf32>, tensor<?x3xf32>) {
    %y = "rlx.sin"(%h) : (tensor<3xf32>) -> tensor<3xf32>
    %s2 = tensor.insert_slice %y into %s[%i, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<?x3xf32>
    scf.yield %y, %s2 : tensor<3xf32>, tensor<?x3xf32>
  }
  %l = "rlx.sum"(%r#0) : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

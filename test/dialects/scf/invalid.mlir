// Errors reported by rlx-verify on the scf control flow around rlx ops:
// a constant scf.for step must be positive (MLIR accepts any; the interpreter
// refused a step <= 0 and the compiled code ran no trip, or died of SIGSEGV in
// the adjoint of a loop of step 0).  A step computed at run time is checked
// when the code runs: test/conversion/cpu/numeric_loop_steps.py.
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-verify
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --no-rlx-verify --rlx-verify
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --no-rlx-verify --rlx-gradient
// RUN: not gradir-run %s --split-input-file --rlx-gradient --entry main_adjoint --random-inputs 1 2>&1 | FileCheck %s --check-prefix=TOOL
// RUN: not gradir-run %s --split-input-file --entry main --random-inputs 1 2>&1 | FileCheck %s --check-prefix=TOOL
// RUN: not gradir-run %s --split-input-file --entry main --interpret --random-inputs 1 2>&1 | FileCheck %s --check-prefix=TOOL

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'scf.for' op step must be positive, got 0}}
  %r = scf.for %i = %c0 to %c4 step %c0 iter_args(%h = %x) -> (tensor<3xf32>) {
    %m = "rlx.multiply"(%h, %h) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// TOOL: invalid.mlir:[[# @LINE - 7]]:8: error: 'scf.for' op step must be positive, got 0

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %cm = arith.constant -2 : index
  // expected-error @+1 {{'scf.for' op step must be positive, got -2}}
  %r = scf.for %i = %c4 to %c0 step %cm iter_args(%h = %x) -> (tensor<3xf32>) {
    %m = "rlx.sin"(%h) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// TOOL: invalid.mlir:[[# @LINE - 7]]:8: error: 'scf.for' op step must be positive, got -2

// -----

// Nested in a loop, in a branch and in a callee; an i64 loop.
func.func private @body(%h: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0 : i64
  %c3 = arith.constant 3 : i64
  %cm = arith.constant -1 : i64
  // expected-error @+1 {{'scf.for' op step must be positive, got -1}}
  %r = scf.for %i = %c0 to %c3 step %cm iter_args(%a = %h) -> (tensor<3xf32>) : i64 {
    %m = "rlx.sin"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %p: tensor<i1>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<3xf32>) {
    %b = tensor.extract %p[] : tensor<i1>
    %y = scf.if %b -> (tensor<3xf32>) {
      // expected-error @+1 {{'scf.for' op step must be positive, got 0}}
      %n = scf.for %j = %c0 to %c4 step %c0 iter_args(%a = %h) -> (tensor<3xf32>) {
        %m = "rlx.exp"(%a) : (tensor<3xf32>) -> tensor<3xf32>
        scf.yield %m : tensor<3xf32>
      }
      scf.yield %n : tensor<3xf32>
    } else {
      %n = func.call @body(%h) : (tensor<3xf32>) -> tensor<3xf32>
      scf.yield %n : tensor<3xf32>
    }
    scf.yield %y : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// TOOL: invalid.mlir:[[# @LINE - 28]]:8: error: 'scf.for' op step must be positive, got -1
// TOOL: invalid.mlir:[[# @LINE - 15]]:12: error: 'scf.for' op step must be positive, got 0

// -----

// Accepted: a positive constant step, a step computed at run time.
func.func @main(%x: tensor<3xf32>, %n: tensor<i64>) -> tensor<f32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %e = tensor.extract %n[] : tensor<i64>
  %s = arith.index_cast %e : i64 to index
  %r = scf.for %i = %c1 to %c9 step %c2 iter_args(%h = %x) -> (tensor<3xf32>) {
    %q = scf.for %j = %c1 to %c9 step %s iter_args(%a = %h) -> (tensor<3xf32>) {
      %m = "rlx.sin"(%a) : (tensor<3xf32>) -> tensor<3xf32>
      scf.yield %m : tensor<3xf32>
    }
    scf.yield %q : tensor<3xf32>
  }
  %t = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %t : tensor<f32>
}

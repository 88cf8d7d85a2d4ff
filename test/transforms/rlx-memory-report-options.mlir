// RUN: gradir-opt %s --verify-diagnostics --rlx-memory-report='func=main_adjoint forward-results=2'
// RUN: not gradir-opt %s --rlx-memory-report='func=nope' 2>&1 | FileCheck %s --check-prefix=NOPE
// RUN: gradir-opt %s --rlx-memory-report='func=main' 2>&1 >/dev/null | FileCheck %s --check-prefix=ONE

// NOPE: error: rlx-memory-report: no function named '@nope'
// ONE: remark: @main: peak
// ONE-NOT: remark

func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "rlx.sum"(%0) : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
// With forward-results=2 everything is forward: nothing is saved.
// expected-remark @+1 {{@main_adjoint: peak 68 bytes = arguments 16 + saved for backward 0 + temporaries 52, at 'rlx.multiply' (op 4); saved for backward in all: 0 bytes}}
func.func @main_adjoint(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %0 = "rlx.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "rlx.sum"(%0) : (tensor<4xf32>) -> tensor<f32>
  %2 = "rlx.ones"() : () -> tensor<f32>
  %3 = "rlx.broadcast_to"(%2) : (tensor<f32>) -> tensor<4xf32>
  %4 = "rlx.multiply"(%3, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %4 : tensor<f32>, tensor<4xf32>
}

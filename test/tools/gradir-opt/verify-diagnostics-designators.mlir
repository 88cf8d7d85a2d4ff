// mlir-opt's designator rules (mlir/test/IR/diagnostic-handler-*.mlir shapes): stacked
// `@below` annotations all name the next line that is not an annotation, stacked
// `@above` ones the last line before them that is not one; `@+N`/`@-N` count lines.
// RUN: gradir-opt %s --verify-diagnostics --rlx-gradient='remarks=true' --rlx-memory-report

// expected-remark @below {{rlx-gradient: checkpoints: keeps 12 bytes}}
// expected-remark @below {{@main: peak 36 bytes}}
// expected-remark @below {{@main_adjoint: peak 52 bytes}}
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-remark @above {{kept for the backward (12 bytes)}}
  // expected-warning @below {{'grad.end_checkpoint' closes no checkpoint}}
  %e = "grad.end_checkpoint"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sin"(%e) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.sum"(%1) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

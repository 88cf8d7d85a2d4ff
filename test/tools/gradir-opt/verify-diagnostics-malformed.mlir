// Annotations that cannot work are errors at the annotation, not silently no
// expectation (each of these made a --verify-diagnostics test pass whatever
// the tool reported): an unclosed {{, an unknown designator, a count without
// its star, an -re pattern that is not a regex.  An -re pattern without
// {{ }} parts is literal text, as in mlir-opt (it was read as a regex).
// RUN: not gradir-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s --implicit-check-not=error:

// CHECK-NOT: Traceback
// Prose about an expected-error is no annotation.
func.func @f() {
  // CHECK: verify-diagnostics-malformed.mlir:[[@LINE+1]]:6: error: malformed 'expected-error' annotation: expected 'expected-error [@+N|@-N|@above|@below|@unknown] [*N] {{[{][{]}}message{{[}][}]}}'
  // expected-error @+1 {{unclosed
  return
}

// -----

func.func @f() {
  // CHECK: verify-diagnostics-malformed.mlir:[[@LINE+1]]:6: error: malformed 'expected-warning' annotation
  // expected-warning @next {{x}}
  return
}

// -----

func.func @f() {
  // CHECK: verify-diagnostics-malformed.mlir:[[@LINE+1]]:6: error: malformed 'expected-note' annotation
  // expected-note 2 {{x}}
  return
}

// -----

func.func @f() {
  // CHECK: verify-diagnostics-malformed.mlir:[[@LINE+1]]:6: error: invalid regex in 'expected-error-re': unterminated character set
  // expected-error-re {{a {{[}} b}}
  return
}

// -----

// A literal dot: "tensor.2xf32" does not match "tensor<2xf32".
// CHECK-DAG: verify-diagnostics-malformed.mlir:[[@LINE+3]]:6: error: expected error "expected 'tensor.2xf32" was not produced
// CHECK-DAG: verify-diagnostics-malformed.mlir:[[@LINE+3]]:8: error: unexpected error: expected 'tensor<2xf32>' but got 'tensor<3xf32>'
func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error-re @+1 {{expected 'tensor.2xf32}}
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A wrong or missing expectation fails the run and says why.
// RUN: not gradir-opt %s --verify-diagnostics 2>&1 | FileCheck %s

// CHECK-DAG: {{.*}}verify-diagnostics-mismatch.mlir:[[@LINE+3]]:6: error: expected error "this message is never produced" was not produced
// CHECK-DAG: verify-diagnostics-mismatch.mlir:[[@LINE+4]]:{{[0-9]+}}: error: unexpected error: use of undeclared SSA value name
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{this message is never produced}}
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %b : tensor<2xf32>
}

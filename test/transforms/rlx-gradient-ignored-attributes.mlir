// Gradient attributes on ops that do not take them are warnings (they were
// silently ignored: hostile-input review); the gradient is the usual one.
// RUN: gradir-opt %s --verify-diagnostics --rlx-gradient | FileCheck %s

// CHECK-LABEL: func.func @main_adjoint
func.func @main(%x: tensor<3xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // expected-warning @+1 {{'grad.checkpoint' on 'rlx.exp' is ignored: it is the policy of an scf.for or scf.while loop}}
  %e = "rlx.exp"(%x) {grad.checkpoint = 2 : i64} : (tensor<3xf64>) -> tensor<3xf64>
  // expected-warning @+1 {{'grad.save' on 'scf.for' is ignored: pins go on ops without regions (a loop's states follow its 'grad.checkpoint')}}
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %e) -> (tensor<3xf64>) {
    %hn = "rlx.sin"(%h) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %hn : tensor<3xf64>
  } {grad.save}
  %s = "rlx.sum"(%r) : (tensor<3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}

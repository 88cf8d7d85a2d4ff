// RUN: %PYTHON -c "import numpy as np; np.save('%t.x.npy', np.array([0.3, 0.5, 0.7])); [np.save(f'%t.s{n}.npy', np.array(n)) for n in (2, 0, -3)]"
// RUN: gradir-run %s --rlx-gradient --entry main_adjoint --input %t.x.npy --input %t.s2.npy | FileCheck %s --check-prefix=OK
// RUN: gradir-run %s --rlx-gradient --entry main_adjoint --interpret --input %t.x.npy --input %t.s2.npy | FileCheck %s --check-prefix=OK
// RUN: not gradir-run %s --rlx-gradient --entry main_adjoint --input %t.x.npy --input %t.s0.npy 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not gradir-run %s --entry main --input %t.x.npy --input %t.s-3.npy 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not gradir-run %s --rlx-gradient --entry main_adjoint --interpret --input %t.x.npy --input %t.s0.npy 2>&1 | FileCheck %s --check-prefix=INTERP
// A loop step read from an input: <= 0 is an error at the loop, from the
// compiled code as from the interpreter (the compiled adjoint of a step of 0
// died with SIGSEGV, its forward ran no trip and exited 0).

func.func @main(%x: tensor<3xf64>, %n: tensor<i64>) -> tensor<f64> {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %e = tensor.extract %n[] : tensor<i64>
  %s = arith.index_cast %e : i64 to index
  %r = scf.for %i = %c1 to %c7 step %s iter_args(%h = %x) -> (tensor<3xf64>) {
    %m = "rlx.sin"(%h) : (tensor<3xf64>) -> tensor<3xf64>
    %a = "rlx.multiply"(%m, %h) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %a : tensor<3xf64>
  }
  %q = "rlx.sum"(%r) : (tensor<3xf64>) -> tensor<f64>
  return %q : tensor<f64>
}
// OK: result 0: float64 ()
// OK-NEXT: 0.0416769
// OK-NEXT: result 1: float64 (3,)
// OK-NEXT: [0.001616 0.0491   0.385258]
// ZERO: loop-step.mlir:[[# @LINE - 12]]:8: error: 'scf.for' op step must be positive, got 0 (running @main_adjoint)
// ZERO-NEXT: %r = scf.for
// NEG: loop-step.mlir:[[# @LINE - 14]]:8: error: 'scf.for' op step must be positive, got -3 (running @main)
// INTERP: loop-step.mlir:{{[0-9]+}}:1: error: interpreter: {{.*}}loop-step.mlir:[[# @LINE - 15]]:8: 'scf.for' op step must be positive, got 0

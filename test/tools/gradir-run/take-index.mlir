// RUN: %PYTHON -c "import numpy as np; np.save('%t.x.npy', np.arange(10.0).reshape(5, 2)); [np.save(f'%t.i{k}.npy', np.array(v, np.int64)) for k, v in (('ok', [4, -5, 0]), ('high', [4, 5, 0]), ('low', [-6, 0, 1]))]"
// RUN: gradir-run %s --input %t.x.npy --input %t.iok.npy | FileCheck %s --check-prefix=OK
// RUN: gradir-run %s --interpret --input %t.x.npy --input %t.iok.npy | FileCheck %s --check-prefix=OK
// RUN: not gradir-run %s --input %t.x.npy --input %t.ihigh.npy 2>&1 | FileCheck %s --check-prefix=HIGH
// RUN: not gradir-run %s --rlx-gradient --entry main_adjoint --input %t.x.npy --input %t.ilow.npy 2>&1 | FileCheck %s --check-prefix=LOW
// RUN: not gradir-run %s --interpret --input %t.x.npy --input %t.ihigh.npy 2>&1 | FileCheck %s --check-prefix=INTERP
// A take index read from an input: out of range is an error at the op, from
// the compiled code as from the interpreter (the compiled code clamped it
// and printed another answer, exit 0).

func.func @main(%x: tensor<5x2xf64>, %i: tensor<3xi64>) -> tensor<f64> {
  %t = "rlx.take"(%x, %i) {axis = array<i64: 0>} : (tensor<5x2xf64>, tensor<3xi64>) -> tensor<3x2xf64>
  %s = "rlx.sum"(%t) : (tensor<3x2xf64>) -> tensor<f64>
  return %s : tensor<f64>
}
// OK: result 0: float64 ()
// OK-NEXT: 19
// HIGH: take-index.mlir:[[# @LINE - 6]]:8: error: 'rlx.take' op index out of range [-5, 5) on axis 0, got 5 (running @main)
// LOW: take-index.mlir:[[# @LINE - 7]]:8: error: 'rlx.take' op index out of range [-5, 5) on axis 0, got -6 (running @main_adjoint)
// INTERP: error: interpreter: {{.*}}take-index.mlir:[[# @LINE - 8]]:8: 'rlx.take': IndexError: index 5 is out of bounds for axis 0 with size 5

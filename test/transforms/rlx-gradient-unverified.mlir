// rlx-gradient checks its input as rlx-verify does (gradir.parse and the
// builders do not verify): a strided_slice with a repeated axis gave a
// "gradient" of another shape than its argument (hostile-input review).
// gradir.interpret checks the module the same way.
// RUN: gradir-opt %s --no-rlx-verify --verify-diagnostics --rlx-gradient
// RUN: %PYTHON -c "import gradir, numpy as np; m = gradir.parse(open('%s').read(), source_name='in.mlir');\
// RUN: exec('try:\n gradir.interpret(m, \'main\', np.ones((2, 5)))\nexcept Exception as e: print(type(e).__name__, e)')" | FileCheck %s

// CHECK: InterpreterError in.mlir:{{[0-9]+}}:8: 'rlx.strided_slice' op axes [1, 1] has duplicates
func.func @main(%x: tensor<2x5xf64>) -> tensor<f64> {
  // expected-error @+1 {{'rlx.strided_slice' op axes [1, 1] has duplicates}}
  %a = "rlx.strided_slice"(%x) {axes = array<i64: 1, 1>, begin = array<i64: 1, 0>, end = array<i64: 5, 2>} : (tensor<2x5xf64>) -> tensor<2x2xf64>
  %s = "rlx.sum"(%a) : (tensor<2x2xf64>) -> tensor<f64>
  return %s : tensor<f64>
}

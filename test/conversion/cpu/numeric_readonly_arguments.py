# RUN: %PYTHON %s | FileCheck %s
# Compiled code never writes into its caller's arrays (rlx-readonly-arguments):
# a loop whose carried tensor starts as an argument and is updated slice by
# slice, and the reverse sweep of such a loop (its vjp zeroes the cotangent
# slice by slice), each called twice on the same arrays, compiled (JIT and
# exported library, the oracle's check) and interpreted; before the pass the
# first call overwrote the argument and the second call saw other numbers.

import numpy as np

import gradir
from gradir.testing import gradient_module, oracle

LOOP = """
func.func @main(%a: tensor<4x3xf64>, %b: tensor<1x3xf64>) -> tensor<4x3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (tensor<4x3xf64>) {
    %row = tensor.extract_slice %acc[%i, 0] [1, 3] [1, 1] : tensor<4x3xf64> to tensor<1x3xf64>
    %m = "rlx.multiply"(%row, %b) : (tensor<1x3xf64>, tensor<1x3xf64>) -> tensor<1x3xf64>
    %s = "rlx.sin"(%m) : (tensor<1x3xf64>) -> tensor<1x3xf64>
    %u = tensor.insert_slice %s into %acc[%i, 0] [1, 3] [1, 1] : tensor<1x3xf64> into tensor<4x3xf64>
    scf.yield %u : tensor<4x3xf64>
  }
  return %r : tensor<4x3xf64>
}
"""

rng = np.random.default_rng(0)
a = rng.standard_normal((4, 3))
b = rng.standard_normal((1, 3))
ct = rng.standard_normal((4, 3))

programs = [oracle.Program("loop", LOOP, "main", [a, b])]
vjp = gradient_module(LOOP, mode="vjp", wrt="0,1")
programs.append(oracle.Program("loop vjp", str(vjp), "main_vjp", [a, b, ct]))

failures = oracle.check_compiled(programs)
for line in failures:
    print("FAIL", line)
print(f"oracle: {len(programs) - len(failures)} of {len(programs)} programs")
# CHECK-NOT: FAIL
# CHECK: oracle: 2 of 2 programs

# The same arrays twice through one compiled function: the same results,
# and the arrays unchanged.
exe = gradir.compile(vjp)
keep = [x.copy() for x in (a, b, ct)]
first = exe["main_vjp"](a, b, ct)
second = exe["main_vjp"](a, b, ct)
same = all(np.array_equal(x, y) for x, y in zip(first, second))
untouched = all(np.array_equal(x, y) for x, y in zip((a, b, ct), keep))
print("repeatable:", same, "arguments untouched:", untouched)
# CHECK: repeatable: True arguments untouched: True

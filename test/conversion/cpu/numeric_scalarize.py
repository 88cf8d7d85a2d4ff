# RUN: %PYTHON %s | FileCheck %s
# rlx-scalarize (0-d and tiny tensors as scalars before bufferization):
# compiled loops over 0-d and 2-element tensors against the reference
# interpreter, and GradBench's saddle and particle programs bitwise the
# same as compiled without the pass.

import numpy as np

import gradir
from gradir import interpret
from gradir.conversion.cpu.rlx_scalarize import RlxScalarize
from gradir.tools.gradbench.evals import particle, saddle

# x <- x - eta * grad(|x|^2) while |x|^2 > tol (20 steps at most), eta halved every step; the
# count of steps as a 0-d f64; a 2-element tape of x filled by an scf.for.
PROGRAM = """
func.func @descent(%x0: tensor<2xf64>, %eta0: tensor<f64>) -> (tensor<2xf64>, tensor<f64>, tensor<3x2xf64>) {
  %zero = arith.constant dense<0.0> : tensor<f64>
  %one = arith.constant dense<1.0> : tensor<f64>
  %two = arith.constant dense<2.0> : tensor<f64>
  %steps = arith.constant dense<20.0> : tensor<f64>
  %tol = arith.constant dense<1.0e-3> : tensor<f64>
  %r:3 = scf.while (%x = %x0, %eta = %eta0, %n = %zero) : (tensor<2xf64>, tensor<f64>, tensor<f64>) -> (tensor<2xf64>, tensor<f64>, tensor<f64>) {
    %sq = "rlx.square"(%x) : (tensor<2xf64>) -> tensor<2xf64>
    %s = "rlx.sum"(%sq) : (tensor<2xf64>) -> tensor<f64>
    %big = "rlx.greater"(%s, %tol) : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %few = "rlx.less"(%n, %steps) : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %b1 = tensor.extract %big[] : tensor<i1>
    %b2 = tensor.extract %few[] : tensor<i1>
    %b = arith.andi %b1, %b2 : i1
    scf.condition(%b) %x, %eta, %n : tensor<2xf64>, tensor<f64>, tensor<f64>
  } do {
  ^bb0(%x: tensor<2xf64>, %eta: tensor<f64>, %n: tensor<f64>):
    %g = "rlx.multiply"(%x, %two) : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
    %d = "rlx.multiply"(%eta, %g) : (tensor<f64>, tensor<2xf64>) -> tensor<2xf64>
    %x2 = "rlx.subtract"(%x, %d) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %n2 = "rlx.add"(%n, %one) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %even = "rlx.less"(%n, %one) : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %e = tensor.extract %even[] : tensor<i1>
    %eta2 = scf.if %e -> (tensor<f64>) {
      scf.yield %eta : tensor<f64>
    } else {
      %h = "rlx.divide"(%eta, %two) : (tensor<f64>, tensor<f64>) -> tensor<f64>
      scf.yield %h : tensor<f64>
    }
    scf.yield %x2, %eta2, %n2 : tensor<2xf64>, tensor<f64>, tensor<f64>
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %t0 = arith.constant dense<0.0> : tensor<3x2xf64>
  %t = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %t0) -> (tensor<3x2xf64>) {
    %row = "rlx.multiply"(%r#0, %r#1) : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
    %ins = tensor.insert_slice %row into %acc[%i, 0] [1, 2] [1, 1] : tensor<2xf64> into tensor<3x2xf64>
    scf.yield %ins : tensor<3x2xf64>
  }
  return %r#0, %r#2, %t : tensor<2xf64>, tensor<f64>, tensor<3x2xf64>
}
"""


def compiled(module, name, off=False):
    apply = RlxScalarize.apply
    if off:
        RlxScalarize.apply = lambda self, op: None
    try:
        return gradir.compile(module, functions=[name], cache=False, threads=1)[name]
    finally:
        RlxScalarize.apply = apply


module = gradir.parse(PROGRAM)
fn = compiled(module, "descent")
for x0, eta in [((1.0, -2.0), 0.1), ((0.5, 0.25), 0.3), ((3.0, 1e-3), 0.45)]:
    args = (np.array(x0), np.array(eta))
    got, want = fn(*args), interpret(module, "descent", *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=0)
    on, off = fn(*args), compiled(module, "descent", off=True)(*args)
    assert all(np.array_equal(a, b) for a, b in zip(on, off))
print("descent: matches the interpreter")
# CHECK: descent: matches the interpreter

for mod, name, arg in ((saddle, "saddle", np.array([1.0, 1.0])),
                       (particle, "particle", np.array([0.0]))):
    for variant in ("rr", "fr"):
        m = gradir.parse(mod.program(variant))
        on, off = compiled(m, name)(arg), compiled(m, name, off=True)(arg)
        on, off = (r if isinstance(r, tuple) else (r,) for r in (on, off))
        assert all(a.tobytes() == b.tobytes() for a, b in zip(on, off)), (name, variant, on, off)
        print(f"{name} {variant}: bitwise the same")
# CHECK: saddle rr: bitwise the same
# CHECK: saddle fr: bitwise the same
# CHECK: particle rr: bitwise the same
# CHECK: particle fr: bitwise the same

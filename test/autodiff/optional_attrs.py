# RUN: %PYTHON %s | FileCheck %s
# Optional attributes left out take DESIGN.md's (Relax's) defaults everywhere
# (issue 12): each program below omits them and must verify, interpret exactly like
# the same program with the defaults written out, compile to the same numbers, have
# gradients that match finite differences, and go through the memory report.

import numpy as np

import gradir
from gradir import interpret
from gradir.testing import check_gradient

rng = np.random.default_rng(0)
F = "f64"

CASES = {
    # name: (op without the attributes, the same attributes written out, operand shapes)
    "conv2d": ('"rlx.conv2d"(%a0, %a1) {<<A>>} : (tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64>',
               "strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, "
               "dilation = array<i64: 1, 1>, groups = 1 : i64",
               [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "max_pool2d": ('"rlx.max_pool2d"(%a0) {pool_size = array<i64: 2, 2><<A>>} : (tensor<1x2x4x4xf64>) -> tensor<1x2x3x3xf64>',
                   ", strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>",
                   [(1, 2, 4, 4)]),
    "avg_pool2d": ('"rlx.avg_pool2d"(%a0) {pool_size = array<i64: 2, 3><<A>>} : (tensor<1x2x4x4xf64>) -> tensor<1x2x3x2xf64>',
                   ", strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>",
                   [(1, 2, 4, 4)]),
    "triu": ('"rlx.triu"(%a0) {<<A>>} : (tensor<3x4xf64>) -> tensor<3x4xf64>', "k = 0 : i64", [(3, 4)]),
    "layer_norm": ('"rlx.layer_norm"(%a0, %a1, %a2) {axes = array<i64: -1><<A>>} : (tensor<2x4xf64>, tensor<4xf64>, tensor<4xf64>) -> tensor<2x4xf64>',
                   ", epsilon = 1.0e-05 : f64", [(2, 4), (4,), (4,)]),
    "rms_norm": ('"rlx.rms_norm"(%a0, %a1) {<<A>>} : (tensor<2x4xf64>, tensor<4xf64>) -> tensor<2x4xf64>',
                 "epsilon = 1.0e-05 : f64", [(2, 4), (4,)]),
}


def text(op: str, n_args: int, shapes, result: str) -> str:
    args = ", ".join(f"%a{i}: tensor<{'x'.join(map(str, s))}x{F}>" for i, s in enumerate(shapes))
    return f"""func.func @main({args}) -> tensor<f64> {{
  %0 = {op}
  %1 = "rlx.sum"(%0) : ({result}) -> tensor<f64>
  return %1 : tensor<f64>
}}"""


def fill(op: str, attrs: str) -> str:
    op = op.replace("<<A>>", attrs)
    return op.replace(" {} :", " :")


def check(name, op, attrs, shapes):
    result = op.rsplit("-> ", 1)[1]
    bare = text(fill(op, ""), len(shapes), shapes, result)
    full = text(fill(op, attrs), len(shapes), shapes, result)
    args = [rng.standard_normal(s) for s in shapes]
    m_bare, m_full = gradir.parse(bare), gradir.parse(full)
    gradir.run_pipeline(m_bare, "builtin.module(rlx-verify)")
    (y_bare,), (y_full,) = interpret(m_bare, "main", *args), interpret(m_full, "main", *args)
    assert y_bare == y_full, (name, y_bare, y_full)
    compiled = gradir.compile(m_bare)["main"](*args)
    assert np.allclose(compiled, y_bare, rtol=1e-12), (name, compiled, y_bare)
    check_gradient(bare, args)
    gradir.run_pipeline(m_bare, "builtin.module(rlx-gradient,rlx-memory-report)")
    print(f"ok {name}")


for name, (op, attrs, shapes) in CASES.items():
    check(name, op, attrs, shapes)
# CHECK: ok conv2d
# CHECK: ok max_pool2d
# CHECK: ok avg_pool2d
# CHECK: ok triu
# CHECK: ok layer_norm
# CHECK: ok rms_norm


# nll_loss without `reduction` is "mean" (integer targets: no gradient for them).
NLL = """func.func @main(%p: tensor<3x4xf64>, %t: tensor<3xi64>) -> tensor<f64> {
  %0 = "rlx.nll_loss"(%p, %t) : (tensor<3x4xf64>, tensor<3xi64>) -> tensor<f64>
  return %0 : tensor<f64>
}"""
p, t = rng.standard_normal((3, 4)), np.array([0, 3, 1])
m = gradir.parse(NLL)
(loss,) = interpret(m, "main", p, t)
assert np.isclose(loss, -p[np.arange(3), t].mean())
assert np.isclose(gradir.compile(m)["main"](p, t), loss)
check_gradient(NLL, [p, t], wrt=[0])
print("ok nll_loss")
# CHECK: ok nll_loss

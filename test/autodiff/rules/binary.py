# RUN: %PYTHON %s | FileCheck %s
# VJP rules of the binary ops (broadcasting both ways, 0-d operands), where.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import check_op, main_text, rand, run, ttype  # noqa: E402

# (lhs shape, rhs shape, result shape): same, rhs broadcast, lhs broadcast,
# both broadcast, 0-d on either side, rank promotion.
SHAPES = [
    ((2, 3), (2, 3), (2, 3)),
    ((2, 3), (3,), (2, 3)),
    ((1, 3), (4, 3), (4, 3)),
    ((4, 1), (1, 3), (4, 3)),
    ((), (2, 3), (2, 3)),
    ((2, 3), (), (2, 3)),
    ((3, 1, 2), (4, 1), (3, 4, 2)),
    ((), (), ()),
]


def check_binary(name, lo=-1.0, hi=1.0, rhs=None):
    for sa, sb, so in SHAPES:
        a = rand(sa, lo, hi)
        b = rand(sb, lo, hi) if rhs is None else rhs(sb)
        check_op(f'"rlx.{name}"(%a0, %a1)', [a, b], so)
    print(f"{name} ok")


@run
def test_binary():
    check_binary("add")
    check_binary("subtract")
    check_binary("multiply")
    check_binary("divide", rhs=lambda s: rand(s, 0.5, 2.0))
    check_binary("power", 0.5, 2.0)      # positive bases: d/db = log(a) a^b
    check_binary("maximum")              # continuous random inputs: no ties
    check_binary("minimum")
# CHECK-LABEL: TEST: test_binary
# CHECK: add ok
# CHECK: subtract ok
# CHECK: multiply ok
# CHECK: divide ok
# CHECK: power ok
# CHECK: maximum ok
# CHECK: minimum ok


@run
def test_power_constant_exponent():
    # A constant exponent gets no log(base): negative bases stay finite.
    x = rand((2, 3), -2.0, 2.0)
    text = f"""
func.func @main(%a0: {ttype((2, 3))}, %w: {ttype((2, 3))}) -> tensor<f64> {{
  %c = arith.constant dense<3.0> : tensor<f64>
  %y = "rlx.power"(%a0, %c) : ({ttype((2, 3))}, tensor<f64>) -> {ttype((2, 3))}
  %p = "rlx.multiply"(%y, %w) : ({ttype((2, 3))}, {ttype((2, 3))}) -> {ttype((2, 3))}
  %s = "rlx.sum"(%p) : ({ttype((2, 3))}) -> tensor<f64>
  return %s : tensor<f64>
}}
"""
    from gradir.testing import check_gradient
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_gradient(text, [x, rand((2, 3))], wrt=[0])
    print("power constant exponent ok")
# CHECK-LABEL: TEST: test_power_constant_exponent
# CHECK: power constant exponent ok


@run
def test_max_min_ties():
    # Ties (Relax): maximum sends g to lhs where lhs >= rhs, minimum where lhs <= rhs.
    from gradir.testing import gradient_module
    from gradir import interpret
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, 3.0, 2.0])
    for name, ga in (("maximum", [1.0, 0.0, 1.0]), ("minimum", [1.0, 1.0, 0.0])):
        text, _ = main_text(f'"rlx.{name}"(%a0, %a1)', [a, b], (3,))
        outs = interpret(gradient_module(text, wrt=[0, 1]), "main_adjoint", a, b, np.ones(3))
        np.testing.assert_array_equal(outs[1], ga)
        np.testing.assert_array_equal(outs[2], 1.0 - np.array(ga))
        print(f"{name} ties ok")
# CHECK-LABEL: TEST: test_max_min_ties
# CHECK: maximum ties ok
# CHECK: minimum ties ok


@run
def test_where():
    for sc, sa, sb, so in (((2, 3), (2, 3), (2, 3), (2, 3)),
                           ((2, 3), (3,), (), (2, 3)),
                           ((2, 1), (1, 3), (2, 3), (2, 3)),
                           ((4, 1, 3), (2, 1), (1,), (4, 2, 3))):
        cond = rand(sc) > 0
        check_op('"rlx.where"(%a0, %a1, %a2)', [cond, rand(sa), rand(sb)], so, wrt=[1, 2])
    print("where ok")
# CHECK-LABEL: TEST: test_where
# CHECK: where ok


@run
def test_matmul():
    cases = [
        ((3,), (3,)),
        ((4, 3), (3,)),
        ((3,), (3, 5)),
        ((3,), (2, 3, 4)),
        ((2, 3, 4), (4,)),
        ((4, 3), (3, 2)),
        ((2, 4, 3), (3, 2)),
        ((4, 3), (2, 3, 2)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((1, 2, 3, 4, 5), (2, 1, 5, 3)),
        ((2, 1, 1, 2, 3), (3, 1, 3, 2)),
        ((2, 1, 4, 2, 3), (3, 1, 3, 2)),
    ]
    for sa, sb in cases:
        so = np.matmul(np.zeros(sa), np.zeros(sb)).shape   # numpy semantics
        check_op('"rlx.matmul"(%a0, %a1)', [rand(sa), rand(sb)], so)
        print(f"matmul {sa} x {sb} ok")
# CHECK-LABEL: TEST: test_matmul
# CHECK: matmul (3,) x (3,) ok
# CHECK: matmul (4, 3) x (3,) ok
# CHECK: matmul (3,) x (3, 5) ok
# CHECK: matmul (3,) x (2, 3, 4) ok
# CHECK: matmul (2, 3, 4) x (4,) ok
# CHECK: matmul (4, 3) x (3, 2) ok
# CHECK: matmul (2, 4, 3) x (3, 2) ok
# CHECK: matmul (4, 3) x (2, 3, 2) ok
# CHECK: matmul (2, 1, 3, 4) x (5, 4, 2) ok
# CHECK: matmul (1, 2, 3, 4, 5) x (2, 1, 5, 3) ok
# CHECK: matmul (2, 1, 1, 2, 3) x (3, 1, 3, 2) ok
# CHECK: matmul (2, 1, 4, 2, 3) x (3, 1, 3, 2) ok


@run
def test_power_at_zero():
    # d/dw x^w at x = 0 is 0 for w > 0 (JAX, PyTorch), not 0 * log 0 = NaN;
    # compiled code agrees (the adjoint joins the compiled-code oracle).
    from gradir import interpret
    from gradir.testing import gradient_module, oracle
    t = ttype((3,))
    text = f"""
func.func @main(%x: {t}, %w: {t}) -> tensor<f64> {{
  %y = "rlx.power"(%x, %w) : ({t}, {t}) -> {t}
  %s = "rlx.sum"(%y) : ({t}) -> tensor<f64>
  return %s : tensor<f64>
}}"""
    x, w = np.array([0.0, 0.0, 2.0]), np.array([2.0, 0.5, 3.0])
    module = gradient_module(text)
    _, gx, gw = interpret(module, "main_adjoint", x, w)
    oracle.record(module, "main_adjoint", [x, w], name="power at x = 0")
    print("d/dw:", gw.tolist(), "d/dx:", gx.tolist())
# CHECK-LABEL: TEST: test_power_at_zero
# CHECK: d/dw: [0.0, 0.0, 5.545177444479562] d/dx: [0.0, inf, 12.0]

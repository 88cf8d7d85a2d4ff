# RUN: %PYTHON %s | FileCheck %s
# VJP and JVP rules of the binary ops (broadcasting both ways, 0-d operands),
# where, matmul.  JVP rules: along random tangents and, batched, as the whole
# Jacobian, with both operands varied and with one (the other's tangent zero).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import (check_op, check_op_jvp, main_text, op_text, rand, run,  # noqa: E402
                          ttype)

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


def check_binary_jvp(name, lo=-1.0, hi=1.0, rhs=None):
    for sa, sb, so in SHAPES:
        for wrt in (None, [0], [1]):
            a = rand(sa, lo, hi)
            b = rand(sb, lo, hi) if rhs is None else rhs(sb)
            check_op_jvp(f'"rlx.{name}"(%a0, %a1)', [a, b], so, wrt=wrt)
    print(f"{name} jvp ok")


@run
def test_binary_jvp():
    check_binary_jvp("add")
    check_binary_jvp("subtract")
    check_binary_jvp("multiply")
    check_binary_jvp("divide", rhs=lambda s: rand(s, 0.5, 2.0))
    check_binary_jvp("power", 0.5, 2.0)
    check_binary_jvp("maximum")
    check_binary_jvp("minimum")
# CHECK-LABEL: TEST: test_binary_jvp
# CHECK: add jvp ok
# CHECK: subtract jvp ok
# CHECK: multiply jvp ok
# CHECK: divide jvp ok
# CHECK: power jvp ok
# CHECK: maximum jvp ok
# CHECK: minimum jvp ok


@run
def test_power_jvp_constant_exponent():
    # A constant exponent gets no tangent and no log(base): negative bases stay finite.
    from gradir.testing import check_jacobian, check_jvp
    import warnings
    t = ttype((2, 3))
    text = f"""
func.func @main(%a0: {t}) -> {t} {{
  %c = arith.constant dense<3.0> : tensor<f64>
  %y = "rlx.power"(%a0, %c) : ({t}, tensor<f64>) -> {t}
  return %y : {t}
}}
"""
    x = rand((2, 3), -2.0, 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_jvp(text, [x], wrt=[0])
        check_jacobian(text, [x], wrt=[0], jacobian_mode="forward")
    print("power jvp constant exponent ok")
# CHECK-LABEL: TEST: test_power_jvp_constant_exponent
# CHECK: power jvp constant exponent ok


@run
def test_power_jvp_at_zero():
    # As the VJP: the exponent's term at x = 0 is 0 (w > 0), not 0 * log 0 = NaN.
    # (One tangent at a time: a zero tangent of x passed in would still meet
    # d/dx = inf at x = 0, w < 1, and make 0 * inf = NaN, as in JAX.)
    from gradir import interpret
    from gradir.testing import gradient_module
    x, w = np.array([0.0, 0.0, 2.0]), np.array([2.0, 0.5, 3.0])
    text = op_text('"rlx.power"(%a0, %a1)', [x, w], (3,))
    along_w = interpret(gradient_module(text, mode="jvp", wrt=[1]), "main_jvp", x, w,
                        np.ones(3))[1]
    along_x = interpret(gradient_module(text, mode="jvp", wrt=[0]), "main_jvp", x, w,
                        np.ones(3))[1]
    print("along w:", along_w.tolist(), "along x:", along_x.tolist())
# CHECK-LABEL: TEST: test_power_jvp_at_zero
# CHECK: along w: [0.0, 0.0, 5.545177444479562] along x: [0.0, inf, 12.0]


@run
def test_max_min_ties_jvp():
    # The VJP's ties: maximum takes lhs's tangent where lhs >= rhs, minimum where
    # lhs <= rhs, rhs's elsewhere (the two partials sum to 1).
    from gradir.testing import gradient_module
    from gradir import interpret
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, 3.0, 2.0])
    ta, tb = np.array([10.0, 20.0, 30.0]), np.array([1.0, 2.0, 3.0])
    for name, from_a in (("maximum", [1, 0, 1]), ("minimum", [1, 1, 0])):
        text = op_text(f'"rlx.{name}"(%a0, %a1)', [a, b], (3,))
        got = interpret(gradient_module(text, mode="jvp"), "main_jvp", a, b, ta, tb)[1]
        np.testing.assert_array_equal(got, np.where(np.array(from_a) == 1, ta, tb))
        outs = interpret(gradient_module(text, mode="jacobian", jacobian_mode="forward"),
                         "main_jacobian", a, b)
        np.testing.assert_array_equal(outs[1], np.diag(from_a).astype(float))
        np.testing.assert_array_equal(outs[2], np.diag(1 - np.array(from_a)).astype(float))
        print(f"{name} jvp ties ok")
# CHECK-LABEL: TEST: test_max_min_ties_jvp
# CHECK: maximum jvp ties ok
# CHECK: minimum jvp ties ok


@run
def test_where_jvp():
    for sc, sa, sb, so in (((2, 3), (2, 3), (2, 3), (2, 3)),
                           ((2, 3), (3,), (), (2, 3)),
                           ((2, 1), (1, 3), (2, 3), (2, 3)),
                           ((4, 1, 3), (2, 1), (1,), (4, 2, 3))):
        cond = rand(sc) > 0
        for wrt in ([1, 2], [1], [2]):
            check_op_jvp('"rlx.where"(%a0, %a1, %a2)', [cond, rand(sa), rand(sb)], so, wrt=wrt)
    print("where jvp ok")
# CHECK-LABEL: TEST: test_where_jvp
# CHECK: where jvp ok


@run
def test_matmul_jvp():
    # numpy semantics; the Jacobian's batch of tangents must not mix with the
    # operands' own batch dims (nor a 1-D tangent be read as a matrix).
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
        ((1, 1), (1,)),
    ]
    for sa, sb in cases:
        so = np.matmul(np.zeros(sa), np.zeros(sb)).shape
        for wrt in (None, [0], [1]):
            check_op_jvp('"rlx.matmul"(%a0, %a1)', [rand(sa), rand(sb)], so, wrt=wrt)
        print(f"matmul jvp {sa} x {sb} ok")
# CHECK-LABEL: TEST: test_matmul_jvp
# CHECK: matmul jvp (3,) x (3,) ok
# CHECK: matmul jvp (4, 3) x (3,) ok
# CHECK: matmul jvp (3,) x (3, 5) ok
# CHECK: matmul jvp (3,) x (2, 3, 4) ok
# CHECK: matmul jvp (2, 3, 4) x (4,) ok
# CHECK: matmul jvp (4, 3) x (3, 2) ok
# CHECK: matmul jvp (2, 4, 3) x (3, 2) ok
# CHECK: matmul jvp (4, 3) x (2, 3, 2) ok
# CHECK: matmul jvp (2, 1, 3, 4) x (5, 4, 2) ok
# CHECK: matmul jvp (1, 2, 3, 4, 5) x (2, 1, 5, 3) ok
# CHECK: matmul jvp (2, 1, 1, 2, 3) x (3, 1, 3, 2) ok
# CHECK: matmul jvp (1, 1) x (1,) ok

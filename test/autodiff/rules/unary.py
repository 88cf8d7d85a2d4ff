# RUN: %PYTHON %s | FileCheck %s
# VJP and JVP rules of the unary ops, checked against finite differences
# (JVP rules: along random tangents and, batched, as the whole Jacobian).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import check_op, check_op_jvp, op_text, rand, run  # noqa: E402


def away_from_zero(shape):
    """Values in [-1.5, -0.2] U [0.2, 1.5] (no kink of abs/relu within eps)."""
    x = rand(shape, 0.2, 1.5)
    return x * np.where(rand(shape) < 0, -1.0, 1.0)


def check_unary(name, x):
    check_op(f'"rlx.{name}"(%a0)', [x], x.shape)
    print(f"{name} ok")


@run
def test_unary():
    for name in ("negative", "exp", "sin", "cos", "tanh", "sigmoid", "silu", "gelu", "erf",
                 "square"):
        check_unary(name, rand((2, 3), -2.0, 2.0))
    for name in ("log", "sqrt", "rsqrt"):
        check_unary(name, rand((2, 3), 0.3, 2.0))
    for name in ("abs", "relu"):
        check_unary(name, away_from_zero((3, 4)))
    # 0-d and rank-3 operands
    check_op('"rlx.tanh"(%a0)', [rand(())], ())
    check_op('"rlx.gelu"(%a0)', [rand((2, 1, 3), -3.0, 3.0)], (2, 1, 3))
    print("unary shapes ok")
# CHECK-LABEL: TEST: test_unary
# CHECK: negative ok
# CHECK: exp ok
# CHECK: sin ok
# CHECK: cos ok
# CHECK: tanh ok
# CHECK: sigmoid ok
# CHECK: silu ok
# CHECK: gelu ok
# CHECK: erf ok
# CHECK: square ok
# CHECK: log ok
# CHECK: sqrt ok
# CHECK: rsqrt ok
# CHECK: abs ok
# CHECK: relu ok
# CHECK: unary shapes ok


@run
def test_kink_conventions():
    # At the kink a subgradient is chosen: abs -> 1 at 0, relu -> 0 at 0.
    from grad_helpers import main_text
    from gradir.testing import gradient_module
    from gradir import interpret
    x = np.array([0.0, -1.0, 2.0])
    w = np.ones(3)
    for name, want in (("abs", [1.0, -1.0, 1.0]), ("relu", [0.0, 0.0, 1.0])):
        text, _ = main_text(f'"rlx.{name}"(%a0)', [x], (3,))
        m = gradient_module(text, wrt=[0])
        got = interpret(m, "main_adjoint", x, w)[1]
        np.testing.assert_array_equal(got, want)
        print(f"{name} kink ok")
# CHECK-LABEL: TEST: test_kink_conventions
# CHECK: abs kink ok
# CHECK: relu kink ok


def check_unary_jvp(name, x):
    check_op_jvp(f'"rlx.{name}"(%a0)', [x], x.shape)
    print(f"{name} jvp ok")


@run
def test_unary_jvp():
    for name in ("negative", "exp", "sin", "cos", "tanh", "sigmoid", "silu", "gelu", "erf",
                 "square"):
        check_unary_jvp(name, rand((2, 3), -2.0, 2.0))
    for name in ("log", "sqrt", "rsqrt"):
        check_unary_jvp(name, rand((2, 3), 0.3, 2.0))
    for name in ("abs", "relu"):
        check_unary_jvp(name, away_from_zero((3, 4)))
    # 0-d, rank-3 and a batch of 1 (a 1-element operand: the Jacobian's
    # batch dim has size 1 too)
    check_op_jvp('"rlx.tanh"(%a0)', [rand(())], ())
    check_op_jvp('"rlx.gelu"(%a0)', [rand((2, 1, 3), -3.0, 3.0)], (2, 1, 3))
    check_op_jvp('"rlx.sigmoid"(%a0)', [rand((1,))], (1,))
    print("unary jvp shapes ok")
# CHECK-LABEL: TEST: test_unary_jvp
# CHECK: negative jvp ok
# CHECK: exp jvp ok
# CHECK: sin jvp ok
# CHECK: cos jvp ok
# CHECK: tanh jvp ok
# CHECK: sigmoid jvp ok
# CHECK: silu jvp ok
# CHECK: gelu jvp ok
# CHECK: erf jvp ok
# CHECK: square jvp ok
# CHECK: log jvp ok
# CHECK: sqrt jvp ok
# CHECK: rsqrt jvp ok
# CHECK: abs jvp ok
# CHECK: relu jvp ok
# CHECK: unary jvp shapes ok


@run
def test_kink_conventions_jvp():
    # The JVP rules choose the VJP's subgradients: abs -> 1 at 0, relu -> 0 at 0,
    # in mode=jvp and in the Jacobian (its diagonal).
    from gradir.testing import gradient_module
    from gradir import interpret
    x = np.array([0.0, -1.0, 2.0])
    for name, want in (("abs", [1.0, -1.0, 1.0]), ("relu", [0.0, 0.0, 1.0])):
        text = op_text(f'"rlx.{name}"(%a0)', [x], (3,))
        tangent = interpret(gradient_module(text, mode="jvp", wrt=[0]), "main_jvp",
                            x, np.ones(3))[1]
        np.testing.assert_array_equal(tangent, want)
        jac = interpret(gradient_module(text, mode="jacobian", jacobian_mode="forward", wrt=[0]),
                        "main_jacobian", x)[1]
        np.testing.assert_array_equal(jac, np.diag(want))
        print(f"{name} jvp kink ok")
# CHECK-LABEL: TEST: test_kink_conventions_jvp
# CHECK: abs jvp kink ok
# CHECK: relu jvp kink ok

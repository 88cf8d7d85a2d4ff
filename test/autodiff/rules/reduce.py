# RUN: %PYTHON %s | FileCheck %s
# VJP and JVP rules of the reductions, checked against finite differences
# (JVP rules: mode=jvp and, batched, mode=jacobian).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import arr, check_op, check_op_jvp, main_text, op_text, rand, run  # noqa: E402

from gradir.testing import check_jacobian  # noqa: E402

SHAPE = (2, 3, 4)
# (axis or None, keepdims)
VARIANTS = [(None, False), (None, True), ([1], False), ([1], True), ([-1], False),
            ([0, 2], True), ([-3, -2], False), ([0, 1, 2], False)]


def reduced_shape(shape, axis, keep):
    axes = range(len(shape)) if axis is None else [a % len(shape) for a in axis]
    return tuple(1 if i in axes else d for i, d in enumerate(shape) if keep or i not in axes)


def check_reduce(name, x, check=check_op):
    for axis, keep in VARIANTS:
        attrs = []
        if axis is not None:
            attrs.append(f"axis = {arr(axis)}")
        if keep:
            attrs.append("keepdims = true")
        text = f'"rlx.{name}"(%a0)' + (" {" + ", ".join(attrs) + "}" if attrs else "")
        check(text, [x], reduced_shape(x.shape, axis, keep))
    print(f"{name} ok")


@run
def test_reductions():
    check_reduce("sum", rand(SHAPE))
    check_reduce("mean", rand(SHAPE))
    # distinct values (a random permutation, spaced by 0.1 >> eps): no ties
    distinct = (np.random.default_rng(7).permutation(24).reshape(SHAPE) * 0.1 - 1.0)
    check_reduce("max", distinct)
    check_reduce("min", distinct)
    check_reduce("prod", rand(SHAPE, 0.5, 1.5))    # no zeros
    # zeros: one in some groups, two in others (g * prod / x gave NaN there;
    # prod is multilinear, so finite differences are exact at 0 too)
    zeros = rand(SHAPE, 0.5, 1.5)
    zeros.reshape(-1)[[0, 5, 7, 13, 14]] = 0.0
    check_reduce("prod", zeros)
    check_reduce("variance", rand(SHAPE))
    check_op('"rlx.sum"(%a0)', [rand(())], ())      # 0-d operand
    check_op('"rlx.max"(%a0) {axis = array<i64: 0>}', [np.array([0.3, -0.2])], ())
    print("reduce 0-d ok")
# CHECK-LABEL: TEST: test_reductions
# CHECK: sum ok
# CHECK: mean ok
# CHECK: max ok
# CHECK: min ok
# CHECK: prod ok
# CHECK: prod ok
# CHECK: variance ok
# CHECK: reduce 0-d ok


@run
def test_max_min_ties():
    # Ties: the adjoint is divided equally among the positions equal to the
    # extremum (JAX reduce_max / PyTorch amax).
    from gradir.testing import gradient_module
    from gradir import interpret
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    for name, want in (("max", [[0, 0.5, 0.5, 0], [0.25] * 4]),
                       ("min", [[0, 0, 0, 1.0], [0.25] * 4])):
        text, _ = main_text(f'"rlx.{name}"(%a0) {{axis = array<i64: 1>}}', [x], (2,))
        got = interpret(gradient_module(text, wrt=[0]), "main_adjoint", x, np.ones(2))[1]
        np.testing.assert_allclose(got, want)
        print(f"{name} ties ok")
# CHECK-LABEL: TEST: test_max_min_ties
# CHECK: max ties ok
# CHECK: min ties ok


@run
def test_cumsum():
    x = rand(SHAPE)
    for axis in (0, 1, 2, -1, -3):
        check_op(f'"rlx.cumsum"(%a0) {{axis = {arr([axis])}}}', [x], SHAPE)
    check_op('"rlx.cumsum"(%a0)', [x], (24,))                  # absent axis: flattened
    check_op('"rlx.cumsum"(%a0) {axis = array<i64: 0>}', [rand((5,))], (5,))
    print("cumsum ok")
# CHECK-LABEL: TEST: test_cumsum
# CHECK: cumsum ok


# ----------------------------------------------------------------------------
# JVP rules (tangents batched past the leading dims in mode=jacobian)

def check_fwd(text, args, result_shape):
    """mode=jvp, and mode=jacobian by forward columns (jacobian-mode=auto
    takes reverse rows for results smaller than the argument)."""
    check_op_jvp(text, args, result_shape, jacobian=False)
    check_jacobian(op_text(text, args, result_shape), args, jacobian_mode="forward")


@run
def test_reductions_jvp():
    check_reduce("sum", rand(SHAPE), check_fwd)
    check_reduce("mean", rand(SHAPE), check_fwd)
    distinct = (np.random.default_rng(7).permutation(24).reshape(SHAPE) * 0.1 - 1.0)
    check_reduce("max", distinct, check_fwd)
    check_reduce("min", distinct, check_fwd)
    check_reduce("prod", rand(SHAPE, 0.5, 1.5), check_fwd)
    zeros = rand(SHAPE, 0.5, 1.5)
    zeros.reshape(-1)[[0, 5, 7, 13, 14]] = 0.0
    check_reduce("prod", zeros, check_fwd)
    check_reduce("variance", rand(SHAPE), check_fwd)
    check_fwd('"rlx.sum"(%a0)', [rand(())], ())
    check_fwd('"rlx.max"(%a0) {axis = array<i64: 0>}', [np.array([0.3, -0.2])], ())
    # a mean of nothing (NaN) has a zero tangent, as its VJP gives zero
    from gradir import interpret
    from gradir.testing import gradient_module
    import warnings
    for name in ("mean", "variance"):
        text = op_text(f'"rlx.{name}"(%a0) {{axis = array<i64: 1>}}', [np.zeros((2, 0))], (2,))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # numpy: mean of nothing
            got = interpret(gradient_module(text, mode="jvp"), "main_jvp", np.zeros((2, 0)),
                            np.zeros((2, 0)))[1]
        np.testing.assert_array_equal(got, np.zeros(2))
    print("reduce 0-d and empty jvp ok")
# CHECK-LABEL: TEST: test_reductions_jvp
# CHECK: sum ok
# CHECK: mean ok
# CHECK: max ok
# CHECK: min ok
# CHECK: prod ok
# CHECK: prod ok
# CHECK: variance ok
# CHECK: reduce 0-d and empty jvp ok


@run
def test_max_min_ties_jvp():
    # At ties the JVP is the transpose of the VJP (the tangent averaged over
    # the tied positions): <jvp(v), u> = <v, vjp(u)>.
    from gradir.testing import gradient_module
    from gradir import interpret
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    v = np.array([[0.0, 1.0, 3.0, 5.0], [1.0, 2.0, 3.0, 4.0]])
    for name, want in (("max", [2.0, 2.5]), ("min", [5.0, 2.5])):
        text = op_text(f'"rlx.{name}"(%a0) {{axis = array<i64: 1>}}', [x], (2,))
        got = interpret(gradient_module(text, mode="jvp"), "main_jvp", x, v)[1]
        np.testing.assert_allclose(got, want)
        jac = interpret(gradient_module(text, mode="jacobian", jacobian_mode="forward"),
                        "main_jacobian", x)[1]
        np.testing.assert_allclose(np.tensordot(jac, v, axes=2), want)
        print(f"{name} ties jvp ok")
# CHECK-LABEL: TEST: test_max_min_ties_jvp
# CHECK: max ties jvp ok
# CHECK: min ties jvp ok


@run
def test_cumsum_jvp():
    x = rand(SHAPE)
    for axis in (0, 1, 2, -1, -3):
        check_fwd(f'"rlx.cumsum"(%a0) {{axis = {arr([axis])}}}', [x], SHAPE)
    check_fwd('"rlx.cumsum"(%a0) {axis = array<i64: 1>, exclusive = true}', [x], SHAPE)
    check_fwd('"rlx.cumsum"(%a0)', [x], (24,))                  # absent axis: flattened
    check_fwd('"rlx.cumsum"(%a0) {axis = array<i64: 0>}', [rand((5,))], (5,))
    print("cumsum jvp ok")
# CHECK-LABEL: TEST: test_cumsum_jvp
# CHECK: cumsum jvp ok

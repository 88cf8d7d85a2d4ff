# RUN: %PYTHON %s | FileCheck %s
# VJP rules of the reductions, checked against finite differences.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import arr, check_op, main_text, rand, run  # noqa: E402

SHAPE = (2, 3, 4)
# (axis or None, keepdims)
VARIANTS = [(None, False), (None, True), ([1], False), ([1], True), ([-1], False),
            ([0, 2], True), ([-3, -2], False), ([0, 1, 2], False)]


def reduced_shape(shape, axis, keep):
    axes = range(len(shape)) if axis is None else [a % len(shape) for a in axis]
    return tuple(1 if i in axes else d for i, d in enumerate(shape) if keep or i not in axes)


def check_reduce(name, x):
    for axis, keep in VARIANTS:
        attrs = []
        if axis is not None:
            attrs.append(f"axis = {arr(axis)}")
        if keep:
            attrs.append("keepdims = true")
        text = f'"rlx.{name}"(%a0)' + (" {" + ", ".join(attrs) + "}" if attrs else "")
        check_op(text, [x], reduced_shape(x.shape, axis, keep))
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

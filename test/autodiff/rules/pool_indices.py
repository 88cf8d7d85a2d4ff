# RUN: %PYTHON %s | FileCheck %s
# The rules of rlx.max_pool2d_with_indices (VJP: the output's is
# max_pool2d_indices_backward from the saved positions; the positions carry
# none) and of rlx.max_pool2d_indices_backward (JVP only: linear in its
# output gradient), checked against central finite differences (float64)
# through the reference interpreter, in reverse, forward and forward-over-
# reverse mode.  Each program is also compiled, exported, loaded and run
# against the interpreter (gradir.testing.oracle).

import os
import sys

import numpy as np

from gradir import interpret
from gradir.testing import (check_gradient, check_jacobian, check_jvp, directional_difference,
                            gradient_module)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import verify_adjoint  # noqa: E402

rng = np.random.default_rng(43)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def t(shape, elt="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elt + ">"


def arr(v):
    return "array<i64: " + ", ".join(map(str, v)) + ">"


def out_size(size, k, s, p0, p1, d, ceil):
    span = size + p0 + p1 - d * (k - 1) - 1
    return (-(-span // s) if ceil else span // s) + 1


# (case, input shape, pool, strides, padding, dilation, ceil)
POOLS = [("2x2/2", (1, 2, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False),
         ("3x3/2 pad 1 overlap", (1, 2, 6, 6), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),
         ("asym pad ceil", (2, 1, 5, 6), (3, 2), (2, 1), (0, 1, 1, 0), (1, 1), True),
         ("dilation 2", (1, 2, 6, 5), (2, 2), (1, 1), (1, 0, 0, 1), (2, 2), False),
         ("5x5 window", (1, 1, 7, 7), (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), False)]


def geometry(xs, pool, strides, padding, dil, ceil):
    attrs = (f"pool_size = {arr(pool)}, strides = {arr(strides)}, padding = {arr(padding)}, "
             f"dilation = {arr(dil)}" + (", ceil_mode = true" if ceil else ""))
    ys = (xs[0], xs[1], out_size(xs[2], pool[0], strides[0], padding[0], padding[2], dil[0], ceil),
          out_size(xs[3], pool[1], strides[1], padding[1], padding[3], dil[1], ceil))
    return attrs, ys


def distinct(*shape):
    """Values with no ties (gaps of 0.1 >> the FD step)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) * 0.1 - n * 0.05).reshape(shape)


@run
def test_with_indices_vjp():
    # sum(with_indices(x)#0 * wt): d/dx is max_pool2d's gradient, through
    # max_pool2d_indices_backward of the saved positions
    for case, xs, *g in POOLS:
        attrs, ys = geometry(xs, *g)
        text = f"""
func.func @main(%x: {t(xs)}, %wt: {t(ys)}) -> tensor<f64> {{
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {{{attrs}}} : ({t(xs)}) -> ({t(ys)}, {t(ys, "i32")})
  %p = "rlx.multiply"(%y#0, %wt) : ({t(ys)}, {t(ys)}) -> {t(ys)}
  %s = "rlx.sum"(%p) : ({t(ys)}) -> tensor<f64>
  return %s : tensor<f64>
}}"""
        verify_adjoint(text, [0])
        assert "rlx.max_pool2d_indices_backward" in str(gradient_module(text, wrt=[0]))
        check_gradient(text, [distinct(*xs), rng.standard_normal(ys)], wrt=[0])
        print(f"{case} vjp ok")
# CHECK-LABEL: TEST: test_with_indices_vjp
# CHECK: 2x2/2 vjp ok
# CHECK: 3x3/2 pad 1 overlap vjp ok
# CHECK: asym pad ceil vjp ok
# CHECK: dilation 2 vjp ok
# CHECK: 5x5 window vjp ok


@run
def test_with_indices_jvp():
    # both results: the values' tangent at each window's first maximum, the
    # positions' zero
    for case, xs, *g in POOLS:
        attrs, ys = geometry(xs, *g)
        text = f"""
func.func @main(%x: {t(xs)}) -> ({t(ys)}, {t(ys, "i32")}) {{
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {{{attrs}}} : ({t(xs)}) -> ({t(ys)}, {t(ys, "i32")})
  return %y#0, %y#1 : {t(ys)}, {t(ys, "i32")}
}}"""
        x = distinct(*xs)
        check_jvp(text, [x], wrt=[0])
        check_jacobian(text, [x], wrt=[0], jacobian_mode="forward")
        print(f"{case} jvp ok")
# CHECK-LABEL: TEST: test_with_indices_jvp
# CHECK: 2x2/2 jvp ok
# CHECK: 3x3/2 pad 1 overlap jvp ok
# CHECK: asym pad ceil jvp ok
# CHECK: dilation 2 jvp ok
# CHECK: 5x5 window jvp ok


@run
def test_indices_backward_jvp():
    # linear in output_grad (the positions are integers: no tangent)
    for case, xs, *g in POOLS:
        attrs, ys = geometry(xs, *g)
        window = g[0][0] * g[0][1]
        text = f"""
func.func @main(%g: {t(ys)}, %i: {t(ys, "i32")}) -> {t(xs)} {{
  %dx = "rlx.max_pool2d_indices_backward"(%g, %i) {{{attrs}}} : ({t(ys)}, {t(ys, "i32")}) -> {t(xs)}
  return %dx : {t(xs)}
}}"""
        args = [rng.standard_normal(ys), rng.integers(0, window, ys).astype(np.int32)]
        check_jvp(text, args, wrt=[0])
        check_jacobian(text, args, wrt=[0], jacobian_mode="forward")
        print(f"{case} jvp ok")
# CHECK-LABEL: TEST: test_indices_backward_jvp
# CHECK: 2x2/2 jvp ok
# CHECK: 3x3/2 pad 1 overlap jvp ok
# CHECK: asym pad ceil jvp ok
# CHECK: dilation 2 jvp ok
# CHECK: 5x5 window jvp ok


NET = """
func.func @main(%x: tensor<1x2x5x5xf64>, %w: tensor<2x2x2x2xf64>) -> tensor<f64> {
  %c = "rlx.conv2d"(%x, %w) : (tensor<1x2x5x5xf64>, tensor<2x2x2x2xf64>) -> tensor<1x2x4x4xf64>
  %m:2 = "rlx.max_pool2d_with_indices"(%c) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x2x4x4xf64>) -> (tensor<1x2x2x2xf64>, tensor<1x2x2x2xi32>)
  %q = "rlx.tanh"(%m#0) : (tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %s = "rlx.sum"(%q) : (tensor<1x2x2x2xf64>) -> tensor<f64>
  return %s : tensor<f64>
}
"""


@run
def test_hvp():
    # forward over reverse through max_pool2d_indices_backward (the VJP of
    # max_pool2d_with_indices): H v against central differences of the gradient
    args = [rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((2, 2, 2, 2))]
    vs = [rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((2, 2, 2, 2))]
    got = interpret(gradient_module(NET, mode="hvp"), "main_hvp", *args, *vs)[1:]
    want = directional_difference(gradient_module(NET), "main_adjoint", args, [0, 1], vs)[1:]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    print("hvp ok")
# CHECK-LABEL: TEST: test_hvp
# CHECK: hvp ok

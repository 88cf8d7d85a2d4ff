# RUN: %PYTHON %s | FileCheck %s
# Elementwise ops of the reference interpreter against hand-written numpy.

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from interp_helpers import FLOATS, check, rand, run, run_op, rng  # noqa: E402


def erf_ref(x):
    return np.array([math.erf(float(v)) for v in np.ravel(x)]).reshape(np.shape(x))


UNARY = {
    "negative": (lambda x: -x, None),
    "exp": (np.exp, None),
    "log": (np.log, (0.1, 3.0)),
    "sqrt": (np.sqrt, (0.1, 3.0)),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), (0.1, 3.0)),
    "sin": (np.sin, None),
    "cos": (np.cos, None),
    "tanh": (np.tanh, None),
    "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), None),
    "abs": (np.abs, None),
    "relu": (lambda x: np.where(x > 0, x, 0.0), None),
    "silu": (lambda x: x / (1.0 + np.exp(-x)), None),
    "gelu": (lambda x: 0.5 * x * (1.0 + erf_ref(x / math.sqrt(2.0))), None),
    "erf": (erf_ref, None),
    "square": (lambda x: x * x, None),
}


@run
def test_unary():
    for name, (ref, dom) in UNARY.items():
        for dt in FLOATS:
            lo, hi = dom or (-3.0, 3.0)
            x = rand((3, 4), dt, lo, hi)
            (y,) = run_op("rlx." + name, [x], [((3, 4), dt)])
            check(y, ref(x.astype(np.float64)), dt)
        print(name, "ok")
# CHECK-LABEL: TEST: test_unary
# CHECK: negative ok
# CHECK: exp ok
# CHECK: log ok
# CHECK: sqrt ok
# CHECK: rsqrt ok
# CHECK: sin ok
# CHECK: cos ok
# CHECK: tanh ok
# CHECK: sigmoid ok
# CHECK: abs ok
# CHECK: relu ok
# CHECK: silu ok
# CHECK: gelu ok
# CHECK: erf ok
# CHECK: square ok


@run
def test_unary_extremes():
    # sigmoid/silu must not overflow; 0-d tensors work.
    x = np.array([-800.0, -30.0, 0.0, 30.0, 800.0], np.float64)
    (y,) = run_op("rlx.sigmoid", [x], [((5,), np.float64)])
    check(y, [0.0, 1.0 / (1.0 + math.exp(30.0)), 0.5, 1.0 / (1.0 + math.exp(-30.0)), 1.0],
          np.float64)
    assert np.all(np.isfinite(y))
    s = np.array(-2.5, np.float32)
    (z,) = run_op("rlx.abs", [s], [((), np.float32)])
    check(z, np.float32(2.5), np.float32)
    h = rand((4,), np.float16, 0.5, 2.0)
    (w,) = run_op("rlx.exp", [h], [((4,), np.float16)])
    check(w, np.exp(h.astype(np.float64)), np.float16)
    print("extremes ok")
# CHECK-LABEL: TEST: test_unary_extremes
# CHECK: extremes ok


BINARY = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
    "power": lambda a, b: np.exp(b * np.log(a)),
    "maximum": lambda a, b: np.where(a >= b, a, b),
    "minimum": lambda a, b: np.where(a <= b, a, b),
}

SHAPES = [((2, 3), (2, 3), (2, 3)),
          ((2, 3, 4), (4,), (2, 3, 4)),
          ((2, 1, 4), (3, 1), (2, 3, 4)),
          ((), (3,), (3,)),
          ((5, 1), (), (5, 1))]


@run
def test_binary():
    for name, ref in BINARY.items():
        for dt in FLOATS:
            for sa, sb, so in SHAPES:
                a = rand(sa, dt, 0.5, 2.0)
                b = rand(sb, dt, 0.5, 2.0) if name != "subtract" else rand(sb, dt)
                (y,) = run_op("rlx." + name, [a, b], [(so, dt)])
                check(y, ref(a.astype(np.float64), b.astype(np.float64)), dt)
        print(name, "ok")
# CHECK-LABEL: TEST: test_binary
# CHECK: add ok
# CHECK: subtract ok
# CHECK: multiply ok
# CHECK: divide ok
# CHECK: power ok
# CHECK: maximum ok
# CHECK: minimum ok


@run
def test_integer_divide_truncates():
    # Relax (TVM) integer division truncates toward zero.
    a = np.array([-7, 7, -7, 6], np.int32)
    b = np.array([2, -2, -2, 3], np.int32)
    (y,) = run_op("rlx.divide", [a, b], [((4,), np.int32)])
    check(y, np.array([-3, -3, 3, 2]), np.int32)
    print("int divide ok")
# CHECK-LABEL: TEST: test_integer_divide_truncates
# CHECK: int divide ok


COMPARE = {
    "equal": lambda a, b: a == b,
    "not_equal": lambda a, b: a != b,
    "less": lambda a, b: a < b,
    "less_equal": lambda a, b: a <= b,
    "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b,
}


@run
def test_compare():
    for name, ref in COMPARE.items():
        for dt in FLOATS:
            a = rng.integers(0, 3, size=(2, 3, 4)).astype(dt)
            b = rng.integers(0, 3, size=(3, 1)).astype(dt)
            (y,) = run_op("rlx." + name, [a, b], [((2, 3, 4), "i1")])
            want = np.array([[[ref(a[i, j, k], b[j, 0]) for k in range(4)] for j in range(3)]
                             for i in range(2)])
            check(y, want, np.bool_)
        print(name, "ok")
# CHECK-LABEL: TEST: test_compare
# CHECK: equal ok
# CHECK: not_equal ok
# CHECK: less ok
# CHECK: less_equal ok
# CHECK: greater ok
# CHECK: greater_equal ok


@run
def test_where():
    for dt in FLOATS:
        c = rng.integers(0, 2, size=(3, 1)).astype(bool)
        a = rand((3, 4), dt)
        b = rand((4,), dt)
        (y,) = run_op("rlx.where", [c, a, b], [((3, 4), dt)])
        want = np.array([[a[i, j] if c[i, 0] else b[j] for j in range(4)] for i in range(3)])
        check(y, want, dt)
    print("where ok")
# CHECK-LABEL: TEST: test_where
# CHECK: where ok


def matmul_ref(a, b):
    """Naive loops over numpy's matmul rules."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    squeeze_a = a.ndim == 1
    squeeze_b = b.ndim == 1
    if squeeze_a:
        a = a[None, :]
    if squeeze_b:
        b = b[:, None]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    m, k = a.shape[-2:]
    n = b.shape[-1]
    out = np.zeros(batch + (m, n))
    for idx in np.ndindex(*batch):
        for i in range(m):
            for j in range(n):
                out[idx + (i, j)] = sum(a[idx + (i, t)] * b[idx + (t, j)] for t in range(k))
    if squeeze_a:
        out = out[..., 0, :]
    if squeeze_b:
        out = out[..., 0]
    return out


@run
def test_matmul():
    cases = [((3, 4), (4, 5), (3, 5)),
             ((4,), (4, 5), (5,)),
             ((3, 4), (4,), (3,)),
             ((4,), (4,), ()),
             ((2, 3, 4), (4, 2), (2, 3, 2)),
             ((2, 1, 3, 4), (5, 4, 2), (2, 5, 3, 2)),
             ((4,), (2, 4, 3), (2, 3))]
    for dt in FLOATS:
        for sa, sb, so in cases:
            a, b = rand(sa, dt), rand(sb, dt)
            (y,) = run_op("rlx.matmul", [a, b], [(so, dt)])
            check(y, matmul_ref(a, b), dt)
    print("matmul ok")
# CHECK-LABEL: TEST: test_matmul
# CHECK: matmul ok

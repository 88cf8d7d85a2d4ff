# RUN: %PYTHON %s | FileCheck %s
# Reductions of the reference interpreter against hand-written loops.

import itertools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from interp_helpers import FLOATS, check, rand, run, run_op  # noqa: E402


def reduce_ref(x, axes, keepdims, fn):
    """Applies ``fn`` (a function of a Python list) to each group of
    elements that share the kept coordinates."""
    x = x.astype(np.float64)
    nd = x.ndim
    axes = list(range(nd)) if axes is None else sorted(a % nd for a in axes)
    kept = [d for d in range(nd) if d not in axes]
    out_shape = tuple(x.shape[d] for d in kept)
    out = np.zeros(out_shape)
    for oidx in np.ndindex(*out_shape):
        vals = []
        for ridx in itertools.product(*[range(x.shape[a]) for a in axes]):
            full = [0] * nd
            for d, i in zip(kept, oidx):
                full[d] = i
            for d, i in zip(axes, ridx):
                full[d] = i
            vals.append(x[tuple(full)])
        out[oidx] = fn(vals)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else x.shape[d] for d in range(nd)))
    return out


def _mean(v):
    return sum(v) / len(v)


def _var(v):
    m = _mean(v)
    return sum((t - m) ** 2 for t in v) / len(v)


def _prod(v):
    p = 1.0
    for t in v:
        p *= t
    return p


REDUCE = {"sum": sum, "mean": _mean, "max": max, "min": min, "prod": _prod, "variance": _var}
AXES = [None, [1], [-1], [0, 2], [-3, -2]]


def arr(v):
    return "array<i64: " + ", ".join(map(str, v)) + ">"


@run
def test_reductions():
    for name, fn in REDUCE.items():
        for dt in FLOATS:
            x = rand((2, 3, 4), dt, 0.5, 1.5)
            for axes in AXES:
                for keep in (False, True):
                    want = reduce_ref(x, axes, keep, fn)
                    attrs = []
                    if axes is not None:
                        attrs.append(f"axis = {arr(axes)}")
                    if keep:
                        attrs.append("keepdims = true")
                    (y,) = run_op("rlx." + name, [x], [(want.shape, dt)], ", ".join(attrs))
                    check(y, want, dt)
        print(name, "ok")
# CHECK-LABEL: TEST: test_reductions
# CHECK: sum ok
# CHECK: mean ok
# CHECK: max ok
# CHECK: min ok
# CHECK: prod ok
# CHECK: variance ok


@run
def test_keepdims_false_explicit():
    x = rand((3, 4), np.float64)
    (y,) = run_op("rlx.sum", [x], [((3,), np.float64)], "axis = array<i64: 1>, keepdims = false")
    check(y, [sum(x[i]) for i in range(3)], np.float64)
    print("keepdims false ok")
# CHECK-LABEL: TEST: test_keepdims_false_explicit
# CHECK: keepdims false ok


@run
def test_cumsum():
    for dt in FLOATS:
        x = rand((3, 4), dt)
        (y,) = run_op("rlx.cumsum", [x], [((3, 4), dt)], "axis = array<i64: 1>")
        want = np.array([[sum(x[i, :j + 1].astype(np.float64)) for j in range(4)]
                         for i in range(3)])
        check(y, want, dt)
        (z,) = run_op("rlx.cumsum", [x], [((3, 4), dt)], "axis = array<i64: -2>")
        want = np.array([[sum(x[:i + 1, j].astype(np.float64)) for j in range(4)]
                         for i in range(3)])
        check(z, want, dt)
        (w,) = run_op("rlx.cumsum", [x], [((12,), dt)])   # absent: flattened
        flat = [float(v) for v in x.ravel()]
        check(w, np.array([sum(flat[:k + 1]) for k in range(12)]), dt)
    print("cumsum ok")
# CHECK-LABEL: TEST: test_cumsum
# CHECK: cumsum ok

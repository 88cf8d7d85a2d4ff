# RUN: %PYTHON %s | FileCheck %s
# Shape ops of the reference interpreter against hand-written numpy.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from interp_helpers import (FLOATS, InterpreterError, check, rand, run,  # noqa: E402
                            run_op, rng)


@run
def test_permute_dims():
    for dt in FLOATS:
        x = rand((2, 3, 4), dt)
        (y,) = run_op("rlx.permute_dims", [x], [((4, 2, 3), dt)], "axes = array<i64: 2, 0, 1>")
        want = np.empty((4, 2, 3))
        for i, j, k in np.ndindex(2, 3, 4):
            want[k, i, j] = x[i, j, k]
        check(y, want, dt)
        (z,) = run_op("rlx.permute_dims", [x], [((4, 3, 2), dt)])   # absent: reversed
        check(z, np.array([[[x[i, j, k] for i in range(2)] for j in range(3)]
                           for k in range(4)]), dt)
        (w,) = run_op("rlx.permute_dims", [x], [((3, 2, 4), dt)], "axes = array<i64: -2, 0, -1>")
        check(w, np.array([[x[i, j] for i in range(2)] for j in range(3)]), dt)
    print("permute_dims ok")
# CHECK-LABEL: TEST: test_permute_dims
# CHECK: permute_dims ok


@run
def test_reshape_flatten():
    for dt in FLOATS:
        x = rand((2, 3, 4), dt)
        flat = [x[i, j, k] for i in range(2) for j in range(3) for k in range(4)]
        (y,) = run_op("rlx.reshape", [x], [((6, 4), dt)])
        check(y, np.array(flat).reshape(6, 4), dt)
        (z,) = run_op("rlx.flatten", [x], [((24,), dt)])
        check(z, np.array(flat), dt)
        s = np.array(1.5, dt)
        (u,) = run_op("rlx.reshape", [s], [((1, 1), dt)])
        check(u, np.array([[1.5]]), dt)
    print("reshape flatten ok")
# CHECK-LABEL: TEST: test_reshape_flatten
# CHECK: reshape flatten ok


@run
def test_broadcast_to():
    for dt in FLOATS:
        x = rand((3, 1), dt)
        (y,) = run_op("rlx.broadcast_to", [x], [((2, 3, 4), dt)])
        want = np.array([[[x[j, 0] for _ in range(4)] for j in range(3)] for _ in range(2)])
        check(y, want, dt)
        y.flags.writeable and y.fill(0)   # results are writable copies
    print("broadcast_to ok")
# CHECK-LABEL: TEST: test_broadcast_to
# CHECK: broadcast_to ok


@run
def test_expand_squeeze():
    for dt in FLOATS:
        x = rand((2, 3), dt)
        (y,) = run_op("rlx.expand_dims", [x], [((1, 2, 3, 1), dt)], "axis = array<i64: 0, -1>")
        check(y, x.astype(np.float64)[None, :, :, None], dt)
        (z,) = run_op("rlx.expand_dims", [x], [((2, 1, 3), dt)], "axis = array<i64: 1>")
        check(z, x.astype(np.float64)[:, None, :], dt)
        w = rand((1, 3, 1, 2), dt)
        (a,) = run_op("rlx.squeeze", [w], [((3, 2), dt)])
        check(a, w[0, :, 0, :], dt)
        (b,) = run_op("rlx.squeeze", [w], [((1, 3, 2), dt)], "axis = array<i64: -2>")
        check(b, w[:, :, 0, :], dt)
    try:
        run_op("rlx.squeeze", [rand((2, 3))], [((2,), np.float32)], "axis = array<i64: 1>")
        raise AssertionError("squeezing a non-unit axis must fail")
    except InterpreterError as e:
        print("squeeze error:", "cannot squeeze axis 1" in str(e))
    print("expand_dims squeeze ok")
# CHECK-LABEL: TEST: test_expand_squeeze
# CHECK: squeeze error: True
# CHECK: expand_dims squeeze ok


@run
def test_concat():
    for dt in FLOATS:
        a, b, c = rand((2, 1, 3), dt), rand((2, 2, 3), dt), rand((2, 3, 3), dt)
        (y,) = run_op("rlx.concat", [a, b, c], [((2, 6, 3), dt)], "axis = array<i64: -2>")
        want = np.zeros((2, 6, 3))
        want[:, 0:1], want[:, 1:3], want[:, 3:6] = a, b, c
        check(y, want, dt)
        (z,) = run_op("rlx.concat", [a, a], [((4, 1, 3), dt)])   # absent axis: 0
        check(z, np.vstack([a.reshape(2, 3), a.reshape(2, 3)]).reshape(4, 1, 3), dt)
    print("concat ok")
# CHECK-LABEL: TEST: test_concat
# CHECK: concat ok


@run
def test_split():
    for dt in FLOATS:
        x = rand((6, 4), dt)
        outs = run_op("rlx.split", [x], [((2, 4), dt)] * 3, "sections = 3 : i64")
        for i, o in enumerate(outs):
            check(o, x[2 * i:2 * i + 2], dt)
        # uneven: ceil(5 / 3) = 2 -> 2, 2, 1 (Relax)
        x5 = rand((3, 5), dt)
        outs = run_op("rlx.split", [x5], [((3, 2), dt), ((3, 2), dt), ((3, 1), dt)],
                      "sections = 3 : i64, axis = array<i64: -1>")
        check(outs[0], x5[:, 0:2], dt)
        check(outs[1], x5[:, 2:4], dt)
        check(outs[2], x5[:, 4:5], dt)
        outs = run_op("rlx.split", [x], [((1, 4), dt), ((3, 4), dt), ((2, 4), dt)],
                      "indices = array<i64: 1, 4>, axis = array<i64: 0>")
        check(outs[0], x[0:1], dt)
        check(outs[1], x[1:4], dt)
        check(outs[2], x[4:6], dt)
        # one section: one result, the whole operand
        (whole,) = run_op("rlx.split", [x], [((6, 4), dt)], "sections = 1 : i64")
        check(whole, x, dt)
    print("split ok")
# CHECK-LABEL: TEST: test_split
# CHECK: split ok


def slice_ref(x, axis, b, e, s):
    """Index-by-index strided slice with TVM's clamping."""
    n = x.shape[axis]
    b = b + n if b < 0 else b
    e = e + n if e < 0 else e
    lo, hi = (0, n) if s > 0 else (-1, n - 1)
    b, e = min(max(b, lo), hi), min(max(e, lo), hi)
    idx = []
    i = b
    while (i < e) if s > 0 else (i > e):
        idx.append(i)
        i += s
    return np.take(x, np.array(idx, dtype=np.int64), axis=axis)


@run
def test_strided_slice():
    for dt in FLOATS:
        x = rand((5, 6, 7), dt)
        cases = [  # axes, begin, end, strides
            ([1], [1], [5], [2]),
            ([2], [-1], [-8], [-1]),        # whole axis reversed
            ([0], [4], [0], [-2]),
            ([2], [100], [-100], [-3]),     # clamped
            ([0], [-3], [100], [1]),
            ([1], [2], [2], [1]),           # empty
        ]
        for axes, b, e, s in cases:
            want = slice_ref(x, axes[0], b[0], e[0], s[0])
            arr = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"
            attrs = f"axes = {arr(axes)}, begin = {arr(b)}, end = {arr(e)}, strides = {arr(s)}"
            (y,) = run_op("rlx.strided_slice", [x], [(want.shape, dt)], attrs)
            check(y, want, dt)
        # several axes at once, strides absent
        want = x[1:3, :, 2:6]
        (y,) = run_op("rlx.strided_slice", [x], [(want.shape, dt)],
                      "axes = array<i64: 0, -1>, begin = array<i64: 1, 2>, "
                      "end = array<i64: 3, 6>")
        check(y, want, dt)
        want = slice_ref(slice_ref(x, 0, -1, -6, -2), 1, 5, 0, -3)
        (y,) = run_op("rlx.strided_slice", [x], [(want.shape, dt)],
                      "axes = array<i64: 0, 1>, begin = array<i64: -1, 5>, "
                      "end = array<i64: -6, 0>, strides = array<i64: -2, -3>")
        check(y, want, dt)
    print("strided_slice ok")
# CHECK-LABEL: TEST: test_strided_slice
# CHECK: strided_slice ok


@run
def test_take():
    for dt in FLOATS:
        x = rand((4, 5), dt)
        for it in (np.int32, np.int64):
            idx = np.array([[3, 0], [1, 1]], it)
            (y,) = run_op("rlx.take", [x, idx], [((2, 2, 5), dt)], "axis = array<i64: 0>")
            want = np.array([[x[idx[i, j]] for j in range(2)] for i in range(2)])
            check(y, want, dt)
            (z,) = run_op("rlx.take", [x, idx], [((4, 2, 2), dt)], "axis = array<i64: -1>")
            want = np.array([[[x[r, idx[i, j]] for j in range(2)] for i in range(2)]
                             for r in range(4)])
            check(z, want, dt)
            flat_idx = np.array([19, 0, 7], it)
            (w,) = run_op("rlx.take", [x, flat_idx], [((3,), dt)])   # absent: flattened
            check(w, np.array([x[3, 4], x[0, 0], x[1, 2]]), dt)
    try:
        run_op("rlx.take", [rand((4,)), np.array([4], np.int64)], [((1,), np.float32)],
               "axis = array<i64: 0>")
        raise AssertionError("out-of-range take must fail")
    except InterpreterError as e:
        print("take error:", "rlx.take" in str(e))
    print("take ok")
# CHECK-LABEL: TEST: test_take
# CHECK: take error: True
# CHECK: take ok


@run
def test_triu():
    for dt in FLOATS:
        x = rand((2, 4, 5), dt)
        for k in (0, 1, -1, 3):
            (y,) = run_op("rlx.triu", [x], [((2, 4, 5), dt)], f"k = {k} : i64")
            want = np.array([[[x[b, i, j] if j - i >= k else 0.0 for j in range(5)]
                              for i in range(4)] for b in range(2)])
            check(y, want, dt)
    print("triu ok")
# CHECK-LABEL: TEST: test_triu
# CHECK: triu ok


@run
def test_collapse_sum_to():
    for dt in FLOATS:
        x = rand((2, 3, 4), dt)
        (y,) = run_op("rlx.collapse_sum_to", [x], [((3, 1), dt)])
        want = np.zeros((3, 1))
        for i, j, k in np.ndindex(2, 3, 4):
            want[j, 0] += x[i, j, k]
        check(y, want, dt)
        (z,) = run_op("rlx.collapse_sum_to", [x], [((), dt)])
        check(z, np.float64(sum(x.astype(np.float64).ravel())), dt)
        (w,) = run_op("rlx.collapse_sum_to", [x], [((2, 3, 4), dt)])
        check(w, x, dt)
        (v,) = run_op("rlx.collapse_sum_to", [x], [((1, 4), dt)])
        check(v, x.astype(np.float64).sum(axis=(0, 1)).reshape(1, 4), dt)
    print("collapse_sum_to ok")
# CHECK-LABEL: TEST: test_collapse_sum_to
# CHECK: collapse_sum_to ok

# RUN: %PYTHON %s | FileCheck %s
# Neural-network ops of the reference interpreter against naive loops.

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from interp_helpers import FLOATS, check, rand, run, run_op, rng, ttype  # noqa: E402


def arr(v):
    return "array<i64: " + ", ".join(map(str, v)) + ">"


# ----------------------------------------------------------------------------
# softmax & losses

@run
def test_softmax():
    for dt in FLOATS:
        x = rand((3, 4), dt) * 3
        x[0, 0] = 80.0      # exp overflows in f32 without max subtraction
        x64 = x.astype(np.float64)
        (y,) = run_op("rlx.softmax", [x], [((3, 4), dt)])          # absent: -1
        want = np.array([[math.exp(x64[i, j] - max(x64[i])) /
                          sum(math.exp(v - max(x64[i])) for v in x64[i])
                          for j in range(4)] for i in range(3)])
        check(y, want, dt)
        (z,) = run_op("rlx.log_softmax", [x], [((3, 4), dt)], "axis = array<i64: 0>")
        want = np.array([[x64[i, j] - max(x64[:, j]) -
                          math.log(sum(math.exp(v - max(x64[:, j])) for v in x64[:, j]))
                          for j in range(4)] for i in range(3)])
        check(z, want, dt)
        (w,) = run_op("rlx.log_softmax", [x], [((3, 4), dt)], "axis = array<i64: -1>")
        assert np.all(np.isfinite(w))
        (u,) = run_op("rlx.softmax", [x], [((3, 4), dt)], "axis = array<i64: -2>")
        check(np.sum(u, axis=0), np.ones(4), dt, rtol=1e-5)
    print("softmax log_softmax ok")
# CHECK-LABEL: TEST: test_softmax
# CHECK: softmax log_softmax ok


@run
def test_cross_entropy_with_logits():
    for dt in FLOATS:
        x, y = rand((4, 5), dt), rand((4, 5), dt, 0, 1)
        (l,) = run_op("rlx.cross_entropy_with_logits", [x, y], [((), dt)])
        want = -sum(float(x[i, j]) * float(y[i, j]) for i in range(4) for j in range(5)) / 4
        check(l, np.float64(want), dt)
        x1, y1 = rand((5,), dt), rand((5,), dt, 0, 1)
        (l1,) = run_op("rlx.cross_entropy_with_logits", [x1, y1], [((), dt)])
        check(l1, np.float64(-sum(float(a) * float(b) for a, b in zip(x1, y1))), dt)
    print("cross_entropy_with_logits ok")
# CHECK-LABEL: TEST: test_cross_entropy_with_logits
# CHECK: cross_entropy_with_logits ok


def nll_ref(pred, t, w, reduction, ignore):
    """Relax nll_loss, element by element."""
    pred = pred.astype(np.float64)
    c = pred.shape[0] if pred.ndim == 1 else pred.shape[1]
    w = np.ones(c) if w is None else w.astype(np.float64)
    losses = np.zeros(t.shape)
    wsum = 0.0
    for idx in np.ndindex(*t.shape):
        cls = int(t[idx])
        if cls == ignore:
            continue
        p = pred[cls] if pred.ndim == 1 else pred[(idx[0], cls) + idx[1:]]
        losses[idx] = -w[cls] * p
        wsum += w[cls]
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.float64(losses.sum())
    return np.float64(losses.sum() / wsum)


@run
def test_nll_loss():
    for dt in FLOATS:
        for it in (np.int32, np.int64):
            cases = [((4, 5), (4,)), ((2, 3, 2, 2), (2, 2, 2)), ((5,), ())]
            for pshape, tshape in cases:
                c = pshape[0] if len(pshape) == 1 else pshape[1]
                pred = rand(pshape, dt)
                t = rng.integers(0, c, size=tshape).astype(it)
                if t.ndim:
                    t.flat[1] = 1               # the weight sum stays nonzero
                    t.flat[0] = 2
                t_ign = t.copy()
                if t.ndim:
                    t_ign.flat[0] = -100        # ignored by the default ignore_index
                w = rand((c,), dt, 0.5, 2.0)
                for reduction in ("mean", "sum", "none"):
                    out = () if reduction != "none" else tshape
                    attr = f'reduction = "{reduction}"'
                    (l,) = run_op("rlx.nll_loss", [pred, t, w], [(out, dt)], attr)
                    check(l, nll_ref(pred, t, w, reduction, -100), dt)
                    (l,) = run_op("rlx.nll_loss", [pred, t_ign, w], [(out, dt)], attr)
                    check(l, nll_ref(pred, t_ign, w, reduction, -100), dt)
                    # explicit ignore_index, without weights
                    (l,) = run_op("rlx.nll_loss", [pred, t], [(out, dt)],
                                  attr + ", ignore_index = 2 : i64")
                    check(l, nll_ref(pred, t, None, reduction, 2), dt)
    print("nll_loss ok")
# CHECK-LABEL: TEST: test_nll_loss
# CHECK: nll_loss ok


# ----------------------------------------------------------------------------
# convolution

def conv2d_ref(x, w, strides, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    pt, pl, pb, pr = pad
    ho = (h + pt + pb - dil[0] * (kh - 1) - 1) // strides[0] + 1
    wo = (wd + pl + pr - dil[1] * (kw - 1) - 1) // strides[1] + 1
    og = o // groups
    out = np.zeros((n, o, ho, wo))
    for b, oc, i, j in np.ndindex(n, o, ho, wo):
        g = oc // og
        acc = 0.0
        for ci, ky, kx in np.ndindex(cg, kh, kw):
            y = i * strides[0] + ky * dil[0] - pt
            xx = j * strides[1] + kx * dil[1] - pl
            if 0 <= y < h and 0 <= xx < wd:
                acc += float(x[b, g * cg + ci, y, xx]) * float(w[oc, ci, ky, kx])
        out[b, oc, i, j] = acc
    return out


CONV_CASES = [  # x shape, w shape, strides, padding, dilation, groups
    ((1, 2, 5, 5), (3, 2, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), (1, 0, 2, 1), (1, 1), 1),
    ((1, 2, 8, 8), (2, 2, 3, 3), (1, 2), (2, 2, 2, 2), (2, 2), 1),
    ((2, 4, 6, 5), (6, 2, 2, 3), (2, 2), (1, 1, 0, 1), (1, 2), 2),
    ((1, 4, 5, 5), (4, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4),   # depthwise
]


def conv_attrs(strides, pad, dil, groups):
    return (f"strides = {arr(strides)}, padding = {arr(pad)}, dilation = {arr(dil)}, "
            f"groups = {groups} : i64")


@run
def test_conv2d():
    for dt in FLOATS:
        for xs, ws, s, p, d, g in CONV_CASES:
            x, w = rand(xs, dt), rand(ws, dt)
            want = conv2d_ref(x, w, s, p, d, g)
            (y,) = run_op("rlx.conv2d", [x, w], [(want.shape, dt)], conv_attrs(s, p, d, g))
            check(y, want, dt, rtol=1e-4, atol=1e-5)
    print("conv2d ok")
# CHECK-LABEL: TEST: test_conv2d
# CHECK: conv2d ok


def conv2d_transpose_ref(x, w, strides, pad, dil, groups, out_pad):
    n, cin, h, wd = x.shape
    _, og, kh, kw = w.shape
    pt, pl, pb, pr = pad
    ho = (h - 1) * strides[0] - pt - pb + dil[0] * (kh - 1) + out_pad[0] + 1
    wo = (wd - 1) * strides[1] - pl - pr + dil[1] * (kw - 1) + out_pad[1] + 1
    cg = cin // groups
    out = np.zeros((n, og * groups, ho, wo))
    for b, ci, i, j in np.ndindex(n, cin, h, wd):
        g = ci // cg
        for oc, ky, kx in np.ndindex(og, kh, kw):
            y = i * strides[0] + ky * dil[0] - pt
            xx = j * strides[1] + kx * dil[1] - pl
            if 0 <= y < ho and 0 <= xx < wo:
                out[b, g * og + oc, y, xx] += float(x[b, ci, i, j]) * float(w[ci, oc, ky, kx])
    return out


@run
def test_conv2d_transpose():
    cases = [  # x shape, w shape (IOHW), strides, padding, dilation, groups, output_padding
        ((1, 2, 4, 4), (2, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, (0, 0)),
        ((2, 3, 3, 4), (3, 2, 3, 2), (2, 2), (1, 0, 1, 1), (1, 1), 1, (1, 1)),
        ((1, 4, 4, 3), (4, 1, 2, 3), (2, 1), (0, 1, 1, 0), (2, 1), 2, (1, 0)),
    ]
    for dt in FLOATS:
        for xs, ws, s, p, d, g, op in cases:
            x, w = rand(xs, dt), rand(ws, dt)
            want = conv2d_transpose_ref(x, w, s, p, d, g, op)
            attrs = conv_attrs(s, p, d, g) + f", output_padding = {arr(op)}"
            (y,) = run_op("rlx.conv2d_transpose", [x, w], [(want.shape, dt)], attrs)
            check(y, want, dt, rtol=1e-4, atol=1e-5)
    # conv2d_transpose is the adjoint of conv2d in its data:
    # <conv2d(x, w), y> == <x, conv2d_transpose(y, w)>, the OIHW conv weight
    # read as the transpose's IOHW weight; output_padding restores x's size.
    x, w = rand((2, 4, 7, 6), np.float64), rand((6, 2, 3, 2), np.float64)
    s, p, d, g = (2, 1), (1, 0, 2, 1), (1, 2), 2
    cshape = conv2d_ref(x, w, s, p, d, g).shape
    (cx,) = run_op("rlx.conv2d", [x, w], [(cshape, np.float64)], conv_attrs(s, p, d, g))
    yv = rand(cx.shape, np.float64)
    op = [x.shape[2 + i] - ((cshape[2 + i] - 1) * s[i] - p[i] - p[i + 2]
                            + d[i] * (w.shape[2 + i] - 1) + 1) for i in range(2)]
    (tx,) = run_op("rlx.conv2d_transpose", [yv, w], [(x.shape, np.float64)],
                   conv_attrs(s, p, d, g) + f", output_padding = {arr(op)}")
    lhs = float(np.sum(cx * yv))
    rhs = float(np.sum(x * tx))
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs)), (lhs, rhs)
    print("conv2d_transpose ok")
# CHECK-LABEL: TEST: test_conv2d_transpose
# CHECK: conv2d_transpose ok


# ----------------------------------------------------------------------------
# pooling

def pool_out(size, k, s, d, before, after, ceil):
    num = size + before + after - d * (k - 1) - 1
    return (num + (s - 1 if ceil else 0)) // s + 1


def pool_windows(x, k, s, p, d, ceil):
    """Yields (n, c, i, j, positions) with positions the window's (y, x)
    coordinates in row-major window order (may lie in the padding)."""
    n, c, h, w = x.shape
    ho = pool_out(h, k[0], s[0], d[0], p[0], p[2], ceil)
    wo = pool_out(w, k[1], s[1], d[1], p[1], p[3], ceil)
    for b, ch, i, j in np.ndindex(n, c, ho, wo):
        pos = [(i * s[0] + ky * d[0] - p[0], j * s[1] + kx * d[1] - p[1])
               for ky in range(k[0]) for kx in range(k[1])]
        yield b, ch, i, j, pos, (ho, wo)


def max_pool_ref(x, k, s, p, d, ceil):
    n, c, h, w = x.shape
    out = None
    for b, ch, i, j, pos, oshape in pool_windows(x, k, s, p, d, ceil):
        if out is None:
            out = np.zeros((n, c) + oshape)
        vals = [float(x[b, ch, y, xx]) for y, xx in pos if 0 <= y < h and 0 <= xx < w]
        out[b, ch, i, j] = max(vals) if vals else -np.inf
    return out


def avg_count(pos, h, w, p, include_pad):
    if include_pad:
        return sum(1 for y, xx in pos if -p[0] <= y < h + p[2] and -p[1] <= xx < w + p[3])
    return sum(1 for y, xx in pos if 0 <= y < h and 0 <= xx < w)


def avg_pool_ref(x, k, s, p, d, ceil, include_pad):
    n, c, h, w = x.shape
    out = None
    for b, ch, i, j, pos, oshape in pool_windows(x, k, s, p, d, ceil):
        if out is None:
            out = np.zeros((n, c) + oshape)
        total = sum(float(x[b, ch, y, xx]) for y, xx in pos if 0 <= y < h and 0 <= xx < w)
        out[b, ch, i, j] = total / max(avg_count(pos, h, w, p, include_pad), 1)
    return out


def max_pool_backward_ref(g, x, k, s, p, d, ceil):
    n, c, h, w = x.shape
    dx = np.zeros(x.shape)
    for b, ch, i, j, pos, _ in pool_windows(x, k, s, p, d, ceil):
        best, at = -np.inf, None
        for y, xx in pos:
            v = float(x[b, ch, y, xx]) if 0 <= y < h and 0 <= xx < w else -np.inf
            if at is None or v > best:
                best, at = v, (y, xx)
        if 0 <= at[0] < h and 0 <= at[1] < w:
            dx[b, ch, at[0], at[1]] += float(g[b, ch, i, j])
    return dx


def avg_pool_backward_ref(g, x, k, s, p, d, ceil, include_pad):
    n, c, h, w = x.shape
    dx = np.zeros(x.shape)
    for b, ch, i, j, pos, _ in pool_windows(x, k, s, p, d, ceil):
        cnt = max(avg_count(pos, h, w, p, include_pad), 1)
        for y, xx in pos:
            if 0 <= y < h and 0 <= xx < w:
                dx[b, ch, y, xx] += float(g[b, ch, i, j]) / cnt
    return dx


POOL_CASES = [  # x shape, pool_size, strides, padding, dilation, ceil_mode
    ((1, 2, 6, 6), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False),
    ((2, 3, 7, 5), (3, 3), (2, 1), (1, 1, 1, 1), (1, 1), False),
    ((1, 2, 7, 7), (3, 2), (2, 2), (1, 0, 0, 1), (1, 1), True),
    ((1, 1, 9, 8), (2, 3), (1, 2), (0, 1, 1, 0), (2, 2), False),
    ((1, 2, 5, 5), (3, 3), (3, 3), (1, 1, 1, 1), (1, 1), True),
]


def pool_attrs(k, s, p, d, ceil, include_pad=None):
    a = (f"pool_size = {arr(k)}, strides = {arr(s)}, padding = {arr(p)}, "
         f"dilation = {arr(d)}, ceil_mode = {'true' if ceil else 'false'}")
    if include_pad is not None:
        a += f", count_include_pad = {'true' if include_pad else 'false'}"
    return a


@run
def test_max_pool2d():
    for dt in FLOATS:
        for xs, k, s, p, d, ceil in POOL_CASES:
            x = rand(xs, dt)
            want = max_pool_ref(x, k, s, p, d, ceil)
            (y,) = run_op("rlx.max_pool2d", [x], [(want.shape, dt)], pool_attrs(k, s, p, d, ceil))
            check(y, want, dt)
    # defaults: strides 1, no padding, dilation 1
    x = rand((1, 1, 4, 4), np.float32)
    (y,) = run_op("rlx.max_pool2d", [x], [((1, 1, 3, 3), np.float32)],
                  "pool_size = array<i64: 2, 2>, strides = array<i64: 1, 1>, "
                  "padding = array<i64: 0, 0, 0, 0>")
    check(y, max_pool_ref(x, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1), False), np.float32)
    print("max_pool2d ok")
# CHECK-LABEL: TEST: test_max_pool2d
# CHECK: max_pool2d ok


@run
def test_avg_pool2d():
    for dt in FLOATS:
        for xs, k, s, p, d, ceil in POOL_CASES:
            x = rand(xs, dt)
            for include_pad in (None, False, True):
                want = avg_pool_ref(x, k, s, p, d, ceil, bool(include_pad))
                (y,) = run_op("rlx.avg_pool2d", [x], [(want.shape, dt)],
                              pool_attrs(k, s, p, d, ceil, include_pad))
                check(y, want, dt)
    print("avg_pool2d ok")
# CHECK-LABEL: TEST: test_avg_pool2d
# CHECK: avg_pool2d ok


@run
def test_pool_backward():
    for dt in FLOATS:
        for xs, k, s, p, d, ceil in POOL_CASES:
            x = rand(xs, dt)
            oshape = max_pool_ref(x, k, s, p, d, ceil).shape
            g = rand(oshape, dt)
            (dx,) = run_op("rlx.max_pool2d_backward", [g, x], [(xs, dt)],
                           pool_attrs(k, s, p, d, ceil))
            check(dx, max_pool_backward_ref(g, x, k, s, p, d, ceil), dt)
            for include_pad in (False, True):
                (dx,) = run_op("rlx.avg_pool2d_backward", [g, x], [(xs, dt)],
                               pool_attrs(k, s, p, d, ceil, include_pad))
                check(dx, avg_pool_backward_ref(g, x, k, s, p, d, ceil, include_pad), dt)
    # ties: the first maximum of the window (row-major) takes the gradient
    x = np.array([[[[1.0, 3.0], [3.0, 3.0]]]], np.float64)
    g = np.array([[[[5.0]]]], np.float64)
    (dx,) = run_op("rlx.max_pool2d_backward", [g, x], [((1, 1, 2, 2), np.float64)],
                   pool_attrs((2, 2), (1, 1), (0, 0, 0, 0), (1, 1), False))
    check(dx, np.array([[[[0.0, 5.0], [0.0, 0.0]]]]), np.float64)
    # avg_pool2d_backward is the adjoint of avg_pool2d
    xs, k, s, p, d, ceil = POOL_CASES[2]
    x = rand(xs, np.float64)
    a = pool_attrs(k, s, p, d, ceil, True)
    oshape = max_pool_ref(x, k, s, p, d, ceil).shape
    (y,) = run_op("rlx.avg_pool2d", [x], [(oshape, np.float64)], a)
    g = rand(oshape, np.float64)
    (dx,) = run_op("rlx.avg_pool2d_backward", [g, x], [(xs, np.float64)], a)
    assert abs(float(np.sum(y * g)) - float(np.sum(x * dx))) < 1e-10
    print("pool backward ok")
# CHECK-LABEL: TEST: test_pool_backward
# CHECK: pool backward ok


# ----------------------------------------------------------------------------
# normalization

def norm_ref(x, axes, fn):
    """Applies ``fn(values) -> normalised values`` to each group of elements
    that share the coordinates outside ``axes``."""
    x = x.astype(np.float64)
    axes = sorted(a % x.ndim for a in axes)
    moved = np.moveaxis(x, axes, list(range(x.ndim - len(axes), x.ndim)))
    out = np.empty_like(moved)
    for idx in np.ndindex(*moved.shape[:x.ndim - len(axes)]):
        out[idx] = fn(moved[idx])
    return np.moveaxis(out, list(range(x.ndim - len(axes), x.ndim)), axes)


@run
def test_layer_norm():
    for dt in FLOATS:
        x = rand((2, 3, 4), dt)
        for axes in ([-1], [1, 2]):
            pshape = tuple(x.shape[a] for a in axes)
            gamma, beta = rand(pshape, dt), rand(pshape, dt)
            eps = 1e-5

            def fn(v):
                m = v.mean()
                var = ((v - m) ** 2).mean()
                return (v - m) / math.sqrt(var + eps) * gamma + beta

            want = norm_ref(x, axes, fn)
            (y,) = run_op("rlx.layer_norm", [x, gamma, beta], [(x.shape, dt)],
                          f"axes = {arr(axes)}, epsilon = 1.0e-05 : f64")
            check(y, want, dt, rtol=1e-4, atol=1e-5)
        # a non-trailing axis: gamma has that axis' length
        gamma, beta = rand((3,), dt), rand((3,), dt)
        want = norm_ref(np.moveaxis(x, 1, 2), [-1],
                        lambda v: (v - v.mean()) / math.sqrt(((v - v.mean()) ** 2).mean() + 0.1)
                        * gamma + beta)
        (y,) = run_op("rlx.layer_norm", [x, gamma, beta], [(x.shape, dt)],
                      "axes = array<i64: 1>, epsilon = 1.0e-01 : f64")
        check(y, np.moveaxis(want, 2, 1), dt, rtol=1e-4, atol=1e-5)
    print("layer_norm ok")
# CHECK-LABEL: TEST: test_layer_norm
# CHECK: layer_norm ok


@run
def test_rms_norm():
    for dt in FLOATS:
        x = rand((2, 3, 4), dt)
        wt = rand((4,), dt)
        want = norm_ref(x, [-1], lambda v: v / math.sqrt((v ** 2).mean() + 1e-5) * wt)
        (y,) = run_op("rlx.rms_norm", [x, wt], [(x.shape, dt)])     # defaults
        check(y, want, dt, rtol=1e-4, atol=1e-5)
        w2 = rand((3, 4), dt)
        want = norm_ref(x, [1, 2], lambda v: v / math.sqrt((v ** 2).mean() + 0.5) * w2)
        (y,) = run_op("rlx.rms_norm", [x, w2], [(x.shape, dt)],
                      "axes = array<i64: -2, -1>, epsilon = 5.0e-01 : f64")
        check(y, want, dt, rtol=1e-4, atol=1e-5)
    print("rms_norm ok")
# CHECK-LABEL: TEST: test_rms_norm
# CHECK: rms_norm ok


@run
def test_softmax_of_empty_axis():
    # One semantics with compiled code: softmax over an axis of size 0 is an
    # empty result (max/min over it are refused by both).
    x = np.zeros((3, 0), np.float32)
    for name in ("softmax", "log_softmax"):
        (y,) = run_op(f"rlx.{name}", [x], [((3, 0), np.float32)], "axis = array<i64: 1>")
        print(name, y.shape, y.dtype)
# CHECK-LABEL: TEST: test_softmax_of_empty_axis
# CHECK: softmax (3, 0) float32
# CHECK: log_softmax (3, 0) float32

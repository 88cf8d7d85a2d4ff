"""Neural-network ops: softmax log_softmax cross_entropy_with_logits nll_loss
conv2d conv2d_transpose max_pool2d avg_pool2d (and their backward ops)
max_pool2d_with_indices max_pool2d_indices_backward layer_norm rms_norm.  Layouts are NCHW data / OIHW (conv2d) and IOHW
(conv2d_transpose) weights, as Relax's defaults."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .core import register


def _c(x, v):
    return np.asarray(x).dtype.type(v)


# ----------------------------------------------------------------------------
# softmax & losses

def _one_axis(ctx, default=-1):
    axis = ctx.ints("axis", [default])
    if len(axis) != 1:
        raise ctx.error(f"takes one axis, got {axis}")
    return axis[0]


@register("rlx.softmax")
def _softmax(ctx, x):
    ax = _one_axis(ctx)
    if x.size == 0:                      # nothing to normalize
        return x.copy()
    e = np.exp(x - np.max(x, axis=ax, keepdims=True))
    return e / np.sum(e, axis=ax, keepdims=True, dtype=x.dtype)


@register("rlx.log_softmax")
def _log_softmax(ctx, x):
    ax = _one_axis(ctx)
    if x.size == 0:                      # nothing to normalize
        return x.copy()
    s = x - np.max(x, axis=ax, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=ax, keepdims=True, dtype=x.dtype))


@register("rlx.cross_entropy_with_logits")
def _cross_entropy_with_logits(ctx, x, y):
    # Relax: -sum(x * y) for 1-D inputs, -sum(x * y) / batch_size otherwise.
    total = -np.sum(x * y, dtype=x.dtype)
    if x.ndim == 1:
        return total
    return total / _c(x, x.shape[0])


@register("rlx.nll_loss")
def _nll_loss(ctx, pred, targets, weights=None):
    # Relax nll_loss: predictions (C,) or (N, C, d1, ...), targets () or
    # (N, d1, ...), weights (C,) (default ones).  loss_i = -w[t_i] * pred[i, t_i],
    # 0 where t_i == ignore_index; "mean" divides the sum by the sum of the
    # weights of the non-ignored targets.
    reduction = ctx.str("reduction", "mean")
    ignore_index = ctx.int("ignore_index", -100)
    n_classes = pred.shape[0] if pred.ndim == 1 else pred.shape[1]
    if weights is None:
        weights = np.ones((n_classes,), dtype=pred.dtype)
    t = np.asarray(targets).astype(np.int64)
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    if np.any((tc < 0) | (tc >= n_classes)):
        raise ctx.error(f"target out of range [0, {n_classes})")
    if pred.ndim == 1:
        picked = pred[tc]
    else:
        picked = np.take_along_axis(pred, np.expand_dims(tc, 1), axis=1).squeeze(1)
    w = np.where(valid, weights[tc], _c(pred, 0)).astype(pred.dtype)
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.sum(loss, dtype=pred.dtype)
    if reduction == "mean":
        return np.sum(loss, dtype=pred.dtype) / np.sum(w, dtype=pred.dtype)
    raise ctx.error(f"unknown reduction {reduction!r}")


# ----------------------------------------------------------------------------
# convolution & pooling geometry

def _pair(ctx, name, default):
    v = ctx.ints(name, default)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise ctx.error(f"'{name}' must have 1 or 2 values, got {v}")
    return tuple(v)


def _padding(ctx):
    """(top, left, bottom, right); Relax also accepts 1 value (all sides) and 2
    values (top = bottom, left = right)."""
    p = ctx.ints("padding", [0, 0, 0, 0])
    if len(p) == 1:
        return (p[0],) * 4
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    if len(p) != 4:
        raise ctx.error(f"'padding' must have 1, 2 or 4 values, got {p}")
    return tuple(p)


def _check_layout(ctx, data="NCHW", kernel=None):
    for name, want in (("data_layout", data), ("layout", data), ("out_layout", data),
                       ("kernel_layout", kernel)):
        if want is not None and ctx.has(name) and ctx.str(name) != want:
            raise ctx.error(f"only {name} = \"{want}\" is supported")


def _windows(xp, out_hw, kernel, strides, dilation):
    """View ``[n, c, i, j, ky, kx] = xp[n, c, i*sh + ky*dh, j*sw + kx*dw]``."""
    xp = np.ascontiguousarray(xp)
    n, c = xp.shape[:2]
    s = xp.strides
    # a stride (dilation) along an axis of one window (one window position)
    # is never used: any value does (2^63 - 1 overflowed the byte strides)
    strides = [st if out > 1 else 1 for st, out in zip(strides, out_hw)]
    dilation = [d if k > 1 else 1 for d, k in zip(dilation, kernel)]
    return as_strided(xp, shape=(n, c, out_hw[0], out_hw[1], kernel[0], kernel[1]),
                      strides=(s[0], s[1], s[2] * strides[0], s[3] * strides[1],
                               s[2] * dilation[0], s[3] * dilation[1]),
                      writeable=False)


@register("rlx.conv2d")
def _conv2d(ctx, x, w):
    _check_layout(ctx, "NCHW", "OIHW")
    strides = _pair(ctx, "strides", [1, 1])
    dilation = _pair(ctx, "dilation", [1, 1])
    pt, pl, pb, pr = _padding(ctx)
    groups = ctx.int("groups", 1)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if c != cg * groups or o % groups:
        raise ctx.error(f"channels do not match groups={groups}: data {x.shape}, "
                        f"weight {w.shape}")
    ho = (h + pt + pb - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    wo = (wd + pl + pr - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    win = _windows(xp, (ho, wo), (kh, kw), strides, dilation)
    win = win.reshape(n, groups, cg, ho, wo, kh, kw)
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    out = np.einsum("ngchwyx,gocyx->ngohw", win, wg, optimize=True)
    return out.reshape(n, o, ho, wo).astype(np.result_type(x, w), copy=False)


@register("rlx.conv2d_transpose")
def _conv2d_transpose(ctx, x, w):
    # Relax conv2d_transpose: weight (C_in, C_out / groups, kh, kw) (IOHW),
    # out = (in - 1) * stride - pad_before - pad_after + dilation * (k - 1)
    #       + output_padding + 1; the gradient of conv2d w.r.t. its data.
    _check_layout(ctx, "NCHW", "IOHW")
    strides = _pair(ctx, "strides", [1, 1])
    dilation = _pair(ctx, "dilation", [1, 1])
    out_pad = _pair(ctx, "output_padding", [0, 0])
    pt, pl, pb, pr = _padding(ctx)
    groups = ctx.int("groups", 1)
    n, cin, h, wd = x.shape
    cin_w, og, kh, kw = w.shape
    if cin_w != cin or cin % groups:
        raise ctx.error(f"channels do not match groups={groups}: data {x.shape}, "
                        f"weight {w.shape}")
    cout = og * groups
    cg = cin // groups
    full_h = (h - 1) * strides[0] + dilation[0] * (kh - 1) + 1
    full_w = (wd - 1) * strides[1] + dilation[1] * (kw - 1) + 1
    dt = np.result_type(x, w)
    full = np.zeros((n, cout, full_h, full_w), dtype=dt)
    xg = x.reshape(n, groups, cg, h, wd)
    wg = w.reshape(groups, cg, og, kh, kw)
    for ky in range(kh):
        for kx in range(kw):
            contrib = np.einsum("ngchw,gco->ngohw", xg, wg[..., ky, kx]).reshape(n, cout, h, wd)
            y0, x0 = ky * dilation[0], kx * dilation[1]
            full[:, :, y0:y0 + (h - 1) * strides[0] + 1:strides[0],
                 x0:x0 + (wd - 1) * strides[1] + 1:strides[1]] += contrib
    ho = full_h - pt - pb + out_pad[0]
    wo = full_w - pl - pr + out_pad[1]
    out = np.zeros((n, cout, ho, wo), dtype=dt)
    # rows [pt, pt + ho) of the full result; beyond it (output_padding) is 0.
    src_h = full[:, :, pt:pt + ho, pl:pl + wo]
    out[:, :, :src_h.shape[2], :src_h.shape[3]] = src_h
    return out


class _Pool:
    """Geometry of a Relax 2-D pooling op (NCHW)."""

    def __init__(self, ctx, shape):
        _check_layout(ctx, "NCHW")
        self.kernel = _pair(ctx, "pool_size", [1, 1])
        self.strides = _pair(ctx, "strides", [1, 1])    # Relax default (1, 1)
        self.dilation = _pair(ctx, "dilation", [1, 1])
        self.pad = _padding(ctx)
        self.ceil = ctx.bool("ceil_mode", False)
        self.include_pad = ctx.bool("count_include_pad", False)
        _, _, h, w = shape
        pt, pl, pb, pr = self.pad
        out = []
        for size, before, after, k, s, d in ((h, pt, pb, self.kernel[0], self.strides[0],
                                              self.dilation[0]),
                                             (w, pl, pr, self.kernel[1], self.strides[1],
                                              self.dilation[1])):
            num = size + before + after - d * (k - 1) - 1
            if self.ceil:  # Relax: ceil instead of floor when dividing by stride
                num += s - 1
            out.append(num // s + 1)
        self.out = tuple(out)
        # Extra rows/cols after the padding that ceil_mode windows may reach.
        self.extra = tuple(
            max(0, (o - 1) * s + d * (k - 1) + 1 - (size + before + after))
            for o, s, d, k, size, before, after in
            ((out[0], self.strides[0], self.dilation[0], self.kernel[0], h, pt, pb),
             (out[1], self.strides[1], self.dilation[1], self.kernel[1], w, pl, pr)))

    def padded(self, x, value):
        pt, pl, pb, pr = self.pad
        return np.pad(x, ((0, 0), (0, 0), (pt, pb + self.extra[0]), (pl, pr + self.extra[1])),
                      constant_values=value)

    def windows(self, xp):
        return _windows(xp, self.out, self.kernel, self.strides, self.dilation)

    def counts(self, shape, dtype):
        """Divisor of avg pooling per output position (shape (Ho, Wo)).

        count_include_pad=False: elements inside the data.  True: elements
        inside the data and its explicit padding (TVM excludes the ceil_mode
        overhang).  At least 1."""
        _, _, h, w = shape
        pt, pl, pb, pr = self.pad
        counts = []
        for o, s, d, k, size, before, after in (
                (self.out[0], self.strides[0], self.dilation[0], self.kernel[0], h, pt, pb),
                (self.out[1], self.strides[1], self.dilation[1], self.kernel[1], w, pl, pr)):
            pos = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d - before
            lo, hi = (-before, size + after) if self.include_pad else (0, size)
            counts.append(((pos >= lo) & (pos < hi)).sum(axis=1))
        c = np.maximum(counts[0][:, None] * counts[1][None, :], 1)
        return c.astype(dtype)

    def scatter(self, contrib_fn, shape, dtype):
        """Sums, for each kernel offset (ky, kx), ``contrib_fn(ky, kx)`` (shape
        (N, C, Ho, Wo)) into the padded input positions, then crops the padding."""
        n, c, h, w = shape
        pt, pl, pb, pr = self.pad
        gp = np.zeros((n, c, h + pt + pb + self.extra[0], w + pl + pr + self.extra[1]),
                      dtype=dtype)
        (ho, wo), (sh, sw), (dh, dw) = self.out, self.strides, self.dilation
        for ky in range(self.kernel[0]):
            for kx in range(self.kernel[1]):
                y0, x0 = ky * dh, kx * dw
                gp[:, :, y0:y0 + (ho - 1) * sh + 1:sh, x0:x0 + (wo - 1) * sw + 1:sw] += \
                    contrib_fn(ky, kx)
        return gp[:, :, pt:pt + h, pl:pl + w]


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


@register("rlx.max_pool2d")
def _max_pool2d(ctx, x):
    p = _Pool(ctx, x.shape)
    return p.windows(p.padded(x, _lowest(x.dtype))).max(axis=(4, 5))


@register("rlx.avg_pool2d")
def _avg_pool2d(ctx, x):
    p = _Pool(ctx, x.shape)
    s = p.windows(p.padded(x, 0)).sum(axis=(4, 5), dtype=x.dtype)
    return s / p.counts(x.shape, x.dtype)


@register("rlx.max_pool2d_backward")
def _max_pool2d_backward(ctx, grad, x):
    # Relax max_pool2d_backward(output_grad, data): each window's output
    # gradient goes to the position of its maximum (the first one in
    # row-major window order on ties); positions in the padding are dropped.
    p = _Pool(ctx, x.shape)
    win = p.windows(p.padded(x, _lowest(x.dtype)))
    n, c, ho, wo, kh, kw = win.shape
    arg = win.reshape(n, c, ho, wo, kh * kw).argmax(axis=-1)
    zero = _c(grad, 0)
    return p.scatter(lambda ky, kx: np.where(arg == ky * kw + kx, grad, zero),
                     x.shape, grad.dtype)


@register("rlx.avg_pool2d_backward")
def _avg_pool2d_backward(ctx, grad, x):
    # Relax avg_pool2d_backward(output_grad, data): each window's output
    # gradient, divided by the forward divisor, to every position of the window.
    p = _Pool(ctx, x.shape)
    g = grad / p.counts(x.shape, grad.dtype)
    return p.scatter(lambda ky, kx: g, x.shape, grad.dtype)


# ----------------------------------------------------------------------------
# normalization

def _norm_axes(ctx, x, default):
    axes = ctx.ints("axes", default)
    return [a % x.ndim for a in axes]


def _param_view(p, x, axes):
    """Reshapes gamma-like ``p`` (shape ``x.shape[axes]`` in the order of
    ``axes``) to broadcast against ``x``."""
    order = np.argsort(axes)
    p = np.transpose(p, order) if p.ndim == len(axes) and p.ndim > 1 else p
    shape = [x.shape[i] if i in axes else 1 for i in range(x.ndim)]
    return np.reshape(p, shape)


@register("rlx.layer_norm")
def _layer_norm(ctx, x, gamma, beta):
    # Relax layer_norm: (x - mean) / sqrt(var + eps) * gamma + beta over `axes`
    # (population variance); epsilon default 1e-5, center/scale default true.
    axes = _norm_axes(ctx, x, [-1])
    eps = _c(x, ctx.float("epsilon", 1e-5))
    ax = tuple(axes)
    mean = np.mean(x, axis=ax, keepdims=True, dtype=x.dtype)
    var = np.mean(np.square(x - mean), axis=ax, keepdims=True, dtype=x.dtype)
    y = (x - mean) / np.sqrt(var + eps)
    if ctx.bool("scale", True):
        y = y * _param_view(gamma, x, axes)
    if ctx.bool("center", True):
        y = y + _param_view(beta, x, axes)
    return y


@register("rlx.rms_norm")
def _rms_norm(ctx, x, weight):
    # Relax rms_norm: x / sqrt(mean(x^2, axes) + eps) * weight; axes default
    # [-1], epsilon default 1e-5.
    axes = _norm_axes(ctx, x, [-1])
    eps = _c(x, ctx.float("epsilon", 1e-5))
    ms = np.mean(np.square(x), axis=tuple(axes), keepdims=True, dtype=x.dtype)
    return x / np.sqrt(ms + eps) * _param_view(weight, x, axes)


@register("rlx.max_pool2d_with_indices")
def _max_pool2d_with_indices(ctx, x):
    # max_pool2d and each window's first-maximum position (row-major,
    # NaN counting as the maximum: numpy's argmax), as i32.
    p = _Pool(ctx, x.shape)
    win = p.windows(p.padded(x, _lowest(x.dtype)))
    n, c, ho, wo, kh, kw = win.shape
    arg = win.reshape(n, c, ho, wo, kh * kw).argmax(axis=-1)
    return win.max(axis=(4, 5)), arg.astype(np.int32)


@register("rlx.max_pool2d_indices_backward")
def _max_pool2d_indices_backward(ctx, grad, indices):
    # max_pool2d_backward with the windows' arg-max read from ``indices``
    # (an index naming no window position routes nothing).
    shape = ctx.result_shape(0)
    p = _Pool(ctx, shape)
    zero = _c(grad, 0)
    kw = p.kernel[1]
    return p.scatter(lambda ky, kx: np.where(indices == ky * kw + kx, grad, zero),
                     shape, grad.dtype)

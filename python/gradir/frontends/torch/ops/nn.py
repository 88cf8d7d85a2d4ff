"""Layers: linear and matrix products, convolutions, batch/layer/RMS/group/instance
normalization, embedding, pooling (max, average, adaptive average)."""

from __future__ import annotations

import math

import numpy as np

from gradir.dialects import grad, rlx

from .registry import aten
from ._helpers import (Unavailable, bcast_param, concat_many, float_operands, pair,
                       reshape_to)

__all__: list[str] = []


# --- matrix products -------------------------------------------------------------

def _bias_add(cx, y, b):
    if b is None:
        return y
    return rlx.add(y, cx.value(b, cx.dtype(y)))


@aten("aten.linear.default")
def linear(cx, x, weight, bias=None):
    x, w = float_operands(cx, x, weight)
    wt = rlx.permute_dims(w) if cx.rank(w) == 2 else w
    return _bias_add(cx, rlx.matmul(x, wt), bias)


@aten("aten.matmul.default", "aten.mm.default", "aten.bmm.default")
def matmul(cx, a, b):
    a, b = float_operands(cx, a, b)
    return rlx.matmul(a, b)


@aten("aten.addmm.default", "aten.baddbmm.default", "aten.addmv.default")
def addmm(cx, bias, a, b, beta=1, alpha=1):
    bias, a, b = float_operands(cx, bias, a, b)
    prod = rlx.matmul(a, b)
    if alpha != 1:
        prod = rlx.multiply(prod, cx.scalar(alpha, cx.out_dtype))
    if beta == 0:
        return prod
    if beta != 1:
        bias = rlx.multiply(bias, cx.scalar(beta, cx.out_dtype))
    return rlx.add(prod, bias)


# --- convolutions ------------------------------------------------------------------

def _conv_padding(cx, padding, weight_hw, dilation):
    if isinstance(padding, str):
        if padding == "valid":
            return [0, 0, 0, 0]
        # "same": total d*(k-1) per axis, the odd one out at the bottom/right
        total = [d * (k - 1) for d, k in zip(dilation, weight_hw)]
        top, left = total[0] // 2, total[1] // 2
        return [top, left, total[0] - top, total[1] - left]
    p = pair(padding)
    return [p[0], p[1], p[0], p[1]]


def _conv2d(cx, x, weight, bias, stride, padding, dilation, groups):
    x, w = float_operands(cx, x, weight)
    dilation = pair(dilation)
    pad = _conv_padding(cx, padding, cx.shape(w)[2:], dilation)
    y = rlx.conv2d(x, w, pair(stride), pad, dilation, int(groups))
    if bias is not None:
        y = rlx.add(y, bcast_param(cx.value(bias, cx.dtype(y)), 4))
    return y


@aten("aten.conv2d.default", "aten.conv2d.padding")
def conv2d(cx, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv2d(cx, x, weight, bias, stride, padding, dilation, groups)


@aten("aten.conv1d.default", "aten.conv1d.padding")
def conv1d(cx, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    # (N, C, L) as (N, C, 1, L) with a (1, k) kernel
    x, w = float_operands(cx, x, weight)
    x4, w4 = rlx.expand_dims(x, [2]), rlx.expand_dims(w, [2])
    if isinstance(padding, str):
        pad = padding
    else:
        pad = [0, pair(padding, 1)[0]]
    y = _conv2d(cx, x4, w4, bias, [1, pair(stride, 1)[0]], pad, [1, pair(dilation, 1)[0]],
                groups)
    return rlx.squeeze(y, [2])


@aten("aten.conv_transpose2d.input")
def conv_transpose2d(cx, x, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    x, w = float_operands(cx, x, weight)
    p = pair(padding)
    y = rlx.conv2d_transpose(x, w, pair(stride), [p[0], p[1], p[0], p[1]], pair(dilation),
                             int(groups), pair(output_padding))
    if bias is not None:
        y = rlx.add(y, bcast_param(cx.value(bias, cx.dtype(y)), 4))
    return y


@aten("aten.convolution.default")
def convolution(cx, x, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    if cx.rank(x) != 4:
        raise cx.error(f"{cx.rank(x) - 2}-d convolutions via aten.convolution: only 2-d ones "
                       "are mapped")
    if transposed:
        return conv_transpose2d(cx, x, weight, bias, stride, padding, output_padding, groups,
                                dilation)
    return _conv2d(cx, x, weight, bias, stride, padding, dilation, groups)


# --- normalization -----------------------------------------------------------------

def _normalize(cx, v, mean, var, eps):
    return rlx.multiply(rlx.subtract(v, mean), rlx.rsqrt(rlx.add(var, cx.scalar(eps, cx.dtype(v)))))


def _affine(cx, y, weight, bias):
    rank = cx.rank(y)
    if weight is not None:
        y = rlx.multiply(y, bcast_param(cx.value(weight, cx.dtype(y)), rank))
    if bias is not None:
        y = rlx.add(y, bcast_param(cx.value(bias, cx.dtype(y)), rank))
    return y


def _scaled(cx, v, mean, var, eps, weight, bias):
    """``(v - mean) * s + bias`` with ``s = weight * rsqrt(var + eps)``
    per channel: batch norm's output in one elementwise pass, the
    per-channel factors computed once (not per element); ``v - mean``
    kept (not ``v * s - mean * s``), exact for large means.  Its
    gradient (the generic rules, simplified) is then one per-element pass
    ``dy * s + c1 * (v - mean) + c0`` after the per-channel sums of ``dy``
    and ``dy * (v - mean)``, where normalizing first and scaling after
    saved x-hat beside ``v - mean`` and summed ``dy * x-hat`` and ``dy *
    weight * (v - mean)`` apart.  bench/cnn.py's ResNet step, AMD EPYC Zen
    5, paired in one process, CPU time (load 4.6-5.3): 1 thread 17.41 ->
    16.47 ms, 2 threads 18.19 -> 17.37 ms."""
    rank = cx.rank(v)
    dtype = cx.dtype(v)
    s = rlx.rsqrt(rlx.add(var, cx.scalar(eps, dtype)))
    if weight is not None:
        s = rlx.multiply(s, bcast_param(cx.value(weight, dtype), rank))
    y = rlx.multiply(rlx.subtract(v, mean), s)
    if bias is not None:
        y = rlx.add(y, bcast_param(cx.value(bias, dtype), rank))
    return y


def _batch_norm(cx, x, weight, bias, running_mean, running_var, training, eps, stats=False):
    """The normalized, affine ``x`` (``_scaled``); with ``stats``, also the
    batch mean and (population) variance in training mode (``keepdims``)."""
    dtype = cx.out[0].dtype if isinstance(cx.out, (list, tuple)) else cx.out_dtype
    (v,) = float_operands(cx, x, dtype=dtype)
    rank = cx.rank(v)
    if training or running_mean is None:
        # batch statistics (population variance), as torch normalizes with
        axes = [0] + list(range(2, rank))
        mean, var = rlx.mean(v, axes, True), rlx.variance(v, axes, True)
    else:
        mean = bcast_param(cx.value(running_mean, dtype), rank)
        var = bcast_param(cx.value(running_var, dtype), rank)
    y = _scaled(cx, v, mean, var, eps, weight, bias)
    return (y, mean, var) if stats else y


_RUNNING = ("BatchNorm's running statistics (the update of running_mean/running_var in "
            "training mode) are not imported")


def _running_update(cx, x, running, batch, momentum, correction, index):
    """``(1 - momentum) * running + momentum * batch * correction``: the new
    running statistic as torch computes it (no gradient flows into it).
    Imported only where the buffer is an argument (``buffers=True``)."""
    want = cx.out[index]
    if not cx.is_value(running):   # a constant (import_module's default)
        return Unavailable(cx.op, _RUNNING)
    dtype = want.dtype
    stat = reshape_to(grad.no_grad(batch), [int(d) for d in want.shape])
    stat = cx.value(stat, dtype)
    if correction != 1.0:
        stat = rlx.multiply(stat, cx.scalar(correction, dtype))
    if momentum == 1.0:   # the batch statistic itself (a cumulative average, see training.py)
        return stat
    old = cx.value(running, dtype)
    return rlx.add(rlx.multiply(old, cx.scalar(1.0 - momentum, dtype)),
                   rlx.multiply(stat, cx.scalar(momentum, dtype)))


@aten("aten.batch_norm.default")
def batch_norm(cx, x, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=False):
    return _batch_norm(cx, x, weight, bias, running_mean, running_var, training, eps)


@aten("aten._native_batch_norm_legit_functional.default")
def native_batch_norm_functional(cx, x, weight, bias, running_mean, running_var, training,
                                 momentum, eps):
    """Results: the output, the saved mean and rstd (not imported), the new
    running mean and variance (the running estimate uses the unbiased
    variance, n / (n - 1) times the population one)."""
    y, mean, var = _batch_norm(cx, x, weight, bias, running_mean, running_var, training, eps,
                               stats=True)
    unused = [Unavailable(cx.op, "saved statistics are not imported")] * 2
    if not training or running_mean is None:
        return [y] + unused + [Unavailable(cx.op, _RUNNING)] * (len(cx.out) - 3)
    shape = cx.shape(x)
    n = int(np.prod([shape[0]] + shape[2:]))
    correction = n / (n - 1) if n > 1 else float("inf")
    return [y] + unused + [
        _running_update(cx, x, running_mean, mean, momentum, 1.0, 3),
        _running_update(cx, x, running_var, var, momentum, correction, 4)]


@aten("aten._native_batch_norm_legit.default", "aten.native_batch_norm.default")
def native_batch_norm(cx, x, weight, bias, running_mean, running_var, training, momentum, eps):
    y = _batch_norm(cx, x, weight, bias, running_mean, running_var, training, eps)
    return [y] + [Unavailable(cx.op, _RUNNING)] * (len(cx.out) - 1)


@aten("aten._native_batch_norm_legit.no_stats")
def native_batch_norm_no_stats(cx, x, weight, bias, training, momentum, eps):
    y = _batch_norm(cx, x, weight, bias, None, None, True, eps)
    return [y] + [Unavailable(cx.op, "saved statistics are not imported")] * 2


@aten("aten._native_batch_norm_legit_no_training.default")
def native_batch_norm_eval(cx, x, weight, bias, running_mean, running_var, momentum, eps):
    y = _batch_norm(cx, x, weight, bias, running_mean, running_var, False, eps)
    return [y] + [Unavailable(cx.op, "saved statistics are not imported")] * 2


def _layer_norm(cx, x, normalized_shape, weight, bias, eps):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    shape = [int(d) for d in normalized_shape]
    axes = list(range(cx.rank(v) - len(shape), cx.rank(v)))
    dtype = cx.dtype(v)
    gamma = cx.value(weight, dtype) if weight is not None else cx.const(
        cx.torch.ones(shape, dtype=dtype))
    beta = cx.value(bias, dtype) if bias is not None else cx.const(
        cx.torch.zeros(shape, dtype=dtype))
    return rlx.layer_norm(v, gamma, beta, axes, float(eps))


@aten("aten.layer_norm.default")
def layer_norm(cx, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _layer_norm(cx, x, normalized_shape, weight, bias, eps)


@aten("aten.native_layer_norm.default")
def native_layer_norm(cx, x, normalized_shape, weight, bias, eps):
    y = _layer_norm(cx, x, normalized_shape, weight, bias, eps)
    return [y] + [Unavailable(cx.op, "saved statistics are not imported")] * 2


@aten("aten.rms_norm.default")
def rms_norm(cx, x, normalized_shape, weight=None, eps=None):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    dtype = cx.dtype(v)
    shape = [int(d) for d in normalized_shape]
    axes = list(range(cx.rank(v) - len(shape), cx.rank(v)))
    if eps is None:
        eps = cx.torch.finfo(dtype).eps
    w = cx.value(weight, dtype) if weight is not None else cx.const(
        cx.torch.ones(shape, dtype=dtype))
    return rlx.rms_norm(v, w, axes, float(eps))


def _group_norm(cx, x, groups, weight, bias, eps):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    shape = cx.shape(v)
    n, c = shape[0], shape[1]
    if c % groups:
        raise cx.error(f"group_norm: {groups} groups do not divide {c} channels")
    g = reshape_to(v, [n, int(groups), math.prod(shape[1:]) // groups])
    mean, var = rlx.mean(g, [2], True), rlx.variance(g, [2], True)
    y = reshape_to(_normalize(cx, g, mean, var, eps), shape)
    return _affine(cx, y, weight, bias)


@aten("aten.group_norm.default")
def group_norm(cx, x, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _group_norm(cx, x, num_groups, weight, bias, eps)


@aten("aten.native_group_norm.default")
def native_group_norm(cx, x, weight, bias, n, c, hxw, group, eps):
    y = _group_norm(cx, x, group, weight, bias, eps)
    return [y] + [Unavailable(cx.op, "saved statistics are not imported")] * 2


@aten("aten.instance_norm.default")
def instance_norm(cx, x, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled=False):
    """Each (sample, channel) normalized over its own spatial axes (population
    variance), or, with ``use_input_stats=False`` (``track_running_stats``
    in eval mode), with the running statistics; then the per-channel affine.
    In training mode with ``track_running_stats=True`` PyTorch also updates
    the running statistics inside the op, which torch.export does not
    record: that update is not imported."""
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    rank = cx.rank(v)
    if use_input_stats or running_mean is None:
        axes = list(range(2, rank))
        mean, var = rlx.mean(v, axes, True), rlx.variance(v, axes, True)
    else:
        mean = bcast_param(cx.value(running_mean, cx.dtype(v)), rank)
        var = bcast_param(cx.value(running_var, cx.dtype(v)), rank)
    return _scaled(cx, v, mean, var, eps, weight, bias)


# --- embedding -------------------------------------------------------------------

@aten("aten.embedding.default")
def embedding(cx, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if scale_grad_by_freq:
        raise cx.error("embedding with scale_grad_by_freq=True has no rlx mapping")
    w = cx.value(weight)
    if padding_idx is not None and padding_idx >= 0:
        # torch's gradient skips the padding row: take it from a no_grad copy.
        mask = np.zeros((cx.shape(w)[0], 1), dtype=bool)
        mask[padding_idx] = True
        w = rlx.where(cx.const(mask), grad.no_grad(w), w)
    return rlx.take(w, cx.value(indices), [0])


# --- pooling ------------------------------------------------------------------------

def _pool_geometry(kernel_size, stride, padding):
    k = pair(kernel_size)
    s = pair(stride) if stride not in (None, [], ()) else k
    p = pair(padding)
    return k, s, [p[0], p[1], p[0], p[1]]


def _drop_overhang(y, sizes, s, p, ceil_mode):
    """PyTorch's ceil_mode drops a last window that would start in the
    right/bottom padding (or beyond it); Relax's rule (rlx's) keeps it.
    ``y`` (NCHW) without that window along H and W (``sizes``: the input's,
    ``s`` the strides, ``p`` the padding [top, left, bottom, right]); the
    other windows are the same (their starts, contents and average divisors
    depend only on their own positions)."""
    if not ceil_mode:
        return y
    out = y.type.shape[2:]
    crop = [(axis, o - 1) for axis, o, n, ss, p0 in zip((2, 3), out, sizes, s, p[:2])
            if (o - 1) * ss >= n + p0]
    if not crop:
        return y
    return rlx.strided_slice(y, [a for a, _ in crop], [0] * len(crop), [n for _, n in crop])


@aten("aten.max_pool2d.default", "aten.max_pool2d_with_indices.default")
def max_pool2d(cx, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    k, s, p = _pool_geometry(kernel_size, stride, padding)
    y = rlx.max_pool2d(v, k, s, p, pair(dilation), bool(ceil_mode))
    y = _drop_overhang(y, cx.shape(x)[-2:], s, p, ceil_mode)
    if cx.op.endswith("with_indices.default"):
        return [y, Unavailable(cx.op, "pooling indices have no rlx mapping")]
    return y


@aten("aten.avg_pool2d.default")
def avg_pool2d(cx, x, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise cx.error("avg_pool2d with divisor_override has no rlx mapping")
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    k, s, p = _pool_geometry(kernel_size, stride, padding)
    y = rlx.avg_pool2d(v, k, s, p, None, bool(ceil_mode), bool(count_include_pad) and any(p))
    return _drop_overhang(y, cx.shape(x)[-2:], s, p, ceil_mode)


@aten("aten.max_pool1d.default", "aten.avg_pool1d.default")
def pool1d(cx, x, kernel_size, stride=(), padding=0, *rest):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    v4 = rlx.expand_dims(v, [2])
    k = [1, pair(kernel_size, 1)[0]]
    s = [1, pair(stride, 1)[0]] if stride not in (None, [], ()) else k
    p = [0, pair(padding, 1)[0]]
    if cx.op == "aten.max_pool1d.default":
        dilation, ceil_mode = rest[:2]
        y = rlx.max_pool2d(v4, k, s, [0, p[1], 0, p[1]], [1, pair(dilation, 1)[0]],
                           bool(ceil_mode))
    else:
        ceil_mode, count_include_pad = rest[:2]
        y = rlx.avg_pool2d(v4, k, s, [0, p[1], 0, p[1]], None, bool(ceil_mode),
                           bool(count_include_pad) and p[1] > 0)
    y = _drop_overhang(y, [1, cx.shape(x)[-1]], s, [0, p[1], 0, p[1]], ceil_mode)
    return rlx.squeeze(y, [2])


def _adaptive_windows(size, out):
    return [(i * size // out, -((-(i + 1) * size) // out)) for i in range(out)]


@aten("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(cx, x, output_size):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    h, w = cx.shape(v)[-2:]
    oh, ow = pair(output_size)
    if (oh, ow) == (1, 1):
        return rlx.mean(v, [-2, -1], True)
    if h % oh == 0 and w % ow == 0:
        k = [h // oh, w // ow]
        return rlx.avg_pool2d(v, k, k, [0, 0, 0, 0])
    # general case: one mean per (possibly overlapping) window
    rows = []
    for r0, r1 in _adaptive_windows(h, oh):
        cols = []
        for c0, c1 in _adaptive_windows(w, ow):
            win = rlx.strided_slice(v, [cx.rank(v) - 2, cx.rank(v) - 1], [r0, c0], [r1, c1])
            cols.append(rlx.mean(win, [-2, -1], True))
        rows.append(concat_many(cols, cx.rank(v) - 1))
    return concat_many(rows, cx.rank(v) - 2)


@aten("aten.adaptive_avg_pool1d.default")
def adaptive_avg_pool1d(cx, x, output_size):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    y = adaptive_avg_pool2d(cx, rlx.expand_dims(v, [cx.rank(v) - 1]), [1, pair(output_size, 1)[0]])
    return rlx.squeeze(y, [cx.rank(v) - 1])


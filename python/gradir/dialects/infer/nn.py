"""Inference of the nn ops: softmax, log_softmax, the losses, conv2d and
conv2d_transpose, the pools and their backward, layer_norm, rms_norm."""

from __future__ import annotations

from mlir import ir

from ..util import ShapeError
from ..util import checked_axes as _norm_axes
from .common import (INDEX_TYPES, _check_elt, _count, _elt, _float, _fmt, _need_result,
                     _one_axis, _same_elt, _tensor_type)


def _softmax(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    if x.rank == 0:
        raise ShapeError("operand must have rank >= 1")
    _one_axis(attrs, "axis", x.rank, -1)
    return [x]


def _cross_entropy(ops, attrs, results):
    _count(ops, 2)
    p, y = _float(ops[0], "predictions"), _float(ops[1], "labels")
    _same_elt(p, y, "predictions and labels")
    if list(p.shape) != list(y.shape):
        raise ShapeError(f"predictions {_fmt(p.shape)} and labels {_fmt(y.shape)} "
                         "must have the same shape")
    if p.rank not in (1, 2):
        raise ShapeError(f"predictions must have rank 1 or 2, got {p.rank}")
    return [_tensor_type([], _elt(p))]


def _nll_loss(ops, attrs, results):
    if len(ops) not in (2, 3):
        raise ShapeError(f"expected 2 or 3 operands, got {len(ops)}")
    p = _float(ops[0], "predictions")
    _check_elt(ops[1], INDEX_TYPES, "targets")
    t = list(ops[1].shape)
    if p.rank == 0:
        raise ShapeError("predictions must have rank >= 1")
    c = p.shape[0] if p.rank == 1 else p.shape[1]
    expect = [] if p.rank == 1 else [p.shape[0]] + list(p.shape[2:])
    if t != expect:
        raise ShapeError(f"targets shape {_fmt(t)} does not match predictions "
                         f"{_fmt(p.shape)} (expected {_fmt(expect)})")
    targets = 1
    for n in t:
        targets *= n
    if c == 0 and targets > 0 and all(n >= 0 for n in t):
        # every target is out of range (the compiled code read before the buffer)
        raise ShapeError(f"predictions have 0 classes: none of the {targets} target(s) "
                         "can pick one")
    if len(ops) == 3:
        w = _float(ops[2], "weights")
        _same_elt(p, w, "predictions and weights")
        if list(w.shape) != [c]:
            raise ShapeError(f"weights must have shape ({c},), got {_fmt(w.shape)}")
    red = attrs.get("reduction", "mean")
    if red not in ("mean", "sum", "none"):
        raise ShapeError(f"'reduction' must be \"mean\", \"sum\" or \"none\", got {red!r}")
    return [_tensor_type(t if red == "none" else [], _elt(p))]


def _pair(attrs, name, default=None, n=2):
    v = attrs.get(name, default)
    if v is None:
        raise ShapeError(f"requires attribute '{name}'")
    if len(v) != n:
        raise ShapeError(f"'{name}' must have {n} entries, got {len(v)}")
    return list(v)


def _conv_attrs(attrs, with_groups=True):
    strides = _pair(attrs, "strides", [1, 1])
    padding = _pair(attrs, "padding", [0, 0, 0, 0], n=4)
    dilation = _pair(attrs, "dilation", [1, 1])
    if any(s <= 0 for s in strides) or any(d <= 0 for d in dilation):
        raise ShapeError("'strides' and 'dilation' must be positive")
    if any(p < 0 for p in padding):
        raise ShapeError("'padding' must be non-negative")
    groups = attrs.get("groups", 1) if with_groups else 1
    if groups <= 0:
        raise ShapeError(f"'groups' must be positive, got {groups}")
    return strides, padding, dilation, groups


def _conv2d(ops, attrs, results):
    _count(ops, 2)
    x, w = _float(ops[0], "data"), _float(ops[1], "weight")
    _same_elt(x, w, "data and weight")
    if x.rank != 4 or w.rank != 4:
        raise ShapeError("data (NCHW) and weight (OIHW) must have rank 4")
    strides, padding, dilation, groups = _conv_attrs(attrs)
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    if c % groups or o % groups:
        raise ShapeError(f"'groups' {groups} must divide input channels {c} and output channels {o}")
    if c // groups != i:
        raise ShapeError(f"weight has {i} input channels, expected {c // groups} "
                         f"(data channels {c} / groups {groups})")
    oh = (h + padding[0] + padding[2] - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + padding[1] + padding[3] - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"kernel {kh}x{kw} (dilation {dilation}) is larger than the padded input "
                         f"{h + padding[0] + padding[2]}x{wd + padding[1] + padding[3]}")
    return [_tensor_type([n, o, oh, ow], _elt(x))]


def _conv2d_transpose(ops, attrs, results):
    _count(ops, 2)
    x, w = _float(ops[0], "data"), _float(ops[1], "weight")
    _same_elt(x, w, "data and weight")
    if x.rank != 4 or w.rank != 4:
        raise ShapeError("data (NCHW) and weight (IOHW) must have rank 4")
    strides, padding, dilation, groups = _conv_attrs(attrs)
    out_pad = _pair(attrs, "output_padding", [0, 0])
    n, c, h, wd = x.shape
    i, o, kh, kw = w.shape
    if c != i:
        raise ShapeError(f"weight has {i} input channels, data has {c}")
    if c % groups:
        raise ShapeError(f"'groups' {groups} must divide input channels {c}")
    if any(not 0 <= p < max(s, d) for p, s, d in zip(out_pad, strides, dilation)):
        raise ShapeError("'output_padding' must be smaller than the stride or the dilation")
    oh = (h - 1) * strides[0] - padding[0] - padding[2] + dilation[0] * (kh - 1) + out_pad[0] + 1
    ow = (wd - 1) * strides[1] - padding[1] - padding[3] + dilation[1] * (kw - 1) + out_pad[1] + 1
    if oh <= 0 or ow <= 0:
        raise ShapeError("padding leaves an empty output")
    return [_tensor_type([n, o * groups, oh, ow], _elt(x))]


def _pool_out(x, attrs):
    if x.rank != 4:
        raise ShapeError(f"data must have rank 4 (NCHW), got {x.rank}")
    pool = _pair(attrs, "pool_size")
    strides, padding, dilation, _ = _conv_attrs(attrs, with_groups=False)
    if any(k <= 0 for k in pool):
        raise ShapeError("'pool_size' must be positive")
    ceil = attrs.get("ceil_mode", False)
    n, c, h, w = x.shape
    out = []
    for size, k, s, d, p0, p1 in ((h, pool[0], strides[0], dilation[0], padding[0], padding[2]),
                                  (w, pool[1], strides[1], dilation[1], padding[1], padding[3])):
        span = size + p0 + p1 - d * (k - 1) - 1
        if span < 0:
            raise ShapeError(f"pool window {pool} is larger than the padded input")
        o = (-(-span // s) if ceil else span // s) + 1
        out.append(o)
    return [n, c] + out


def _pool(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "data")
    return [_tensor_type(_pool_out(x, attrs), _elt(x))]


def _pool_backward(ops, attrs, results):
    _count(ops, 2)
    g, x = _float(ops[0], "output_grad"), _float(ops[1], "data")
    _same_elt(g, x, "output_grad and data")
    expect = _pool_out(x, attrs)
    if list(g.shape) != expect:
        raise ShapeError(f"output_grad has shape {_fmt(g.shape)}, expected the pooled "
                         f"shape {_fmt(expect)}")
    return [x]


def _layer_norm(ops, attrs, results):
    _count(ops, 3)
    x, g, b = _float(ops[0], "data"), _float(ops[1], "gamma"), _float(ops[2], "beta")
    _same_elt(x, g, "data and gamma")
    _same_elt(x, b, "data and beta")
    if "axes" not in attrs:
        raise ShapeError("requires attribute 'axes'")
    axes = _norm_axes(attrs["axes"], x.rank, "axes")
    expect = [x.shape[a] for a in axes]
    for name, t in (("gamma", g), ("beta", b)):
        if list(t.shape) != expect:
            raise ShapeError(f"{name} must have shape {_fmt(expect)}, got {_fmt(t.shape)}")
    return [x]


def _rms_norm(ops, attrs, results):
    _count(ops, 2)
    x, w = _float(ops[0], "data"), _float(ops[1], "weight")
    _same_elt(x, w, "data and weight")
    if x.rank == 0:
        raise ShapeError("data must have rank >= 1")
    axes = _norm_axes(attrs.get("axes", [-1]), x.rank, "axes")
    expect = [x.shape[a] for a in axes]
    if list(w.shape) != expect:
        raise ShapeError(f"weight must have shape {_fmt(expect)}, got {_fmt(w.shape)}")
    return [x]


def _pool_with_indices(ops, attrs, results):
    """``max_pool2d_with_indices``: the pooled values and their windows'
    arg-max positions (i32: any window's ``KH * KW`` positions fit)."""
    _count(ops, 1)
    x = _float(ops[0], "data")
    out = _pool_out(x, attrs)
    return [_tensor_type(out, _elt(x)), _tensor_type(out, ir.IntegerType.get_signless(32))]


def _pool_indices_backward(ops, attrs, results):
    """``max_pool2d_indices_backward(output_grad, indices) -> data's type``:
    the result type carries the input's shape; pooling it must give the
    gradient's and the indices' shape."""
    _count(ops, 2)
    g = _float(ops[0], "output_grad")
    _check_elt(ops[1], ("i32",), "indices")
    r = _need_result(results)
    _same_elt(g, r, "output_grad and result")
    expect = _pool_out(r, attrs)
    for what, t in (("output_grad", g), ("indices", ops[1])):
        if list(t.shape) != expect:
            raise ShapeError(f"{what} has shape {_fmt(t.shape)}, expected the pooled "
                             f"shape {_fmt(expect)} of the result")
    return [r]

"""Inference of the shape ops: permute_dims, reshape, broadcast_to,
collapse_sum_to, expand_dims, squeeze, flatten, concat, split,
strided_slice, take, triu."""

from __future__ import annotations

import math

from ..util import ShapeError
from ..util import checked_axes as _norm_axes
from .common import (INDEX_TYPES, _any_elt, _broadcasts, _check_elt, _count, _elt, _float,
                     _fmt, _need_result, _one_axis, _same_elt, _tensor_type)


def _permute_dims(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    rank = x.rank
    axes = attrs.get("axes")
    if axes is None:
        perm = list(range(rank))[::-1]
    else:
        if len(axes) != rank:
            raise ShapeError(f"'axes' must have {rank} entries (the rank), got {len(axes)}")
        perm = _norm_axes(axes, rank, "axes")
    return [_tensor_type([x.shape[p] for p in perm], _elt(x))]


def _reshape(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    r = _need_result(results)
    _same_elt(x, r, "operand and result")
    if math.prod(x.shape) != math.prod(r.shape):
        raise ShapeError(f"cannot reshape {_fmt(x.shape)} ({math.prod(x.shape)} elements) to "
                         f"{_fmt(r.shape)} ({math.prod(r.shape)} elements)")
    return [r]


def _broadcast_to(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    r = _need_result(results)
    _same_elt(x, r, "operand and result")
    if len(x.shape) > len(r.shape) or not _broadcasts(x.shape, r.shape):
        raise ShapeError(f"cannot broadcast {_fmt(x.shape)} to {_fmt(r.shape)}")
    return [r]


def _collapse_sum_to(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    r = _need_result(results)
    _same_elt(x, r, "operand and result")
    if len(r.shape) > len(x.shape) or not _broadcasts(r.shape, x.shape):
        raise ShapeError(f"cannot collapse {_fmt(x.shape)} to {_fmt(r.shape)}: "
                         f"{_fmt(r.shape)} does not broadcast to {_fmt(x.shape)}")
    return [r]


def _expand_dims(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    axes = attrs.get("axis")
    if axes is None:
        raise ShapeError("requires attribute 'axis'")
    rank = x.rank + len(axes)
    axes = _norm_axes(axes, rank, "axis")
    it = iter(x.shape)
    return [_tensor_type([1 if i in axes else next(it) for i in range(rank)], _elt(x))]


def _squeeze(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    axes = attrs.get("axis")
    if axes is None:
        drop = {i for i, d in enumerate(x.shape) if d == 1}
    else:
        drop = set(_norm_axes(axes, x.rank, "axis"))
        for a in sorted(drop):
            if x.shape[a] != 1:
                raise ShapeError(f"cannot squeeze axis {a} of size {x.shape[a]}")
    return [_tensor_type([d for i, d in enumerate(x.shape) if i not in drop], _elt(x))]


def _flatten(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    return [_tensor_type([math.prod(x.shape)], _elt(x))]


def _concat(ops, attrs, results):
    if not ops:
        raise ShapeError("requires at least one operand")
    xs = [_any_elt(t, f"operand #{i}") for i, t in enumerate(ops)]
    rank = xs[0].rank
    if rank == 0:
        raise ShapeError("cannot concatenate 0-d tensors")
    axis = _one_axis(attrs, "axis", rank, 0)
    out = list(xs[0].shape)
    for i, x in enumerate(xs[1:], 1):
        _same_elt(xs[0], x, f"operand #0 and operand #{i}")
        if x.rank != rank:
            raise ShapeError(f"operand #{i} has rank {x.rank}, expected {rank}")
        for d in range(rank):
            if d != axis and x.shape[d] != out[d]:
                raise ShapeError(f"operand #{i} has shape {_fmt(x.shape)}, incompatible with "
                                 f"{_fmt(xs[0].shape)} outside axis {axis}")
        out[axis] += x.shape[axis]
    return [_tensor_type(out, _elt(xs[0]))]


# Most results a split may make when no results are declared (a builder):
# MLIR counts an op's results in 32 bits; more than this many Python types
# would not fit in memory anyway.
_MAX_PIECES = 1 << 24


def _split(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    if x.rank == 0:
        raise ShapeError("cannot split a 0-d tensor")
    axis = _one_axis(attrs, "axis", x.rank, 0)
    n = x.shape[axis]
    has_s, has_i = "sections" in attrs, "indices" in attrs
    if has_s == has_i:
        raise ShapeError("requires exactly one of 'sections' and 'indices'")
    if has_s:
        k = attrs["sections"]
        if k <= 0:
            raise ShapeError(f"'sections' must be positive, got {k}")
        # one result per piece: checked before any piece is sized (a huge
        # 'sections' made a list that long)
        if results is not None and k != len(results):
            raise ShapeError(f"has {len(results)} result(s), inferred {k}")
        if k > _MAX_PIECES:
            raise ShapeError(f"'sections' = {k}: more results than an op can have "
                             f"(at most {_MAX_PIECES})")
        # Relax: pieces of ceil(n / k) elements, clamped at the end (the last
        # pieces may be smaller, or empty).
        step = -(-n // k)
        sizes = [max(0, min(n, (i + 1) * step) - min(n, i * step)) for i in range(k)]
    else:
        idx = attrs["indices"]
        bounds = [0] + [min(max(i if i >= 0 else i + n, 0), n) for i in idx] + [n]
        if any(b < a for a, b in zip(bounds, bounds[1:])):
            raise ShapeError(f"'indices' {idx} must be non-decreasing")
        sizes = [b - a for a, b in zip(bounds, bounds[1:])]
    out = []
    for s in sizes:
        shape = list(x.shape)
        shape[axis] = s
        out.append(_tensor_type(shape, _elt(x)))
    return out


def _strided_slice(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    for name in ("axes", "begin", "end"):
        if name not in attrs:
            raise ShapeError(f"requires attribute '{name}'")
    axes, begin, end = attrs["axes"], attrs["begin"], attrs["end"]
    strides = attrs.get("strides", [1] * len(axes))
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise ShapeError("'axes', 'begin', 'end' and 'strides' must have the same length")
    axes = _norm_axes(axes, x.rank, "axes")
    shape = list(x.shape)
    for a, b, e, s in zip(axes, begin, end, strides):
        if s == 0:
            raise ShapeError("'strides' must be non-zero")
        shape[a] = len(range(*slice(b, e, s).indices(x.shape[a])))
    return [_tensor_type(shape, _elt(x))]


def _take(ops, attrs, results):
    _count(ops, 2)
    x = _any_elt(ops[0], "operand")
    _check_elt(ops[1], INDEX_TYPES, "indices")
    ind = list(ops[1].shape)
    axis = _one_axis(attrs, "axis", max(x.rank, 1), None)
    # Every index into an empty axis is out of range, in any mode (clip has
    # no element to clamp to, wrap none to wrap around): the compiled code
    # read before the buffer or divided by zero.
    taken = 1
    for n in ind:
        taken *= n
    size = 1
    for n in (x.shape if axis is None else x.shape[axis:axis + 1]):
        size *= n
    if taken > 0 and size == 0 and all(n >= 0 for n in ind):
        raise ShapeError(f"cannot take {taken} element(s) from an empty "
                         + ("tensor" if axis is None else f"axis {axis}"))
    if axis is None:
        return [_tensor_type(ind, _elt(x))]
    if x.rank == 0:
        raise ShapeError("cannot take along an axis of a 0-d tensor")
    return [_tensor_type(list(x.shape[:axis]) + ind + list(x.shape[axis + 1:]), _elt(x))]


def _triu(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    if x.rank < 2:
        raise ShapeError(f"operand must have rank >= 2, got {x.rank}")
    return [x]

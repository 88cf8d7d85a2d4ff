"""Shape ops: permute_dims reshape broadcast_to expand_dims squeeze flatten
concat split strided_slice take triu collapse_sum_to."""

from __future__ import annotations

import numpy as np

from .core import register


@register("rlx.permute_dims")
def _permute_dims(ctx, x):
    axes = ctx.ints("axes")
    # Relax: absent axes reverse the dimensions.
    return np.transpose(x) if axes is None else np.transpose(x, axes)


@register("rlx.reshape")
def _reshape(ctx, x):
    return np.reshape(x, ctx.result_shape())


@register("rlx.broadcast_to")
def _broadcast_to(ctx, x):
    return np.broadcast_to(x, ctx.result_shape())


@register("rlx.expand_dims")
def _expand_dims(ctx, x):
    # Relax: the axes are positions in the *output* (negative ones count from
    # the output's end), as numpy's expand_dims with a tuple.
    axis = ctx.ints("axis")
    if axis is None:
        raise ctx.error("missing attribute 'axis'")
    return np.expand_dims(x, tuple(axis))


@register("rlx.squeeze")
def _squeeze(ctx, x):
    axis = ctx.ints("axis")
    if axis is None:
        return np.squeeze(x)
    for a in axis:
        if x.shape[a] != 1:
            raise ctx.error(f"cannot squeeze axis {a} of size {x.shape[a]}")
    return np.squeeze(x, axis=tuple(axis))


@register("rlx.flatten")
def _flatten(ctx, x):
    # Relax flatten: every dimension into one (1-D result).
    return np.reshape(x, (-1,))


@register("rlx.concat")
def _concat(ctx, *xs):
    if len(xs) == 1 and isinstance(xs[0], tuple):
        xs = xs[0]
    axis = ctx.ints("axis", [0])
    if len(axis) != 1:
        raise ctx.error(f"concat takes one axis, got {axis}")
    return np.concatenate(xs, axis=axis[0])


@register("rlx.split")
def _split(ctx, x):
    axis = ctx.ints("axis", [0])
    if len(axis) != 1:
        raise ctx.error(f"split takes one axis, got {axis}")
    ax = axis[0]
    n = x.shape[ax]
    if ctx.has("indices"):
        indices = ctx.ints("indices")
    elif ctx.has("sections"):
        sections = ctx.int("sections")
        if sections <= 0:
            raise ctx.error(f"sections must be positive, got {sections}")
        # Relax: equal sections of ceil(n / sections); the last may be smaller.
        chunk = -(-n // sections)
        indices = [chunk * i for i in range(1, sections)]
    else:
        raise ctx.error("needs a 'sections' or an 'indices' attribute")
    parts = np.split(x, indices, axis=ax)
    if len(parts) != ctx.num_results:
        raise ctx.error(f"split gives {len(parts)} parts, the op has {ctx.num_results} results")
    return parts if len(parts) != 1 else parts[0]     # one result: a value, not a list


@register("rlx.strided_slice")
def _strided_slice(ctx, x):
    begin = ctx.ints("begin")
    end = ctx.ints("end")
    if begin is None or end is None:
        raise ctx.error("needs 'begin' and 'end' attributes")
    axes = ctx.ints("axes", list(range(len(begin))))
    strides = ctx.ints("strides", [1] * len(axes))
    if not (len(axes) == len(begin) == len(end)) or len(strides) not in (1, len(axes)):
        raise ctx.error("axes, begin, end and strides must have the same length")
    if len(strides) == 1:
        strides = strides * len(axes)
    idx = [slice(None)] * x.ndim
    for a, b, e, s in zip(axes, begin, end, strides):
        if s == 0:
            raise ctx.error("stride 0")
        # TVM canonicalizes each index as Python slicing does: negative values
        # count from the end, then clamp to [0, n] (stride > 0) or [-1, n-1]
        # (stride < 0).
        idx[a] = slice(b, e, s)
    return x[tuple(idx)]


@register("rlx.take")
def _take(ctx, x, indices):
    axis = ctx.ints("axis")
    mode = ctx.str("mode", "fast")
    # "fast" (Relax default) assumes in-bound indices; we raise on out-of-bound
    # ones and let negative ones count from the end (numpy).
    npmode = {"fast": "raise", "clip": "clip", "wrap": "wrap"}.get(mode)
    if npmode is None:
        raise ctx.error(f"unknown take mode {mode!r}")
    idx = np.asarray(indices).astype(np.int64)
    if axis is None:  # Relax: absent axis takes from the flattened input
        return np.take(np.reshape(x, (-1,)), idx, mode=npmode)
    return np.take(x, idx, axis=axis[0], mode=npmode)


@register("rlx.triu")
def _triu(ctx, x):
    # diagonals past the matrix keep all of it or none: the same for any k
    # beyond them (numpy overflowed on k = -2^63)
    k = max(-x.shape[-2], min(x.shape[-1], ctx.int("k", 0)))
    return np.triu(x, k)


def _collapse_sum(x, shape):
    x = np.asarray(x)
    lead = x.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"cannot collapse shape {x.shape} to {shape}")
    s = x.sum(axis=tuple(range(lead)), dtype=x.dtype) if lead else x
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and s.shape[i] != 1)
    if axes:
        s = s.sum(axis=axes, keepdims=True, dtype=x.dtype)
    if tuple(s.shape) != tuple(shape):
        raise ValueError(f"cannot collapse shape {x.shape} to {tuple(shape)}")
    return s


@register("rlx.collapse_sum_to")
def _collapse_sum_to(ctx, x, *rest):
    # Relax collapse_sum_to(data, shape): sums the axes that broadcasting from
    # `shape` to data's shape added or stretched.  The target shape is the
    # result type's.
    return _collapse_sum(x, ctx.result_shape())

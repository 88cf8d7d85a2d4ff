"""Reductions: sum mean max min prod variance {axis, keepdims}; cumsum."""

from __future__ import annotations

import numpy as np

from .core import register


def _axes(ctx):
    axis = ctx.ints("axis")
    return None if axis is None else tuple(axis)  # absent: all axes


@register("rlx.sum")
def _sum(ctx, x):
    return np.sum(x, axis=_axes(ctx), keepdims=ctx.bool("keepdims"), dtype=x.dtype)


@register("rlx.prod")
def _prod(ctx, x):
    return np.prod(x, axis=_axes(ctx), keepdims=ctx.bool("keepdims"), dtype=x.dtype)


@register("rlx.max")
def _max(ctx, x):
    return np.max(x, axis=_axes(ctx), keepdims=ctx.bool("keepdims"))


@register("rlx.min")
def _min(ctx, x):
    return np.min(x, axis=_axes(ctx), keepdims=ctx.bool("keepdims"))


def _count(x, axes):
    if axes is None:
        return x.size
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


@register("rlx.mean")
def _mean(ctx, x):
    axes, keep = _axes(ctx), ctx.bool("keepdims")
    if x.dtype.kind in "iu":  # integer mean: integer sum / count (truncating)
        s = np.sum(x, axis=axes, keepdims=keep, dtype=np.int64)
        return (np.trunc(s / _count(x, axes))).astype(x.dtype)
    return np.mean(x, axis=axes, keepdims=keep, dtype=x.dtype)


@register("rlx.variance")
def _variance(ctx, x):
    # Relax variance: the population variance mean(square(x - mean(x))).
    axes, keep = _axes(ctx), ctx.bool("keepdims")
    m = np.mean(x, axis=axes, keepdims=True, dtype=x.dtype)
    return np.mean(np.square(x - m), axis=axes, keepdims=keep, dtype=x.dtype)


@register("rlx.cumsum")
def _cumsum(ctx, x):
    axis = ctx.ints("axis")
    if axis is None:  # Relax: absent axis = cumulative sum of the flattened input
        x = np.reshape(x, (-1,))
        ax = 0
    else:
        ax = axis[0]
    out = np.cumsum(x, axis=ax, dtype=x.dtype)
    if ctx.bool("exclusive"):
        out = out - x
    return out

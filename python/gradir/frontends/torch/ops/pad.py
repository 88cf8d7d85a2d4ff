"""Padding and reordering along axes: ``F.pad`` (constant, reflect,
replicate, circular; ``nn.ZeroPad2d``, ``nn.ReflectionPad2d``, ...) and
``torch.flip``.

A constant pad concatenates constant blocks (a negative pad crops); the
other modes and ``flip`` are one ``rlx.take`` of constant indices per axis
(the reflected, clamped or wrapped source positions), whose gradient sums
into the source positions as PyTorch's backward does."""

from __future__ import annotations

import numpy as np

from gradir.dialects import rlx

from .registry import aten
from ._helpers import concat_many, norm_axes

__all__: list[str] = []


def _pairs(pad, rank):
    """``pad`` (last axis first: left, right, then the axis before) as
    {axis: (before, after)}."""
    pad = [int(p) for p in pad]
    return {rank - 1 - i: (pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)}


def _source(mode, n, before, after):
    j = np.arange(-before, n + after)
    if mode == "reflect":
        if before >= n or after >= n:
            return None
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    return np.mod(j, n)   # circular


def _constant(cx, v, pairs, value):
    dtype = cx.dtype(v)
    for axis, (before, after) in sorted(pairs.items()):
        shape = cx.shape(v)
        n = shape[axis]
        if before < 0 or after < 0:   # a negative pad crops
            v = rlx.strided_slice(v, [axis], [max(-before, 0)], [n - max(-after, 0)])
            before, after, shape = max(before, 0), max(after, 0), cx.shape(v)
        pieces = []
        for k in (before, None, after):
            if k is None:
                pieces.append(v)
            elif k > 0:
                block = list(shape)
                block[axis] = k
                pieces.append(cx.const(cx.torch.full(block, value, dtype=dtype)))
        v = concat_many(pieces, axis)
    return v


def _indexed(cx, v, pairs, mode):
    for axis, (before, after) in sorted(pairs.items()):
        if before == 0 and after == 0:
            continue
        src = _source(mode, cx.shape(v)[axis], before, after)
        if src is None:
            raise cx.error(f"reflect padding of {max(before, after)} on an axis of "
                           f"{cx.shape(v)[axis]}: PyTorch needs the pad below the size")
        v = rlx.take(v, cx.const(np.ascontiguousarray(src, dtype=np.int64)), [axis])
    return v


@aten("aten.pad.default")
def pad(cx, x, pad_, mode="constant", value=None):
    v = cx.value(x)
    pairs = _pairs(pad_, cx.rank(v))
    if mode == "constant":
        return _constant(cx, v, pairs, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise cx.error(f"padding mode {mode!r} has no rlx mapping")
    return _indexed(cx, v, pairs, mode)


@aten("aten.constant_pad_nd.default")
def constant_pad_nd(cx, x, pad_, value=0):
    v = cx.value(x)
    return _constant(cx, v, _pairs(pad_, cx.rank(v)), value)


@aten("aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
      "aten.reflection_pad3d.default", "aten.replication_pad1d.default",
      "aten.replication_pad2d.default", "aten.replication_pad3d.default",
      "aten._pad_circular.default")
def mode_pad(cx, x, pad_):
    v = cx.value(x)
    mode = ("reflect" if "reflection" in cx.op else
            "replicate" if "replication" in cx.op else "circular")
    return _indexed(cx, v, _pairs(pad_, cx.rank(v)), mode)


@aten("aten.flip.default")
def flip(cx, x, dims):
    v = cx.value(x)
    for axis in sorted(set(norm_axes(dims, cx.rank(v)))):
        n = cx.shape(v)[axis]
        if n > 1:
            v = rlx.take(v, cx.const(np.arange(n - 1, -1, -1, dtype=np.int64)), [axis])
    return v

"""VJP rules of shape ops.

Scatter-back constructions (no scatter op exists in the contract):
- ``take`` (w.r.t. data): a one-hot matrix ``O[j, i] = (indices[i] == j)``
  built from an ``arith.constant`` iota with ``rlx.equal`` + ``rlx.astype``
  (negative indices count from the end, as the reference interpreter does,
  via a second mask against ``iota - n``), then
  ``matmul(O, reshape(g, (P, K, Q)))`` sums the adjoint into each taken row
  (duplicated indices accumulate).  ``indices`` gets no gradient.
- ``strided_slice``: axis by axis; stride 1 pads the adjoint with zeros
  (``rlx.zeros`` + ``rlx.concat``), stride -1 flips it first (a stride -1
  ``strided_slice``) and pads; other strides scatter through the same one-hot
  matmul as ``take`` with the constant list of selected positions.
"""
from __future__ import annotations

import math

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ...dialects import rlx
from . import vjp
from ._helpers import attrs, elt_of, shape_of, unbroadcast


# --- shared helpers ----------------------------------------------------------

def int_constant(values, elt: ir.Type) -> ir.Value:
    """A 1-D integer ``arith.constant`` (``elt`` is i32 or i64)."""
    width = ir.IntegerType(elt).width
    arr = np.asarray(values, dtype=np.int64 if width == 64 else np.int32)
    t = ir.RankedTensorType.get([len(arr)], elt)
    return arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=t)).result


def flip(x: ir.Value, axis: int) -> ir.Value:
    """Reverses ``x`` along ``axis`` (a stride -1 ``strided_slice``)."""
    n = shape_of(x)[axis]
    return rlx.strided_slice(x, [axis], [n - 1], [-n - 1], [-1])


def pad_axis(g: ir.Value, axis: int, lo: int, hi: int) -> ir.Value:
    """``g`` with ``lo`` zeros before and ``hi`` zeros after along ``axis``."""
    if lo == 0 and hi == 0:
        return g
    pieces = []
    for count, piece in ((lo, None), (None, g), (hi, None)):
        if piece is not None:
            pieces.append(piece)
        elif count:
            shape = shape_of(g)
            shape[axis] = count
            pieces.append(rlx.zeros(shape, elt_of(g)))
    return rlx.concat(pieces, axis=axis)


def scatter_rows(g: ir.Value, axis: int, n_index_dims: int, indices: ir.Value, n: int,
                 out_shape: list[int], wrap_negative: bool = True) -> ir.Value:
    """The adjoint of ``take(x, indices, axis)``: ``g`` has shape
    ``pre + indices.shape + post``; returns ``pre + (n,) + post`` reshaped
    to ``out_shape``."""
    gs = shape_of(g)
    pre = gs[:axis]
    ind = gs[axis:axis + n_index_dims]
    post = gs[axis + n_index_dims:]
    P, K, Q = math.prod(pre), math.prod(ind), math.prod(post)
    ielt = elt_of(indices)
    idx = rlx.reshape(indices, [1, K])
    iota = rlx.reshape(int_constant(range(n), ielt), [n, 1])
    onehot = rlx.astype(rlx.equal(iota, idx), elt_of(g))                  # (n, K)
    if wrap_negative:
        neg = rlx.reshape(int_constant(range(-n, 0), ielt), [n, 1])
        onehot = rlx.add(onehot, rlx.astype(rlx.equal(neg, idx), elt_of(g)))
    g3 = rlx.reshape(g, [P, K, Q])
    r = rlx.matmul(onehot, g3)                                            # (P, n, Q)
    return rlx.reshape(r, out_shape)


# --- rules --------------------------------------------------------------------

@vjp("rlx.permute_dims")
def permute_dims(op, grads):
    (g,) = grads
    axes = attrs(op).get("axes")
    if axes is None:  # reversed; its own inverse
        return [rlx.permute_dims(g)]
    rank = len(axes)
    inv = [0] * rank
    for i, a in enumerate(axes):
        inv[a % rank] = i
    return [rlx.permute_dims(g, inv)]


def _reshape_back(op, grads):
    (g,) = grads
    x = op.operands[0]
    if shape_of(g) == shape_of(x):
        return [g]
    return [rlx.reshape(g, shape_of(x))]


for _name in ("rlx.reshape", "rlx.expand_dims", "rlx.squeeze", "rlx.flatten"):
    vjp(_name)(_reshape_back)


@vjp("rlx.broadcast_to")
def broadcast_to(op, grads):
    (g,) = grads
    return [unbroadcast(g, op.operands[0])]


@vjp("rlx.concat")
def concat(op, grads):
    (g,) = grads
    xs = list(op.operands)
    if len(xs) == 1:
        return [g]
    rank = len(shape_of(xs[0]))
    axis = attrs(op).get("axis", [0])[0] % rank
    bounds, acc = [], 0
    for x in xs[:-1]:
        acc += shape_of(x)[axis]
        bounds.append(acc)
    return rlx.split(g, bounds, axis=axis)


@vjp("rlx.split")
def split(op, grads):
    x = op.operands[0]
    rank = len(shape_of(x))
    axis = attrs(op).get("axis", [0])[0] % rank
    pieces = [g if g is not None else rlx.zeros(shape_of(r), elt_of(r))
              for g, r in zip(grads, op.results)]
    if len(pieces) == 1:
        return [pieces[0]]
    return [rlx.concat(pieces, axis=axis)]


@vjp("rlx.strided_slice")
def strided_slice(op, grads):
    (g,) = grads
    x = op.operands[0]
    a = attrs(op)
    xs = shape_of(x)
    rank = len(xs)
    axes = [ax % rank for ax in a["axes"]]
    strides = a.get("strides", [1] * len(axes))
    if len(strides) == 1 and len(axes) > 1:
        strides = strides * len(axes)
    for ax, b, e, s in zip(axes, a["begin"], a["end"], strides):
        n = xs[ax]
        sel = list(range(*slice(b, e, s).indices(n)))
        if len(sel) == n and s == 1:
            continue
        if not sel:   # empty slice: the adjoint is all zeros along this axis
            shape = shape_of(g)
            shape[ax] = n
            g = rlx.zeros(shape, elt_of(g))
            continue
        if abs(s) == 1 or len(sel) == 1:
            if s < 0 and len(sel) > 1:
                g = flip(g, ax)
            lo = min(sel)
            g = pad_axis(g, ax, lo, n - 1 - max(sel))
            continue
        out = shape_of(g)
        out[ax] = n
        idx = int_constant(sel, ir.IntegerType.get_signless(64))
        g = scatter_rows(g, ax, 1, idx, n, out, wrap_negative=False)
    return [g]


@vjp("rlx.take")
def take(op, grads):
    (g,) = grads
    x, indices = op.operands
    xs = shape_of(x)
    axis = attrs(op).get("axis")
    n_ind = len(shape_of(indices))
    if axis is None:  # takes from the flattened input
        return [scatter_rows(g, 0, n_ind, indices, math.prod(xs), xs), None]
    ax = axis[0] % len(xs)
    return [scatter_rows(g, ax, n_ind, indices, xs[ax], xs), None]


@vjp("rlx.triu")
def triu(op, grads):
    (g,) = grads
    return [rlx.triu(g, attrs(op).get("k", 0))]

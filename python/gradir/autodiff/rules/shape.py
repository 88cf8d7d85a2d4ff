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
  matmul as ``take`` with the constant list of selected positions.  The
  padded adjoints of several slices of one value are added; where their
  non-zero pieces are disjoint (slices that cut a value into parts, as a
  Transformer's q, k and v) rlx-simplify-gradient merges the sum into one
  ``concat`` of the pieces (``simplify/concat.py``): no zero-padded copies.

JVP rules: every shape op is linear in its float operand(s), so the tangent
goes through the same op.  A tangent carries the ``batch`` dims in front
(shape ``batch + operand shape``): axis attributes are normalized (negative
ones counted from the primal's end) and shifted past them
(``_helpers.batch_axes``; ``expand_dims``' axes are positions in the result,
counted against its rank), shapes get ``batch`` in front (``reshape``,
``broadcast_to`` through ``expand_tangent``), ``begin``/``end``/``strides``,
``sections``/``indices``, ``k`` and ``take``'s indices are unchanged.  With a
non-empty batch, absent attributes whose default would reach the batch dims
are spelled out: ``permute_dims``' reversal, ``squeeze`` of every size-1
axis, ``flatten`` (a ``reshape`` to ``batch + (n,)``) and ``take`` from the
flattened input (the tangent reshaped to ``batch + (n,)`` first).
``concat`` fills a missing operand tangent with zeros (no tangent at all
gives None); ``split`` of a missing tangent gives None for every result;
``triu`` works on the last two axes, so the batch dims need nothing.  Every
rule is batched.
"""
from __future__ import annotations

import math

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ...dialects import rlx
from . import jvp, vjp
from ._helpers import (attrs, batch_axes, elt_of, expand_tangent, shape_of, tangent_shape,
                       unbroadcast, zero_tangent)


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


# --- JVP rules (see the module docstring) -------------------------------------

@jvp("rlx.permute_dims")
def permute_dims_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    axes = attrs(op).get("axes")
    rank = len(shape_of(op.operands[0]))
    if axes is None:
        if not batch:
            return [rlx.permute_dims(t)]
        axes = list(range(rank - 1, -1, -1))
    nb = len(batch)
    return [rlx.permute_dims(t, list(range(nb)) + batch_axes(axes, rank, batch))]


@jvp("rlx.reshape")
def reshape_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    return [rlx.reshape(t, tangent_shape(op.results[0], batch))]


@jvp("rlx.expand_dims")
def expand_dims_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    rank = len(shape_of(op.results[0]))          # the axes are positions in the result
    return [rlx.expand_dims(t, batch_axes(attrs(op)["axis"], rank, batch))]


@jvp("rlx.squeeze")
def squeeze_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    xs = shape_of(op.operands[0])
    axis = attrs(op).get("axis")
    if axis is None:
        if not batch:
            return [rlx.squeeze(t)]
        axis = [i for i, d in enumerate(xs) if d == 1]
    if not axis:
        return [t]
    return [rlx.squeeze(t, batch_axes(axis, len(xs), batch))]


@jvp("rlx.flatten")
def flatten_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    if not batch:
        return [rlx.flatten(t)]
    return [rlx.reshape(t, tangent_shape(op.results[0], batch))]


@jvp("rlx.broadcast_to")
def broadcast_to_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    if not batch:
        return [rlx.broadcast_to(t, shape_of(op.results[0]))]
    return [expand_tangent(t, op.operands[0], op.results[0], batch)]


@jvp("rlx.concat")
def concat_jvp(op, tangents, batch):
    xs = list(op.operands)
    if all(t is None for t in tangents):
        return [None]
    pieces = [zero_tangent(x, batch) if t is None else t for x, t in zip(xs, tangents)]
    if len(pieces) == 1:
        return pieces
    rank = len(shape_of(xs[0]))
    axis = batch_axes(attrs(op).get("axis", [0]), rank, batch)
    return [rlx.concat(pieces, axis=axis)]


@jvp("rlx.split")
def split_jvp(op, tangents, batch):
    (t,) = tangents
    n = len(op.results)
    if t is None:
        return [None] * n
    a = attrs(op)
    x = op.operands[0]
    axis = batch_axes(a.get("axis", [0]), len(shape_of(x)), batch)
    if n == 1:
        return [t]
    parts = a["sections"] if "sections" in a else a["indices"]
    return rlx.split(t, parts, axis=axis)


@jvp("rlx.strided_slice")
def strided_slice_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    a = attrs(op)
    rank = len(shape_of(op.operands[0]))
    axes = a.get("axes", list(range(len(a["begin"]))))
    return [rlx.strided_slice(t, batch_axes(axes, rank, batch), a["begin"], a["end"],
                              a.get("strides"))]


@jvp("rlx.take")
def take_jvp(op, tangents, batch):
    t = tangents[0]
    if t is None:
        return [None]
    x, indices = op.operands
    xs = shape_of(x)
    axis = attrs(op).get("axis")
    if axis is None:              # from the flattened input
        if batch:
            t = rlx.reshape(t, list(batch) + [math.prod(xs)])
            axis = [len(batch)]
    else:
        axis = batch_axes(axis, len(xs), batch)
    r = rlx.take(t, indices, axis)
    if "mode" in op.attributes:   # an out-of-contract index mode, kept as is
        r.owner.attributes["mode"] = op.attributes["mode"]
    return [r]


@jvp("rlx.triu")
def triu_jvp(op, tangents, batch):
    # triu acts on the last two axes: the batch dims are leading ones
    (t,) = tangents
    if t is None:
        return [None]
    return [rlx.triu(t, attrs(op).get("k", 0))]

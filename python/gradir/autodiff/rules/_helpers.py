"""Shared helpers for VJP rules (constants, undoing broadcasts, shapes)."""

from __future__ import annotations

import contextlib

from mlir import ir

from ...dialects import rlx
from ...dialects.util import elt_of, reduction_axes, shape_of

__all__ = ["shape_of", "elt_of", "const_like", "const_scalar", "unbroadcast", "attrs",
           "reduction_axes", "tangent_shape", "zero_tangent", "expand_tangent", "batch_axes",
           "sum_tangents"]


def const_like(value: float, like: ir.Value) -> ir.Value:
    """A splat ``arith.constant`` with ``like``'s type."""
    from mlir.dialects import arith
    t = ir.RankedTensorType(like.type)
    attr = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(t.element_type, float(value)))
    return arith.ConstantOp(t, attr).result


# While ``shared_scalars()`` is open: (value, element type, block) -> the 0-d
# constant ``const_scalar`` built at the end of that block.
_SHARED: dict | None = None


@contextlib.contextmanager
def shared_scalars():
    """Within it, ``const_scalar`` builds each 0-d constant once per block
    (when inserting at the end of the block, where the first one dominates
    every later insertion) and returns it again after: what rlx-cse would
    make of the copies, without the copies.  rlx-gradient opens it when it
    simplifies the gradient (which merges the copies anyway); the raw
    gradient (``simplify=false``) keeps one constant per use."""
    global _SHARED
    outer = _SHARED
    _SHARED = {}
    try:
        yield
    finally:
        _SHARED = outer


def const_scalar(value: float, elt: ir.Type) -> ir.Value:
    """A 0-d ``arith.constant`` of element type ``elt`` (broadcasts anywhere)."""
    from mlir.dialects import arith
    key = None
    if _SHARED is not None:
        ip = ir.InsertionPoint.current
        if ip.ref_operation is None:            # at the end of the block
            key = (type(value), float(value), elt, ip.block)
            hit = _SHARED.get(key)
            if hit is not None:
                return hit
    t = ir.RankedTensorType.get([], elt)
    attr = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(elt, float(value)))
    result = arith.ConstantOp(t, attr).result
    if key is not None:
        _SHARED[key] = result
    return result


def unbroadcast(g: ir.Value, like: ir.Value) -> ir.Value:
    """Sums ``g`` over the axes along which ``like`` was broadcast, giving
    ``like``'s shape (``rlx.collapse_sum_to``); ``g`` itself when the shapes
    already agree."""
    if shape_of(g) == shape_of(like):
        return g
    return rlx.collapse_sum_to(g, shape_of(like))


def attrs(op) -> dict:
    """The op's attributes as Python values (axes as lists of ints)."""
    return rlx.attributes_of(op)


# --- forward mode: tangents carry ``batch`` leading dims ---------------------

def tangent_shape(v: ir.Value, batch) -> list[int]:
    """The shape of a tangent of ``v``: ``batch + v``'s shape."""
    return list(batch) + shape_of(v)


def zero_tangent(v: ir.Value, batch) -> ir.Value:
    """A zero tangent of ``v`` (``batch + v``'s shape, ``v``'s element type)."""
    return rlx.zeros(tangent_shape(v, batch), elt_of(v))


def expand_tangent(t, operand: ir.Value, result: ir.Value, batch):
    """The tangent ``t`` of ``operand`` broadcast like ``operand`` is in an
    elementwise op producing ``result``: shape ``batch + result``'s shape
    (numpy broadcasting behind the batch dims).  None stays None."""
    if t is None:
        return None
    want = tangent_shape(result, batch)
    if shape_of(t) == want:
        return t
    nb = len(batch)
    oshape, rshape = shape_of(operand), shape_of(result)
    if len(oshape) < len(rshape):
        t = rlx.reshape(t, list(batch) + [1] * (len(rshape) - len(oshape)) + oshape)
    if shape_of(t) != want:
        t = rlx.broadcast_to(t, want)
    assert len(want) == nb + len(rshape)
    return t


def batch_axes(axes, rank: int, batch) -> list[int]:
    """Axes of a primal of rank ``rank`` (negative ones counted from its
    end) as axes of its tangent: shifted past the batch dims."""
    nb = len(batch)
    return [(a % rank if rank else 0) + nb for a in axes]


def sum_tangents(*ts):
    """The sum of the tangents that are not None (None when all are)."""
    out = None
    for t in ts:
        if t is None:
            continue
        out = t if out is None else rlx.add(out, t)
    return out

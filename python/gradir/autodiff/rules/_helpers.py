"""Shared helpers for VJP rules (constants, undoing broadcasts, shapes)."""

from __future__ import annotations

import contextlib

from mlir import ir

from ...dialects import rlx
from ...dialects.util import elt_of, reduction_axes, shape_of

__all__ = ["shape_of", "elt_of", "const_like", "const_scalar", "unbroadcast", "attrs",
           "reduction_axes"]


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


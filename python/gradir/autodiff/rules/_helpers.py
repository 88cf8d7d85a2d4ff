"""Shared helpers for VJP rules (constants, undoing broadcasts, shapes)."""

from __future__ import annotations

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


def const_scalar(value: float, elt: ir.Type) -> ir.Value:
    """A 0-d ``arith.constant`` of element type ``elt`` (broadcasts anywhere)."""
    from mlir.dialects import arith
    t = ir.RankedTensorType.get([], elt)
    attr = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(elt, float(value)))
    return arith.ConstantOp(t, attr).result


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


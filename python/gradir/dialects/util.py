"""Dialect-level helpers shared by every package that reads rlx/grad IR: shapes
and element types of tensor values, element counts, axis normalization, and
which ops are pure.  One definition each; import them from here (the
IR-generic walks are in ``gradir.ir``).

Axes come in two meanings, so there are two functions:

- ``normalize_axes(axes, rank)``: each axis made non-negative, order and
  repeats kept (a permutation, the one axis of ``softmax``/``concat``);
- ``reduction_axes(axes, rank)``: the set of reduced axes, sorted, ``None``
  meaning every axis (``sum``, ``mean``, ...).

``checked_axes`` is ``normalize_axes`` for unverified input: it raises
``ShapeError`` for an axis out of range (and for repeats).
"""

from __future__ import annotations

import math
from typing import Sequence

from mlir import ir

__all__ = ["ShapeError", "PURE_DIALECTS", "is_pure", "shape_of", "elt_of", "numel",
           "normalize_axes", "reduction_axes", "checked_axes"]


class ShapeError(ValueError):
    """Invalid operand types, shapes or attributes for an rlx op."""


# IRDL ops carry no traits, so MLIR cannot tell they are side-effect free.
# Every rlx and grad op is; so is arith.constant.
PURE_DIALECTS = ("rlx.", "grad.")


def is_pure(op: ir.Operation) -> bool:
    """Whether ``op`` has no side effect (every rlx and grad op, ``arith.constant``)."""
    name = op.name
    return name.startswith(PURE_DIALECTS) or name == "arith.constant"


# --- shapes ------------------------------------------------------------------------

def _type(v) -> ir.Type:
    return v.type if isinstance(v, ir.Value) else v


# Concrete shaped types whose ``shape`` is the ShapedType's (read directly:
# the cast through ``ir.ShapedType`` is a second crossing per call).
_SHAPED = (ir.RankedTensorType, ir.MemRefType, ir.VectorType)


def shape_of(v) -> list[int]:
    """The static shape of a tensor (or memref) value or type."""
    t = v.type if isinstance(v, ir.Value) else v
    if type(t) in _SHAPED:
        return t.shape
    return [int(d) for d in ir.ShapedType(t).shape]


def elt_of(v) -> ir.Type:
    """The element type of a tensor (or memref) value or type; a scalar type
    (or a scalar value's type) is its own element type."""
    t = v.type if isinstance(v, ir.Value) else v
    if type(t) in _SHAPED:
        return t.element_type
    if isinstance(t, ir.ShapedType):
        return ir.ShapedType(t).element_type
    return t


def numel(x) -> int:
    """The number of elements of a shape (a sequence of ints), or of a value
    or type: a shaped type with a static shape has ``prod(shape)``, anything
    else (scalars, tuples, dynamic shapes) counts 1."""
    if isinstance(x, (ir.Value, ir.Type)):
        t = _type(x)
        if isinstance(t, ir.ShapedType) and ir.ShapedType(t).has_static_shape:
            return int(math.prod(ir.ShapedType(t).shape))
        return 1
    return int(math.prod(x))


# --- axes --------------------------------------------------------------------------

def normalize_axes(axes: Sequence[int], rank: int) -> list[int]:
    """Each axis non-negative (negatives count from the end), in the given order."""
    return [a % rank if rank else 0 for a in axes]


def reduction_axes(axes: Sequence[int] | None, rank: int) -> list[int]:
    """The reduced axes, non-negative, sorted, each once; ``None`` means all."""
    if axes is None:
        return list(range(rank))
    return sorted({a % rank for a in axes}) if rank else []


def checked_axes(axes: Sequence[int], rank: int, what: str = "axis",
                 unique: bool = True) -> list[int]:
    """``normalize_axes`` after checking every axis is in ``[-rank, rank)``
    (and, with ``unique``, that none repeats); raises ``ShapeError``."""
    for a in axes:
        if not -rank <= a < rank:
            raise ShapeError(f"{what} {a} is out of range for rank {rank}")
    out = normalize_axes(axes, rank)
    if unique and len(set(out)) != len(out):
        raise ShapeError(f"{what} {list(axes)} has duplicates")
    return out

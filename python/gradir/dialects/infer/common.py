"""What the per-op inference functions share: element types, type checks,
result types, numpy broadcasting of static shapes, single-axis attributes."""

from __future__ import annotations

from typing import Sequence

from mlir import ir

from ..util import ShapeError
from ..util import checked_axes as _norm_axes

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
INDEX_TYPES = ("i32", "i64")
ALL_ELEMENT_TYPES = FLOAT_TYPES + ("i1",) + INDEX_TYPES


_FLOAT_NAMES = {ir.F16Type: "f16", ir.BF16Type: "bf16", ir.F32Type: "f32", ir.F64Type: "f64"}


def element_type_name(t: ir.Type) -> str:
    """``str(t)`` of an element type; the common ones without printing
    (printing a type costs microseconds)."""
    name = _FLOAT_NAMES.get(type(t))
    if name is not None:
        return name
    if type(t) is ir.IntegerType and t.is_signless:
        return f"i{t.width}"
    return str(t)


def _tensor(t: ir.Type, what: str) -> ir.RankedTensorType:
    if not isinstance(t, ir.RankedTensorType):
        raise ShapeError(f"{what} must be a ranked tensor, got {t}")
    if any(d < 0 for d in t.shape):
        raise ShapeError(f"{what} must have a static shape, got {t}")
    return t


def _shape(t: ir.Type, what: str = "operand") -> list[int]:
    return list(_tensor(t, what).shape)


def _elt(t: ir.Type) -> ir.Type:
    return t.element_type


def _check_elt(t: ir.Type, allowed: Sequence[str], what: str) -> None:
    e = element_type_name(_tensor(t, what).element_type)
    if e not in allowed:
        raise ShapeError(f"{what} element type must be one of {', '.join(allowed)}, got {e}")


def _float(t: ir.Type, what: str = "operand") -> ir.RankedTensorType:
    _check_elt(t, FLOAT_TYPES, what)
    return t


def _any_elt(t: ir.Type, what: str = "operand") -> ir.RankedTensorType:
    _check_elt(t, ALL_ELEMENT_TYPES, what)
    return t


def _same_elt(a: ir.Type, b: ir.Type, what: str) -> None:
    if _elt(a) != _elt(b):
        raise ShapeError(f"{what} must have the same element type, got {_elt(a)} and {_elt(b)}")


_DYNAMIC = -(1 << 63)        # ShapedType.get_dynamic_size()


def _tensor_type(shape: Sequence[int], elt: ir.Type) -> ir.RankedTensorType:
    shape = list(shape)
    for n in shape:
        # an inferred size past int64 (a concat of 4 x 2^62, a padding of
        # 2^63 - 1): MLIR's types hold 64-bit sizes
        if n != _DYNAMIC and not 0 <= n < 1 << 63:
            raise ShapeError(f"the result's size {n} along an axis does not fit in 64 bits"
                             if n >= 0 else f"the result's size along an axis is negative ({n})")
    return ir.RankedTensorType.get(shape, elt)


def _count(ops: Sequence[ir.Type], n: int) -> None:
    if len(ops) != n:
        raise ShapeError(f"expected {n} operand(s), got {len(ops)}")


def _need_result(results, what="the result type") -> ir.RankedTensorType:
    if not results or len(results) != 1:
        raise ShapeError(f"{what} is required (it carries the shape)")
    return _tensor(results[0], "result")


def broadcast_shapes(*shapes: Sequence[int]) -> list[int]:
    """numpy broadcasting of static shapes; ShapeError if incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            text = " and ".join(_fmt(s) for s in shapes)
            raise ShapeError(f"shapes {text} are not broadcastable")
        out.append(dims.pop() if dims else 1)
    return out


def _broadcasts(src, dst) -> bool:
    """Whether ``src`` broadcasts (numpy rules) to exactly ``dst``."""
    try:
        return broadcast_shapes(src, dst) == list(dst)
    except ShapeError:
        return False


def _fmt(shape) -> str:
    return str(tuple(int(d) for d in shape))


def _one_axis(attrs, name: str, rank: int, default: int | None):
    """A single-axis ``array<i64: a>`` attribute, normalised (None if absent
    and no default)."""
    axes = attrs.get(name)
    if axes is None:
        return None if default is None else _norm_axes([default], rank, name)[0]
    if len(axes) != 1:
        raise ShapeError(f"'{name}' must hold exactly one axis, got {len(axes)}")
    return _norm_axes(axes, rank, name)[0]

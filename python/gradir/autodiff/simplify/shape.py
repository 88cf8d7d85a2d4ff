"""Shape patterns: identities, reshape and broadcast chains, and
reductions of broadcasts.

- ``reshape``/``expand_dims``/``squeeze``/``flatten``/``broadcast_to``/
  ``astype`` whose result type is the operand's -> the operand.
- ``reshape(reshape(x))`` -> ``reshape(x)`` (``expand_dims``, ``squeeze``
  and ``flatten`` are reshapes too), or ``x`` when the types agree.
- ``broadcast_to(broadcast_to(x))`` -> ``broadcast_to(x)`` (and through a
  reshape that only prepends size-1 axes); a reshape,
  ``permute_dims`` or ``strided_slice`` of ``broadcast_to(s)`` with ``s``
  a single element -> ``broadcast_to(s)`` of the result shape.
- ``sum``/``mean``/``collapse_sum_to`` of ``broadcast_to(x)`` over axes
  along which ``x`` does not vary (the broadcast axes) -> ``x`` times the
  number of summed elements (``x`` itself for ``mean``), reshaped to the
  result; never when an axis ``x`` varies along is reduced.
- ``sum``/``mean``/``max``/``min``/``prod``/``collapse_sum_to`` that only
  reduce axes of size 1 -> the operand (reshaped).
"""

from __future__ import annotations

import math

from mlir import ir

from ._facts import (RESHAPES, Rewrite, attrs, elt_of, leading_ones_reshape, producer,
                     reduction_axes, removable, same_phase, shape_of, splat_value)


def fold_identity(op, rewriter):
    """A shape or type op whose result type is its operand's -> the operand."""
    op = op.operation
    x = op.operands[0]
    if x.type != op.results[0].type:
        return True
    Rewrite(op, rewriter).replace(x)


def merge_reshapes(op, rewriter):
    """``reshape(reshape(x))`` -> ``reshape(x)`` or ``x``."""
    op = op.operation
    inner = producer(op.operands[0], *RESHAPES)
    if inner is None or not same_phase(inner, op):
        return True
    source = inner.operands[0]
    t = op.results[0].type
    rw = Rewrite(op, rewriter)
    rw.replace(source if source.type == t else rw.build("rlx.reshape", [source], result=t))
    return None


def merge_broadcasts(op, rewriter):
    """``broadcast_to(broadcast_to(x))`` -> ``broadcast_to(x)``, also when
    the inner op is a reshape that only prepends size-1 axes."""
    op = op.operation
    inner = producer(op.operands[0], "rlx.broadcast_to") or leading_ones_reshape(op.operands[0])
    if inner is None or not same_phase(inner, op):
        return True
    rw = Rewrite(op, rewriter)
    rw.replace(rw.build("rlx.broadcast_to", [inner.operands[0]], result=op.results[0].type))
    return None


def move_broadcast(op, rewriter):
    """A shape op of ``broadcast_to(s)`` with ``s`` a single element ->
    ``broadcast_to(s)`` of the result shape."""
    op = op.operation
    b = producer(op.operands[0], "rlx.broadcast_to")
    if b is None or not same_phase(b, op):
        return True
    s = b.operands[0]
    t = op.results[0].type
    if math.prod(shape_of(s)) != 1 or len(shape_of(s)) > len(shape_of(op.results[0])):
        return True
    rw = Rewrite(op, rewriter)
    rw.replace(rw.build("rlx.broadcast_to", [s], result=t))
    return None


def _reduction(op):
    """(reduced axes of the operand, shape of the result as if keepdims)."""
    x = op.operands[0]
    shape = shape_of(x)
    rank = len(shape)
    if op.name == "rlx.collapse_sum_to":
        target = shape_of(op.results[0])
        lead = rank - len(target)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(target)
                                    if d == 1 and shape[lead + i] != 1]
    else:
        axes = reduction_axes(attrs(op).get("axis"), rank)
    return axes, [1 if i in axes else d for i, d in enumerate(shape)]


def _placed(op, aligned: list[int], axes: list[int]) -> list[int]:
    """A keepdims-rank shape as laid out in the result (reduced axes
    dropped unless keepdims; collapse_sum_to drops the leading ones)."""
    if op.name == "rlx.collapse_sum_to":
        return aligned[len(aligned) - len(shape_of(op.results[0])):]
    if attrs(op).get("keepdims", False):
        return aligned
    return [d for i, d in enumerate(aligned) if i not in axes]


def reduce_of_broadcast(op, rewriter):
    """``sum(broadcast_to(x))`` over broadcast axes -> ``x * count`` (reshaped)."""
    op = op.operation
    b = producer(op.operands[0], "rlx.broadcast_to")
    if b is None or not same_phase(b, op):
        return True
    x = b.operands[0]
    big = shape_of(op.operands[0])
    axes, _ = _reduction(op)
    small = shape_of(x)
    aligned = [1] * (len(big) - len(small)) + small
    if any(aligned[i] != 1 for i in axes):
        return True   # an axis x varies along is reduced: no closed form
    count = math.prod(big[i] for i in axes)
    scale = 1 if op.name == "rlx.mean" else count
    out_t = op.results[0].type
    out = shape_of(op.results[0])
    placed = _placed(op, aligned, axes)
    splat = splat_value(x)
    if splat is not None:
        created = 1
    else:
        created = (2 if scale != 1 else 0) + (small != placed) + (placed != out)
    if created > removable(op, keep=[x] if splat is None else []):
        return True
    rw = Rewrite(op, rewriter)
    if splat is not None:
        rw.replace(rw.constant(splat * scale, out_t))
        return None
    v = x
    if scale != 1:
        v = rw.build("rlx.multiply", [v, rw.scalar(scale, elt_of(x))])
    if small != placed:
        v = rw.build("rlx.reshape", [v], result=_tensor(placed, elt_of(x)))
    if placed != out:
        v = rw.build("rlx.broadcast_to", [v], result=out_t)
    rw.replace(v)
    return None


def identity_reduction(op, rewriter):
    """A reduction over axes of size 1 only -> its operand, reshaped."""
    op = op.operation
    x = op.operands[0]
    shape = shape_of(x)
    axes, _ = _reduction(op)
    if any(shape[i] != 1 for i in axes):
        return True
    t = op.results[0].type
    rw = Rewrite(op, rewriter)
    rw.replace(x if x.type == t else rw.build("rlx.reshape", [x], result=t))
    return None


def _tensor(shape, elt):
    return ir.RankedTensorType.get(list(shape), elt)


IDENTITY_ROOTS = sorted(RESHAPES | {"rlx.broadcast_to", "rlx.astype"})

PATTERNS = (
    [(name, fold_identity) for name in IDENTITY_ROOTS]
    + [(name, merge_reshapes) for name in sorted(RESHAPES)]
    + [("rlx.broadcast_to", merge_broadcasts)]
    + [(name, move_broadcast) for name in sorted(RESHAPES | {"rlx.permute_dims",
                                                             "rlx.strided_slice"})]
    + [(name, reduce_of_broadcast) for name in ("rlx.sum", "rlx.mean", "rlx.collapse_sum_to")]
    + [(name, identity_reduction) for name in ("rlx.sum", "rlx.mean", "rlx.max", "rlx.min",
                                               "rlx.prod", "rlx.collapse_sum_to")]
)

__all__ = ["PATTERNS", "fold_identity", "merge_reshapes", "merge_broadcasts", "move_broadcast",
           "reduce_of_broadcast", "identity_reduction"]

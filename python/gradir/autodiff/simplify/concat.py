"""Concat patterns: sums of zero-padded pieces.

The adjoint of a ``strided_slice`` with stride 1 is the slice's adjoint
padded with zeros (``concat(zeros, g, zeros)``, rules/shape.py), and the
adjoints of a value's uses are added.  A value cut into several slices
that each get an adjoint (a Transformer's fused QKV projection split into
q, k and v) then gets ``add(add(concat(g_q, 0), concat(0, g_k, 0)),
concat(0, g_v))``: three tensors of the whole value's size, two of them
mostly zeros, and two additions over the whole value.

- ``add(concat(..), concat(..))`` along the same axis whose non-zero pieces
  (operands other than known zeros) cover disjoint ranges -> one
  ``concat`` of those pieces in order, with zeros where neither has one
  (reusing a zero operand of that shape when there is one); a single
  piece covering the whole result -> that piece.  Applied again on the
  next ``add``, the three padded adjoints above become
  ``concat(g_q, g_k, g_v)``: one copy of each, no zero tensor, no addition.

Exact where the sums were: every element is ``x + 0`` for one ``x``, which
is ``x`` (but for ``-0.0 + 0.0``, as ``x + 0 -> x`` in ``algebra``).
"""

from __future__ import annotations

from mlir import ir

from ._facts import Rewrite, attrs, is_zero, producer, removable, same_phase, shape_of


def _pieces(c: ir.Operation, axis: int):
    """``c``'s operands as ``(start, end, value, zero)`` along ``axis``."""
    out, at = [], 0
    for v in c.operands:
        n = shape_of(v)[axis]
        out.append((at, at + n, v, is_zero(v)))
        at += n
    return out


def _axis(c: ir.Operation) -> int:
    rank = len(shape_of(c.results[0]))
    return attrs(c).get("axis", [0])[0] % rank


def add_of_padded(op, rewriter):
    """``add(concat(..), concat(..))`` with disjoint non-zero pieces -> one
    ``concat`` (see the module docstring)."""
    op = op.operation
    a, b = op.operands
    t = op.results[0].type
    if a.type != t or b.type != t:
        return True
    ca, cb = producer(a, "rlx.concat"), producer(b, "rlx.concat")
    if ca is None or cb is None or not same_phase(ca, op) or not same_phase(cb, op):
        return True
    axis = _axis(ca)
    if _axis(cb) != axis:
        return True
    pieces = _pieces(ca, axis) + _pieces(cb, axis)
    values = sorted((p for p in pieces if not p[3]), key=lambda p: p[0])
    if not values:
        return True
    for prev, nxt in zip(values, values[1:]):
        if nxt[0] < prev[1]:
            return True             # both have values there: a real sum
    zeros = {}                      # zero operands by extent, for the gaps
    for start, end, v, zero in pieces:
        if zero and v.type == _along(t, axis, end - start):
            zeros.setdefault(end - start, v)
    # the pieces and gaps, in order
    size = shape_of(op.results[0])[axis]
    plan, at = [], 0
    for start, end, v, _ in values + [(size, size, None, False)]:
        if start > at:
            plan.append(start - at)     # a gap of that extent
        if v is not None:
            plan.append(v)
        at = end
    new_zeros = sum(1 for p in plan if isinstance(p, int) and p not in zeros)
    created = (len(plan) > 1) + new_zeros
    kept = [p for p in plan if not isinstance(p, int)] + [zeros[p] for p in plan
                                                          if isinstance(p, int) and p in zeros]
    if created > removable(op, kept):
        return True
    rw = Rewrite(op, rewriter)
    operands = []
    for p in plan:
        if not isinstance(p, int):
            operands.append(p)
        elif p in zeros:
            operands.append(zeros[p])
        else:
            operands.append(rw.constant(0, _along(t, axis, p)))
    if len(operands) == 1:
        rw.replace(operands[0])
    else:
        rw.replace(rw.build("rlx.concat", operands, {"axis": [axis]}, result=t))
    return None


def _along(t: ir.Type, axis: int, n: int) -> ir.Type:
    """``t`` with extent ``n`` along ``axis``."""
    shape = list(ir.RankedTensorType(t).shape)
    shape[axis] = n
    return ir.RankedTensorType.get(shape, ir.RankedTensorType(t).element_type)


PATTERNS = [("rlx.add", add_of_padded)]

__all__ = ["PATTERNS", "add_of_padded"]

"""Inference of the ops whose result shape is the numpy broadcasting of their
operands' shapes: unary, binary, compare, where, and matmul (its batch
dims)."""

from __future__ import annotations

from mlir import ir

from ..util import ShapeError
from .common import (_any_elt, _check_elt, _count, _elt, _float, _fmt, _same_elt, _tensor_type,
                     broadcast_shapes)


def _unary(ops, attrs, results):
    _count(ops, 1)
    return [_float(ops[0], "operand")]


def _binary(ops, attrs, results):
    _count(ops, 2)
    a, b = _float(ops[0], "lhs"), _float(ops[1], "rhs")
    _same_elt(a, b, "lhs and rhs")
    return [_tensor_type(broadcast_shapes(a.shape, b.shape), _elt(a))]


def _compare(ops, attrs, results):
    _count(ops, 2)
    a, b = _any_elt(ops[0], "lhs"), _any_elt(ops[1], "rhs")
    _same_elt(a, b, "lhs and rhs")
    return [_tensor_type(broadcast_shapes(a.shape, b.shape), ir.IntegerType.get_signless(1))]


def _where(ops, attrs, results):
    _count(ops, 3)
    _check_elt(ops[0], ("i1",), "condition")
    a, b = _any_elt(ops[1], "lhs"), _any_elt(ops[2], "rhs")
    _same_elt(a, b, "lhs and rhs")
    return [_tensor_type(broadcast_shapes(ops[0].shape, a.shape, b.shape), _elt(a))]


def _matmul(ops, attrs, results):
    _count(ops, 2)
    a, b = _float(ops[0], "lhs"), _float(ops[1], "rhs")
    _same_elt(a, b, "lhs and rhs")
    sa, sb = list(a.shape), list(b.shape)
    if not sa or not sb:
        raise ShapeError("matmul operands must have rank >= 1")
    a1, b1 = len(sa) == 1, len(sb) == 1
    if a1:
        sa = [1] + sa
    if b1:
        sb = sb + [1]
    if sa[-1] != sb[-2]:
        raise ShapeError(f"contraction dimensions differ: lhs {_fmt(a.shape)} has {sa[-1]}, "
                         f"rhs {_fmt(b.shape)} has {sb[-2]}")
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    out = batch + ([] if a1 else [sa[-2]]) + ([] if b1 else [sb[-1]])
    return [_tensor_type(out, _elt(a))]

"""Inference of tuple and tuple_get_item, and of grad's identity markers
(start_checkpoint, end_checkpoint, no_grad)."""

from __future__ import annotations

from mlir import ir

from ..util import ShapeError
from .common import _count


def _tuple(ops, attrs, results):
    return [ir.TupleType.get_tuple(list(ops))]


def _tuple_get_item(ops, attrs, results):
    _count(ops, 1)
    t = ops[0]
    if not isinstance(t, ir.TupleType):
        raise ShapeError(f"operand must be a tuple, got {t}")
    if "index" not in attrs:
        raise ShapeError("requires attribute 'index'")
    i = attrs["index"]
    if not 0 <= i < t.num_types:
        raise ShapeError(f"index {i} is out of range for a tuple of {t.num_types} element(s)")
    return [t.get_type(i)]


def _marker(ops, attrs, results):
    _count(ops, 1)
    t = ops[0]
    if not isinstance(t, (ir.RankedTensorType, ir.TupleType)):
        raise ShapeError(f"operand must be a tensor or a tuple, got {t}")
    return [t]

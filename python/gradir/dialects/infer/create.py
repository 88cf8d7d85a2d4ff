"""Inference of the ops whose result type is declared: zeros, ones, full,
astype; and zeros_like, ones_like."""

from __future__ import annotations

from ..util import ShapeError
from .common import _any_elt, _count, _fmt, _need_result


def _create(ops, attrs, results):
    _count(ops, 0)
    r = _need_result(results)
    _any_elt(r, "result")
    return [r]


def _full(ops, attrs, results):
    _count(ops, 1)
    f = _any_elt(ops[0], "fill")
    if f.rank != 0:
        raise ShapeError(f"fill must be a 0-d tensor, got {f}")
    r = _need_result(results)
    _any_elt(r, "result")
    return [r]


def _like(ops, attrs, results):
    _count(ops, 1)
    return [_any_elt(ops[0], "operand")]


def _astype(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    r = _need_result(results)
    _any_elt(r, "result")
    if list(x.shape) != list(r.shape):
        raise ShapeError(f"result shape {_fmt(r.shape)} differs from operand shape {_fmt(x.shape)}")
    return [r]

"""Inference of the reductions (sum, mean, max, min, prod, variance) and
cumsum."""

from __future__ import annotations

import math

from ..util import ShapeError
from ..util import checked_axes as _norm_axes
from .common import _count, _elt, _float, _one_axis, _tensor_type


def _reduced_shape(x, attrs):
    axes = attrs.get("axis")
    axes = list(range(x.rank)) if axes is None else _norm_axes(axes, x.rank, "axis")
    keep = attrs.get("keepdims", False)
    return [1 if i in axes else d for i, d in enumerate(x.shape)
            if keep or i not in axes]


def _reduce(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    return [_tensor_type(_reduced_shape(x, attrs), _elt(x))]


def _extremum(ops, attrs, results):
    out = _reduce(ops, attrs, results)
    x = ops[0]
    axes = attrs.get("axis")
    axes = list(range(x.rank)) if axes is None else _norm_axes(axes, x.rank, "axis")
    empty = [a for a in axes if x.shape[a] == 0]
    if empty and math.prod(out[0].shape) > 0:
        raise ShapeError(f"reduces axis {empty[0]} of size 0: the max or min of nothing has "
                         "no value (numpy refuses it too)")
    return out


def _cumsum(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    if attrs.get("axis") is None:
        return [_tensor_type([math.prod(x.shape)], _elt(x))]
    _one_axis(attrs, "axis", x.rank, None)
    return [x]

"""Normalizing rlx ops -> linalg.

softmax, log_softmax, layer_norm, rms_norm -> reductions and elementwise
``linalg.generic`` ops (the statistics are read through projected maps).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from ...dialects.infer import attributes_of
from .linalg_utils import (PARALLEL, REDUCTION, elt_of, filled, generic, identity_map,
                           maps_generic, normalize_axes, numel, reduce_dims, scalar_const,
                           shape_of)
from .reduce import centered_square_sum, divide_by, projected_map, reduce, reduce_sum
from .registry import lowers


def _c(x, v):
    return scalar_const(x.type, v)


# --- softmax -------------------------------------------------------------------------

def _softmax_parts(op):
    x = op.operands[0]
    shape = shape_of(x)
    rank = len(shape)
    axis = attributes_of(op).get("axis")
    ax = normalize_axes([-1] if axis is None else axis, rank)[0]
    m = reduce(x, [ax], "max")
    pm = projected_map(rank, [ax])
    e = maps_generic([x, m], [identity_map(rank), pm], shape, elt_of(x),
                     lambda v, mv: math.exp(arith.subf(v, mv)))
    return x, shape, rank, ax, m, pm, e


@lowers("rlx.softmax")
def lower_softmax(op):
    x, shape, rank, ax, m, pm, e = _softmax_parts(op)
    s = reduce_sum(e, [ax])
    return [maps_generic([e, s], [identity_map(rank), pm], shape, elt_of(x), arith.divf)]


@lowers("rlx.log_softmax")
def lower_log_softmax(op):
    x, shape, rank, ax, m, pm, e = _softmax_parts(op)
    s = reduce_sum(e, [ax])
    return [maps_generic([x, m, s], [identity_map(rank), pm, pm], shape, elt_of(x),
                         lambda v, mv, sv: arith.subf(arith.subf(v, mv), math.log(sv)))]


# --- normalization -----------------------------------------------------------------

def _param_map(rank, axes):
    """Reads a gamma-like operand whose dim i is the data's axis ``axes[i]``."""
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(a) for a in axes])


@lowers("rlx.layer_norm")
def lower_layer_norm(op):
    x, gamma, beta = op.operands
    attrs = attributes_of(op)
    shape = shape_of(x)
    rank = len(shape)
    axes = normalize_axes(attrs["axes"], rank)
    dims = sorted(set(axes))
    eps = attrs.get("epsilon", 1e-5)
    scale, center = attrs.get("scale", True), attrs.get("center", True)
    count = numel([shape[d] for d in dims])
    mean = divide_by(reduce_sum(x, dims), count)
    var = divide_by(centered_square_sum(x, mean, dims), count)
    pm, gm = projected_map(rank, dims), _param_map(rank, axes)

    def body(v, m, s, g, b):
        y = arith.divf(arith.subf(v, m), math.sqrt(arith.addf(s, _c(s, eps))))
        if scale:
            y = arith.mulf(y, g)
        if center:
            y = arith.addf(y, b)
        return y

    return [maps_generic([x, mean, var, gamma, beta], [identity_map(rank), pm, pm, gm, gm],
                         shape, elt_of(x), body)]


@lowers("rlx.rms_norm")
def lower_rms_norm(op):
    x, weight = op.operands
    attrs = attributes_of(op)
    shape = shape_of(x)
    rank = len(shape)
    axes = normalize_axes(attrs.get("axes", [-1]), rank)
    dims = sorted(set(axes))
    eps = attrs.get("epsilon", 1e-5)
    elt = elt_of(x)
    pm = projected_map(rank, dims)
    sq = generic([x], [filled(reduce_dims(shape, dims), elt, 0)], [identity_map(rank), pm],
                 [REDUCTION if i in set(dims) else PARALLEL for i in range(rank)],
                 lambda v, acc: [arith.addf(acc, arith.mulf(v, v))])[0]
    ms = divide_by(sq, numel([shape[d] for d in dims]))

    def body(v, m, w):
        return arith.mulf(arith.divf(v, math.sqrt(arith.addf(m, _c(m, eps)))), w)

    return [maps_generic([x, ms, weight], [identity_map(rank), pm, _param_map(rank, axes)],
                         shape, elt, body)]

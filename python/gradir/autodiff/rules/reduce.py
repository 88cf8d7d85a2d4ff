"""VJP rules of reductions.

- ``max``/``min``: the adjoint goes to every position equal to the extremum
  (``equal(x, broadcast(result))``), divided equally among ties (JAX's
  ``reduce_max`` / PyTorch's ``amax`` convention), so the adjoints of a
  reduced group always sum to the incoming gradient.
- ``prod``: ``g`` times the product of the other elements of the group
  (``prod / x`` without zeros; exact with one or more zeros).
- ``variance``: the population variance (Relax): ``g * 2 (x - mean) / N``.
- ``cumsum``: a reverse cumulative sum (flip, cumsum, flip back); an absent
  axis means the flattened input, so the adjoint is reshaped back.

JVP rules (tangents carry the leading ``batch`` dims, so every reduction of
a tangent names its axes explicitly, shifted past them: an absent ``axis``
reduces every primal axis, never the batch dims):
- ``sum``/``mean``/``cumsum``: the op itself on the tangent (linear); a mean
  or variance of nothing has a zero tangent.
- ``max``/``min``: the mean of the tangent over the positions equal to the
  extremum (the VJP's even split among ties, so ``<jvp(v), u> = <v, vjp(u)>``
  holds at ties too; one-sided derivatives differ there).
- ``prod``: ``sum(t * local)`` with the VJP's product of the other elements
  (exact with zeros).
- ``variance``: ``2 / N * sum((x - mean) * t)``.
"""
import math

from ...dialects import rlx
from . import jvp, vjp
from ._helpers import (attrs, batch_axes, const_scalar, elt_of, reduction_axes, shape_of,
                       zero_tangent)
from .shape import flip


def _expand_back(g, x, op):
    """Broadcasts a reduced adjoint back to ``x``'s shape (re-inserting the
    reduced axes when keepdims was false)."""
    if shape_of(g) == shape_of(x):
        return g
    if not shape_of(g):   # a 0-d adjoint broadcasts as it is
        return rlx.broadcast_to(g, shape_of(x))
    return rlx.broadcast_to(_keepdims(g, x, op), shape_of(x))


def _keepdims(v, x, op):
    """A reduced value reshaped to the keepdims=true shape."""
    a = attrs(op)
    axes = reduction_axes(a.get("axis"), len(shape_of(x)))
    kept = [1 if i in axes else d for i, d in enumerate(shape_of(x))]
    if shape_of(v) != kept:
        v = rlx.reshape(v, kept)
    return v


def _count(x, op):
    xs = shape_of(x)
    return math.prod(xs[i] for i in reduction_axes(attrs(op).get("axis"), len(xs)))


@vjp("rlx.sum")
def sum_(op, grads):
    (g,) = grads
    return [_expand_back(g, op.operands[0], op)]


@vjp("rlx.mean")
def mean(op, grads):
    (g,) = grads
    x = op.operands[0]
    if _count(x, op) == 0:       # a mean of nothing: x is empty, so is its gradient
        return [rlx.zeros_like(x)]
    scale = const_scalar(1.0 / _count(x, op), elt_of(x))
    return [_expand_back(rlx.multiply(g, scale), x, op)]


def _extremum(op, grads):
    (g,) = grads
    x = op.operands[0]
    axes = reduction_axes(attrs(op).get("axis"), len(shape_of(x)))
    y = _expand_back(op.results[0], x, op)
    mask = rlx.equal(x, y)
    ties = rlx.sum(rlx.astype(mask, elt_of(x)), axis=axes, keepdims=True)
    share = rlx.broadcast_to(rlx.divide(_keepdims(g, x, op), ties), shape_of(x))
    return [rlx.where(mask, share, const_scalar(0.0, elt_of(x)))]


vjp("rlx.max", "rlx.min")(_extremum)


def _prod_local(op):
    """d prod / d x: for each element, the product of the other elements of
    its group (x's shape)."""
    # prod / x_i when no element of the group is 0; with one zero, that
    # product at the zero and 0 elsewhere; with two or more, 0 everywhere
    # (g * prod / x gave NaN at a zero: a hostile-input review against
    # torch.autograd)
    x = op.operands[0]
    et = elt_of(x)
    axes = reduction_axes(attrs(op).get("axis"), len(shape_of(x)))
    zero_c, one_c = const_scalar(0.0, et), const_scalar(1.0, et)
    is_zero = rlx.equal(x, zero_c)
    safe = rlx.where(is_zero, one_c, x)
    others = rlx.broadcast_to(rlx.prod(safe, axis=axes, keepdims=True), shape_of(x))
    zeros = rlx.broadcast_to(rlx.sum(rlx.astype(is_zero, et), axis=axes, keepdims=True),
                             shape_of(x))
    return rlx.where(is_zero,
                     rlx.where(rlx.equal(zeros, one_c), others, zero_c),
                     rlx.where(rlx.equal(zeros, zero_c), rlx.divide(others, safe), zero_c))


@vjp("rlx.prod")
def prod(op, grads):
    (g,) = grads
    return [rlx.multiply(_expand_back(g, op.operands[0], op), _prod_local(op))]


@vjp("rlx.variance")
def variance(op, grads):
    (g,) = grads
    x = op.operands[0]
    if _count(x, op) == 0:       # a variance of nothing: x is empty, so is its gradient
        return [rlx.zeros_like(x)]
    axes = reduction_axes(attrs(op).get("axis"), len(shape_of(x)))
    centered = rlx.subtract(x, rlx.mean(x, axis=axes, keepdims=True))
    scale = const_scalar(2.0 / _count(x, op), elt_of(x))
    return [rlx.multiply(rlx.multiply(_keepdims(g, x, op), scale), centered)]


@vjp("rlx.cumsum")
def cumsum(op, grads):
    (g,) = grads
    x = op.operands[0]
    a = attrs(op)
    axis = a.get("axis")
    ax = 0 if axis is None else axis[0] % len(shape_of(x))
    extra = {"exclusive": True} if a.get("exclusive") else {}
    rev = rlx.build_op("rlx.cumsum", [flip(g, ax)], {"axis": [ax], **extra}).result
    out = flip(rev, ax)
    if shape_of(out) != shape_of(x):
        out = rlx.reshape(out, shape_of(x))
    return [out]


# --- forward mode --------------------------------------------------------------

def _tangent_reduce(builder, t, op, batch):
    """``builder`` (``rlx.sum``, ``rlx.mean``) over the op's axes of the
    tangent ``t`` (shifted past the batch dims), keepdims as the op."""
    x = op.operands[0]
    rank = len(shape_of(x))
    axes = batch_axes(reduction_axes(attrs(op).get("axis"), rank), rank, batch)
    return builder(t, axis=axes, keepdims=bool(attrs(op).get("keepdims", False)))


@jvp("rlx.sum")
def sum_jvp(op, tangents, batch):
    (t,) = tangents
    return [None if t is None else _tangent_reduce(rlx.sum, t, op, batch)]


@jvp("rlx.mean")
def mean_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    if _count(op.operands[0], op) == 0:      # a mean of nothing
        return [zero_tangent(op.results[0], batch)]
    return [_tangent_reduce(rlx.mean, t, op, batch)]


@jvp("rlx.max", "rlx.min")
def extremum_jvp(op, tangents, batch):
    # the tangent averaged over the positions equal to the extremum: the
    # transpose of the VJP's even split among ties
    (t,) = tangents
    if t is None:
        return [None]
    x = op.operands[0]
    axes = reduction_axes(attrs(op).get("axis"), len(shape_of(x)))
    mask = rlx.astype(rlx.equal(x, _expand_back(op.results[0], x, op)), elt_of(x))
    share = rlx.divide(mask, rlx.sum(mask, axis=axes, keepdims=True))
    return [_tangent_reduce(rlx.sum, rlx.multiply(t, share), op, batch)]


@jvp("rlx.prod")
def prod_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    return [_tangent_reduce(rlx.sum, rlx.multiply(t, _prod_local(op)), op, batch)]


@jvp("rlx.variance")
def variance_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    x = op.operands[0]
    if _count(x, op) == 0:       # a variance of nothing
        return [zero_tangent(op.results[0], batch)]
    axes = reduction_axes(attrs(op).get("axis"), len(shape_of(x)))
    centered = rlx.subtract(x, rlx.mean(x, axis=axes, keepdims=True))
    scale = const_scalar(2.0, elt_of(x))
    return [_tangent_reduce(rlx.mean, rlx.multiply(t, rlx.multiply(centered, scale)), op,
                            batch)]


@jvp("rlx.cumsum")
def cumsum_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    x = op.operands[0]
    a = attrs(op)
    nb = len(batch)
    axis = a.get("axis")
    if axis is None:             # the flattened input
        t = rlx.reshape(t, list(batch) + [math.prod(shape_of(x))])
        ax = nb
    else:
        ax = batch_axes(axis, len(shape_of(x)), batch)[0]
    extra = {"exclusive": True} if a.get("exclusive") else {}
    return [rlx.build_op("rlx.cumsum", [t], {"axis": [ax], **extra}).result]

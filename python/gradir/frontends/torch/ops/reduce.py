"""Reductions: sum, mean, amax/amin/max/min, prod, var/std, logsumexp, norm,
cosine similarity, softmax/log_softmax, cumsum, argmax/argmin."""

from __future__ import annotations

import math

from gradir.dialects import grad, rlx

from .registry import aten
from ._helpers import (FLOATING, float_operands, integer_via_f64, norm_axes,
                       norm_axis, reshape_to)

__all__: list[str] = []


def _axes(cx, v, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    return norm_axes(dim, cx.rank(v))


def _reduce(builder):
    def mapping(cx, x, dim=None, keepdim=False, dtype=None):
        if cx.op in ("aten.sum.default", "aten.mean.default"):
            # sum.default(self, *, dtype=None): the importer binds the
            # keyword-only dtype second, where dim was read (x.sum(dtype=...)
            # raised a TypeError); the operand is cast to the result's dtype
            dim, keepdim = None, False
        if builder is rlx.sum_ and str(cx.out_dtype) not in FLOATING:
            # mask.sum(-1): the count, through f64 (integer_via_f64)
            return integer_via_f64(
                cx, lambda v: v if cx.rank(v) == 0 else builder(v, _axes(cx, v, dim),
                                                                bool(keepdim)), x)
        (v,) = float_operands(cx, x)
        if cx.rank(v) == 0:
            return v
        return builder(v, _axes(cx, v, dim), bool(keepdim))
    return mapping


aten("aten.sum.dim_IntList", "aten.sum.default")(_reduce(rlx.sum_))
aten("aten.mean.dim", "aten.mean.default")(_reduce(rlx.mean))
aten("aten.amax.default", "aten.max.default")(_reduce(rlx.max_))
aten("aten.amin.default", "aten.min.default")(_reduce(rlx.min_))


@aten("aten.prod.default", "aten.prod.dim_int")
def prod(cx, x, *args):
    (v,) = float_operands(cx, x)
    if cx.op == "aten.prod.default" or cx.rank(v) == 0:
        return rlx.prod(v) if cx.rank(v) else v
    dim, keepdim = args[0], args[1]
    return rlx.prod(v, [norm_axis(dim, cx.rank(v))], bool(keepdim))


@aten("aten.max.dim", "aten.min.dim")
def max_dim(cx, x, dim, keepdim=False):
    """The values and the indices (``_first_extreme``; ties: the first, as
    torch's CPU kernel; the gradient splits among ties, see gradients.md)."""
    (v,) = float_operands(cx, x, dtype=cx.out[0].dtype)
    is_max = cx.op == "aten.max.dim"
    builder = rlx.max_ if is_max else rlx.min_
    if cx.rank(v) == 0:
        return [v, cx.const(cx.torch.zeros((), dtype=cx.torch.int64))]
    axis = norm_axis(dim, cx.rank(v))
    values = builder(v, [axis], bool(keepdim))
    return [values, _first_extreme(cx, v, axis, bool(keepdim), is_max, cx.out[1].shape)]


def _variance(cx, v, dim, correction, keepdim):
    axes = _axes(cx, v, dim)
    var = rlx.variance(v, axes, bool(keepdim))
    shape = cx.shape(v)
    n = 1
    for a in (axes if axes is not None else range(len(shape))):
        n *= shape[a]
    c = 1 if correction is None else correction
    if c:
        var = rlx.multiply(var, cx.scalar(n / max(n - c, 0) if n > c else float("inf"),
                                          cx.dtype(v)))
    return var


@aten("aten.var.correction", "aten.std.correction", "aten.var_mean.correction")
def var(cx, x, dim=None, correction=None, keepdim=False):
    out_dtype = cx.out[0].dtype if isinstance(cx.out, (list, tuple)) else cx.out_dtype
    (v,) = float_operands(cx, x, dtype=out_dtype)
    result = _variance(cx, v, dim, correction, keepdim)
    if cx.op == "aten.std.correction":
        return rlx.sqrt(result)
    if cx.op == "aten.var_mean.correction":
        return [result, rlx.mean(v, _axes(cx, v, dim), bool(keepdim))]
    return result


@aten("aten.var.dim", "aten.std.dim")
def var_dim(cx, x, dim=None, unbiased=True, keepdim=False):
    (v,) = float_operands(cx, x)
    result = _variance(cx, v, dim, 1 if unbiased else 0, keepdim)
    return rlx.sqrt(result) if cx.op == "aten.std.dim" else result


@aten("aten.logsumexp.default")
def logsumexp(cx, x, dim, keepdim=False):
    # max + log(sum(exp(x - max))): the max cancels in value and gradient.
    (v,) = float_operands(cx, x)
    axes = _axes(cx, v, dim)
    m = rlx.max_(v, axes, True)
    s = rlx.log(rlx.sum_(rlx.exp(rlx.subtract(v, m)), axes, True))
    out = rlx.add(m, s)
    if not keepdim:
        out = rlx.squeeze(out, axes if axes is not None else list(range(cx.rank(v))))
    return out


@aten("aten.linalg_vector_norm.default")
def vector_norm(cx, x, ord=2, dim=None, keepdim=False, dtype=None):
    (v,) = float_operands(cx, x)
    if ord != 2:
        raise cx.error(f"vector norms other than ord=2 (got {ord}) have no rlx mapping")
    s = rlx.sum_(rlx.square(v), _axes(cx, v, dim), bool(keepdim))
    # sqrt's derivative is infinite at 0, so the norm of a zero vector had a
    # NaN gradient; torch's is 0 there: the square root of a sum of 0 is
    # taken of 1 and replaced by 0, so no cotangent reaches it
    zero = cx.scalar(0.0, cx.dtype(s))
    is_zero = rlx.equal(s, zero)
    return rlx.where(is_zero, zero, rlx.sqrt(rlx.where(is_zero, cx.scalar(1.0, cx.dtype(s)), s)))


@aten("aten.softmax.int", "aten._softmax.default", "aten.log_softmax.int",
      "aten._log_softmax.default")
def softmax(cx, x, dim, *_):
    (v,) = float_operands(cx, x)
    axis = [norm_axis(dim, max(cx.rank(v), 1))]
    if cx.rank(v) == 0:
        raise cx.error("softmax of a 0-d tensor has no rlx mapping")
    if "log_softmax" in cx.op:
        return rlx.log_softmax(v, axis)
    return rlx.softmax(v, axis)


@aten("aten.cumsum.default")
def cumsum(cx, x, dim, dtype=None):
    if str(cx.out_dtype) not in FLOATING:   # mask.cumsum(-1) - 1: position ids
        return integer_via_f64(cx, lambda v: rlx.cumsum(v, [norm_axis(dim, cx.rank(v))]), x)
    (v,) = float_operands(cx, x)
    return rlx.cumsum(v, [norm_axis(dim, cx.rank(v))])


def _first_extreme(cx, v, axis, keepdim, is_max, out_shape):
    """The first position of the maximum (minimum) of ``v`` along ``axis``:
    ``min(where(v == max, i, n))``, the positions in f64 (exact below
    2**53), cast to i64.  An integer result: no gradient."""
    t = cx.torch
    f64 = cx.ir_type(t.float64)
    v = grad.no_grad(v) if str(cx.dtype(v)) in FLOATING else rlx.astype(v, f64)
    n = cx.shape(v)[axis]
    best = (rlx.max_ if is_max else rlx.min_)(v, [axis], True)
    shape = [1] * cx.rank(v)
    shape[axis] = n
    iota = cx.const(t.arange(n, dtype=t.float64).reshape(shape))
    pos = rlx.where(rlx.equal(v, best), iota, cx.scalar(float(n), t.float64))
    first = rlx.min_(pos, [axis], keepdim)
    return reshape_to(rlx.astype(first, cx.ir_type(t.int64)), [int(d) for d in out_shape])


@aten("aten.argmax.default", "aten.argmin.default")
def argmax(cx, x, dim=None, keepdim=False):
    """torch.argmax/argmin: ``_first_extreme`` along ``dim``, or of the
    flattened tensor."""
    v = cx.value(x)
    if dim is None:
        v = reshape_to(v, [max(1, math.prod(cx.shape(v)))])
        dim = 0
    if cx.rank(v) == 0:
        return cx.const(cx.torch.zeros(cx.out_shape, dtype=cx.torch.int64))
    return _first_extreme(cx, v, norm_axis(dim, cx.rank(v)), bool(keepdim),
                          cx.op == "aten.argmax.default", cx.out_shape)


@aten("aten.cosine_similarity.default")
def cosine_similarity(cx, x1, x2, dim=1, eps=1e-8):
    """torch's formula: ``sum(x1 / n1 * x2 / n2)`` with the norms clamped
    to ``eps`` in place under no_grad (the clamp changes the values, not
    the gradient's path: ``n + no_grad(max(n, eps) - n)``)."""
    a, b = float_operands(cx, x1, x2)
    shape = [int(d) for d in cx.torch.broadcast_shapes(tuple(cx.shape(a)), tuple(cx.shape(b)))]
    a = a if cx.shape(a) == shape else rlx.broadcast_to(a, shape)
    b = b if cx.shape(b) == shape else rlx.broadcast_to(b, shape)
    axis = [norm_axis(dim, len(shape))]
    floor = cx.scalar(float(eps), cx.dtype(a))
    scaled = []
    for v in (a, b):
        n = vector_norm(cx, v, 2, axis, True)
        n = rlx.add(n, grad.no_grad(rlx.subtract(rlx.maximum(n, floor), n)))
        scaled.append(rlx.divide(v, n))
    return rlx.sum_(rlx.multiply(*scaled), axis, False)

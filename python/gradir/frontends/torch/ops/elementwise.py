"""Elementwise aten ops: activations, arithmetic with tensors and scalars,
comparisons, where/masked_fill, casts, the identities (clone, contiguous,
dropout in eval mode) and detach (``grad.no_grad``)."""

from __future__ import annotations

import math

from gradir.dialects import grad, rlx

from .registry import aten
from ._helpers import FLOATING, float_operands, integer_via_f64

__all__: list[str] = []


# --- identities ---------------------------------------------------------------

@aten("aten.clone.default", "aten.contiguous.default", "aten.alias.default",
      "aten.lift_fresh_copy.default", "aten.dropout.default",
      "aten.feature_dropout.default", "aten.alpha_dropout.default")
def identity(cx, x, p=0.0, train=False, *_):
    if cx.op.endswith("dropout.default") and train and p > 0:
        raise cx.error(f"dropout with p={p} in training mode is random: import the model "
                       "in eval mode (model.eval()) or with p=0")
    return cx.value(x)


@aten("aten.detach.default")
def detach(cx, x):
    """``x.detach()``, and every result of a ``torch.no_grad()`` region (the
    importer detaches them, importer.py): the value, with no gradient."""
    v = cx.value(x)
    return grad.no_grad(v) if str(cx.dtype(v)) in FLOATING else v


@aten("aten.native_dropout.default")
def native_dropout(cx, x, p, train):
    if train and p > 0:
        raise cx.error(f"dropout with p={p} in training mode is random: import the model "
                       "in eval mode (model.eval()) or with p=0")
    return [cx.value(x), cx.torch.ones(cx.shape(x), dtype=cx.torch.bool)]


# --- unary ----------------------------------------------------------------------

def _unary(builder):
    def mapping(cx, x, *_):
        (v,) = float_operands(cx, x)
        return builder(v)
    return mapping


for _name, _builder in (("neg", rlx.negative), ("exp", rlx.exp), ("log", rlx.log),
                        ("sqrt", rlx.sqrt), ("rsqrt", rlx.rsqrt), ("sin", rlx.sin),
                        ("cos", rlx.cos), ("tanh", rlx.tanh), ("sigmoid", rlx.sigmoid),
                        ("abs", rlx.abs_), ("relu", rlx.relu), ("silu", rlx.silu),
                        ("erf", rlx.erf)):
    aten(f"aten.{_name}.default")(_unary(_builder))


def _one(cx, like, v=1.0):
    return cx.scalar(v, cx.dtype(like))


# log1p / expm1 without an rlx op of their own: log(1 + x) and exp(x) - 1
# lose the digits of a small x (log1p(1e-20) was 0, log1p(1e-12) off by 9e-5:
# a review against torch), so below a threshold a Taylor polynomial gives
# them; (threshold, terms): the first term left out is below the type's
# epsilon there, and above it the direct form's relative error is about
# epsilon / threshold (f64: ~1e-14, f32: ~1e-6).
_SMALL = {"f64": (1e-2, 9), "other": (1e-1, 8)}


def _small(cx, v):
    return _SMALL["f64" if str(cx.dtype(v)) == "torch.float64" else "other"]


def _taylor(cx, v, coeffs):
    """sum_k coeffs[k-1] v^k (Horner)."""
    acc = cx.scalar(coeffs[-1], cx.dtype(v))
    for c in reversed(coeffs[:-1]):
        acc = rlx.add(cx.scalar(c, cx.dtype(v)), rlx.multiply(v, acc))
    return rlx.multiply(v, acc)


def _near_zero(cx, v, series, direct):
    limit, _ = _small(cx, v)
    return rlx.where(rlx.less(rlx.abs_(v), cx.scalar(limit, cx.dtype(v))), series, direct)


@aten("aten.log1p.default")
def log1p(cx, x):
    (v,) = float_operands(cx, x)
    _, n = _small(cx, v)
    series = _taylor(cx, v, [(-1.0) ** (k + 1) / k for k in range(1, n + 1)])
    return _near_zero(cx, v, series, rlx.log(rlx.add(v, _one(cx, v))))


@aten("aten.expm1.default")
def expm1(cx, x):
    (v,) = float_operands(cx, x)
    _, n = _small(cx, v)
    series = _taylor(cx, v, [1.0 / math.factorial(k) for k in range(1, n + 1)])
    return _near_zero(cx, v, series, rlx.subtract(rlx.exp(v), _one(cx, v)))


@aten("aten.reciprocal.default")
def reciprocal(cx, x):
    (v,) = float_operands(cx, x)
    return rlx.divide(_one(cx, v), v)


@aten("aten.gelu.default")
def gelu(cx, x, approximate="none"):
    (v,) = float_operands(cx, x)
    if approximate == "none":
        return rlx.gelu(v)
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    c = lambda k: _one(cx, v, k)  # noqa: E731
    inner = rlx.multiply(c(math.sqrt(2.0 / math.pi)),
                         rlx.add(v, rlx.multiply(c(0.044715), rlx.multiply(v, rlx.square(v)))))
    return rlx.multiply(rlx.multiply(c(0.5), v), rlx.add(c(1.0), rlx.tanh(inner)))


@aten("aten.softplus.default")
def softplus(cx, x, beta=1.0, threshold=20.0):
    # torch: x where beta*x > threshold, else log(1 + exp(beta*x)) / beta.
    # exp is taken of min(beta*x, threshold), so neither branch overflows.
    (v,) = float_operands(cx, x)
    c = lambda k: _one(cx, v, k)  # noqa: E731
    z = v if beta == 1 else rlx.multiply(v, c(beta))
    soft = rlx.log(rlx.add(c(1.0), rlx.exp(rlx.minimum(z, c(threshold)))))
    if beta != 1:
        soft = rlx.divide(soft, c(beta))
    return rlx.where(rlx.greater(z, c(threshold)), v, soft)


def _clip(cx, v, lo, hi):
    if lo is not None:
        v = rlx.maximum(v, cx.value(lo, cx.dtype(v)))
    if hi is not None:
        v = rlx.minimum(v, cx.value(hi, cx.dtype(v)))
    return v


def _saturate(cx, v, lo, hi, at_lo, at_hi, body):
    """``body`` where ``lo < v < hi``, ``at_lo`` where ``v <= lo``, ``at_hi``
    where ``v >= hi`` (floats or Values): ``where`` masks rather than
    ``maximum``/``minimum``, so that at the corners themselves the gradient
    is the outer one, as in torch's hardtanh/hardsigmoid/hardswish backward
    (a ``maximum`` tie gave the inner slope).  Exact corner values are
    common: a ReLU6 after an eval-mode BatchNorm of a depthwise conv over an
    all-zero patch (torchvision's MobileNetV2) sees exact zeros."""
    dtype = cx.dtype(v)
    const = lambda c: cx.scalar(c, dtype) if isinstance(c, float) else c  # noqa: E731
    return rlx.where(rlx.less_equal(v, cx.scalar(lo, dtype)), const(at_lo),
                     rlx.where(rlx.greater_equal(v, cx.scalar(hi, dtype)), const(at_hi), body))


@aten("aten.hardswish.default")
def hardswish(cx, x):
    # x * (x + 3) / 6 inside (-3, 3), 0 below, x above (torch: x * min(max(x + 3, 0), 6) / 6)
    (v,) = float_operands(cx, x)
    body = rlx.divide(rlx.multiply(v, rlx.add(v, _one(cx, v, 3.0))), _one(cx, v, 6.0))
    return _saturate(cx, v, -3.0, 3.0, 0.0, v, body)


@aten("aten.hardsigmoid.default")
def hardsigmoid(cx, x):
    # torch's f64 backward scales by float32(1/6); gradir's by 1/6
    (v,) = float_operands(cx, x)
    body = rlx.divide(rlx.add(v, _one(cx, v, 3.0)), _one(cx, v, 6.0))
    return _saturate(cx, v, -3.0, 3.0, 0.0, 1.0, body)


@aten("aten.hardtanh.default")
def hardtanh(cx, x, min_val=-1.0, max_val=1.0):
    (v,) = float_operands(cx, x)
    lo, hi = float(min_val), float(max_val)
    return _saturate(cx, v, lo, hi, lo, hi, v)


@aten("aten.relu6.default")
def relu6(cx, x):
    return hardtanh(cx, x, 0.0, 6.0)


@aten("aten.log_sigmoid.default")
def log_sigmoid(cx, x):
    # min(x, 0) - log1p(exp(-|x|)), as torch computes it (no overflow)
    (v,) = float_operands(cx, x)
    tail = log1p(cx, rlx.exp(rlx.negative(rlx.abs_(v))))
    return rlx.subtract(rlx.minimum(v, _one(cx, v, 0.0)), tail)


@aten("aten.prelu.default", "aten._prelu_kernel.default")
def prelu(cx, x, weight):
    # x where x > 0, else weight * x (one weight, or one per channel: axis 1)
    x, w = float_operands(cx, x, weight)
    if cx.rank(x) >= 2 and cx.shape(w) not in ([], [1]) and cx.rank(w) == 1:
        shape = [1] * cx.rank(x)
        shape[1] = cx.shape(w)[0]
        w = rlx.reshape(w, shape)
    return rlx.where(rlx.greater(x, _one(cx, x, 0.0)), x, rlx.multiply(w, x))


@aten("aten.log2.default", "aten.log10.default")
def log_base(cx, x):
    (v,) = float_operands(cx, x)
    base = 2.0 if cx.op == "aten.log2.default" else 10.0
    return rlx.divide(rlx.log(v), _one(cx, v, math.log(base)))


@aten("aten.exp2.default")
def exp2(cx, x):
    (v,) = float_operands(cx, x)
    return rlx.exp(rlx.multiply(v, _one(cx, v, math.log(2.0))))


@aten("aten.outer.default", "aten.ger.default")
def outer(cx, a, b):
    a, b = float_operands(cx, a, b)
    return rlx.multiply(rlx.expand_dims(a, [1]), rlx.expand_dims(b, [0]))


@aten("aten.leaky_relu.default")
def leaky_relu(cx, x, negative_slope=0.01):
    (v,) = float_operands(cx, x)
    zero = _one(cx, v, 0.0)
    return rlx.where(rlx.greater(v, zero), v, rlx.multiply(v, _one(cx, v, negative_slope)))


@aten("aten.elu.default")
def elu(cx, x, alpha=1.0, scale=1.0, input_scale=1.0):
    (v,) = float_operands(cx, x)
    c = lambda k: _one(cx, v, k)  # noqa: E731
    neg = rlx.multiply(c(alpha), rlx.subtract(rlx.exp(rlx.multiply(rlx.minimum(v, c(0.0)),
                                                                   c(input_scale))), c(1.0)))
    out = rlx.where(rlx.greater(v, c(0.0)), v, neg)
    return out if scale == 1 else rlx.multiply(out, c(scale))


@aten("aten.clamp.default", "aten.clamp.Tensor")
def clamp(cx, x, lo=None, hi=None):
    (v,) = float_operands(cx, x)
    return _clip(cx, v, lo, hi)


@aten("aten.clamp_min.default", "aten.clamp_min.Tensor")
def clamp_min(cx, x, lo):
    (v,) = float_operands(cx, x)
    return _clip(cx, v, lo, None)


@aten("aten.clamp_max.default", "aten.clamp_max.Tensor")
def clamp_max(cx, x, hi):
    (v,) = float_operands(cx, x)
    return _clip(cx, v, None, hi)


# --- binary arithmetic --------------------------------------------------------

def _scaled(cx, b, alpha):
    if alpha is None or alpha == 1:
        return b
    return rlx.multiply(b, cx.value(alpha, cx.dtype(b)))


def _integer(cx):
    return str(cx.out_dtype) not in FLOATING


@aten("aten.add.Tensor", "aten.add.Scalar")
def add(cx, a, b, alpha=1):
    if _integer(cx):   # lengths + 1, positions + offset: through f64
        return integer_via_f64(cx, lambda a, b: rlx.add(a, _scaled(cx, b, alpha)), a, b)
    a, b = float_operands(cx, a, b)
    return rlx.add(a, _scaled(cx, b, alpha))


@aten("aten.sub.Tensor", "aten.sub.Scalar")
def sub(cx, a, b, alpha=1):
    if _integer(cx):
        return integer_via_f64(cx, lambda a, b: rlx.subtract(a, _scaled(cx, b, alpha)), a, b)
    a, b = float_operands(cx, a, b)
    return rlx.subtract(a, _scaled(cx, b, alpha))


@aten("aten.rsub.Tensor", "aten.rsub.Scalar")
def rsub(cx, a, b, alpha=1):
    if _integer(cx):
        return integer_via_f64(cx, lambda a, b: rlx.subtract(b, _scaled(cx, a, alpha)), a, b)
    a, b = float_operands(cx, a, b)
    return rlx.subtract(b, _scaled(cx, a, alpha))


@aten("aten.mul.Tensor", "aten.mul.Scalar")
def mul(cx, a, b):
    if _integer(cx):
        return integer_via_f64(cx, rlx.multiply, a, b)
    a, b = float_operands(cx, a, b)
    return rlx.multiply(a, b)


@aten("aten.div.Tensor", "aten.div.Scalar", "aten.div.Tensor_mode", "aten.div.Scalar_mode")
def div(cx, a, b, rounding_mode=None):
    if rounding_mode is not None:
        raise cx.error(f"division with rounding_mode={rounding_mode!r} has no rlx mapping")
    a, b = float_operands(cx, a, b)
    return rlx.divide(a, b)


@aten("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar")
def pow_(cx, a, b):
    if not cx.is_value(b) and not hasattr(b, "shape"):
        (v,) = float_operands(cx, a)
        if b == 2:
            return rlx.square(v)
        if b == 1:
            return v
        if b == 0.5:
            return rlx.sqrt(v)
        if b == -0.5:
            return rlx.rsqrt(v)
        return rlx.power(v, cx.scalar(b, cx.out_dtype))
    a, b = float_operands(cx, a, b)
    return rlx.power(a, b)


@aten("aten.maximum.default")
def maximum(cx, a, b):
    a, b = float_operands(cx, a, b)
    return rlx.maximum(a, b)


@aten("aten.minimum.default")
def minimum(cx, a, b):
    a, b = float_operands(cx, a, b)
    return rlx.minimum(a, b)


@aten("aten.square.default")
def square(cx, x):
    (v,) = float_operands(cx, x)
    return rlx.square(v)


# --- comparisons, logic, select -------------------------------------------------

def _compare(builder):
    def mapping(cx, a, b):
        dtype = cx.result_type(a, b)
        return builder(cx.value(a, dtype), cx.value(b, dtype))
    return mapping


for _name, _builder in (("eq", rlx.equal), ("ne", rlx.not_equal), ("lt", rlx.less),
                        ("le", rlx.less_equal), ("gt", rlx.greater),
                        ("ge", rlx.greater_equal)):
    aten(f"aten.{_name}.Tensor", f"aten.{_name}.Scalar")(_compare(_builder))


def _bool(cx, x):
    if str(cx.dtype(x)) != "torch.bool":
        raise cx.error(f"logical ops on {cx.dtype(x)} tensors: only bool is supported")
    return cx.value(x)


@aten("aten.logical_not.default", "aten.bitwise_not.default")
def logical_not(cx, x):
    return rlx.equal(_bool(cx, x), cx.scalar(False, cx.torch.bool))


@aten("aten.logical_and.default", "aten.bitwise_and.Tensor", "aten.__and__.Tensor")
def logical_and(cx, a, b):
    return rlx.where(_bool(cx, a), _bool(cx, b), cx.scalar(False, cx.torch.bool))


@aten("aten.logical_or.default", "aten.bitwise_or.Tensor", "aten.__or__.Tensor")
def logical_or(cx, a, b):
    return rlx.where(_bool(cx, a), cx.scalar(True, cx.torch.bool), _bool(cx, b))


@aten("aten.logical_xor.default", "aten.bitwise_xor.Tensor", "aten.__xor__.Tensor")
def logical_xor(cx, a, b):
    return rlx.not_equal(_bool(cx, a), _bool(cx, b))


@aten("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def where(cx, cond, a, b):
    dtype = cx.out_dtype
    return rlx.where(_bool(cx, cond), cx.value(a, dtype), cx.value(b, dtype))


@aten("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def masked_fill(cx, x, mask, value):
    dtype = cx.out_dtype
    return rlx.where(_bool(cx, mask), cx.value(value, dtype), cx.value(x, dtype))


# --- casts ---------------------------------------------------------------------

@aten("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout", "aten.type_as.default")
def to_dtype(cx, x, *_):
    dtype = cx.out_dtype
    cx.ir_type(dtype)   # refuses element types rlx lacks
    # float -> int truncates toward zero and nonzero -> true, as in torch.
    return cx.value(x, dtype)


@aten("aten.copy.default")
def copy(cx, dst, src, non_blocking=False):
    v = cx.value(src, cx.out_dtype)
    shape = cx.out_shape
    return v if cx.shape(v) == shape else rlx.broadcast_to(v, shape)

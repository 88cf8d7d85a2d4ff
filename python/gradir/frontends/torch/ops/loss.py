"""Losses: cross_entropy (class indices or probabilities, class weights,
ignore_index, label smoothing), nll_loss (mean/sum/none, class weights),
mse/l1, binary cross-entropy with logits and KL divergence."""

from __future__ import annotations

from gradir.dialects import rlx

from .registry import aten
from ._helpers import Unavailable, float_operands

__all__: list[str] = []

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(cx, r) -> str:
    if r not in _REDUCTIONS:
        raise cx.error(f"unknown reduction {r!r}")
    return _REDUCTIONS[r]


def _reduce(v, how):
    if how == "none":
        return v
    return rlx.mean(v) if how == "mean" else rlx.sum_(v)


def _nll(cx, logp, target, weight, how, ignore_index):
    dtype = cx.dtype(logp)
    w = None if weight is None else cx.value(weight, dtype)
    return rlx.nll_loss(logp, cx.value(target), w, how,
                        None if ignore_index == -100 else int(ignore_index))


@aten("aten.cross_entropy_loss.default")
def cross_entropy(cx, x, target, weight=None, reduction=1, ignore_index=-100,
                  label_smoothing=0.0):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    dtype = cx.dtype(v)
    how = _reduction(cx, reduction)
    class_axis = 0 if cx.rank(v) == 1 else 1
    logp = rlx.log_softmax(v, [class_axis])
    if str(cx.dtype(target)).startswith("torch.float"):
        # class probabilities: -sum_c w_c y_c log p_c per sample
        y = cx.value(target, dtype)
        if label_smoothing:
            c = cx.shape(v)[class_axis]
            y = rlx.add(rlx.multiply(y, cx.scalar(1.0 - label_smoothing, dtype)),
                        cx.scalar(label_smoothing / c, dtype))
        prod = rlx.multiply(logp, y)
        if weight is not None:
            wshape = [1] * cx.rank(v)
            wshape[class_axis] = cx.shape(v)[class_axis]
            prod = rlx.multiply(prod, rlx.reshape(cx.value(weight, dtype), wshape))
        return _reduce(rlx.negative(rlx.sum_(prod, [class_axis])), how)
    nll = _nll(cx, logp, target, weight, how, ignore_index)
    if not label_smoothing:
        return nll
    if weight is not None:
        raise cx.error("cross_entropy with both class weights and label_smoothing has no "
                       "rlx mapping")
    # (1 - eps) * nll + eps * mean_c(-log p_c), over the targets not ignored
    smooth = rlx.negative(rlx.mean(logp, [class_axis]))
    keep = rlx.not_equal(cx.value(target), cx.scalar(ignore_index, cx.dtype(target)))
    zero = cx.scalar(0.0, dtype)
    smooth = rlx.where(keep, smooth, zero)
    if how == "mean":
        count = rlx.sum_(rlx.astype(keep, cx.ir_type(dtype)))
        smooth = rlx.divide(rlx.sum_(smooth), count)
    elif how == "sum":
        smooth = rlx.sum_(smooth)
    return rlx.add(rlx.multiply(nll, cx.scalar(1.0 - label_smoothing, dtype)),
                   rlx.multiply(smooth, cx.scalar(label_smoothing, dtype)))


@aten("aten.nll_loss_nd.default", "aten.nll_loss.default", "aten.nll_loss2d.default")
def nll_loss(cx, x, target, weight=None, reduction=1, ignore_index=-100):
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    return _nll(cx, v, target, weight, _reduction(cx, reduction), ignore_index)


@aten("aten.nll_loss_forward.default", "aten.nll_loss2d_forward.default")
def nll_loss_forward(cx, x, target, weight, reduction, ignore_index):
    loss = nll_loss(cx, x, target, weight, reduction, ignore_index)
    return [loss, Unavailable(cx.op, "total_weight is not imported")]


@aten("aten.mse_loss.default")
def mse_loss(cx, a, b, reduction=1):
    a, b = float_operands(cx, a, b)
    return _reduce(rlx.square(rlx.subtract(a, b)), _reduction(cx, reduction))


@aten("aten.l1_loss.default")
def l1_loss(cx, a, b, reduction=1):
    a, b = float_operands(cx, a, b)
    return _reduce(rlx.abs_(rlx.subtract(a, b)), _reduction(cx, reduction))


@aten("aten.binary_cross_entropy_with_logits.default")
def bce_with_logits(cx, x, y, weight=None, pos_weight=None, reduction=1):
    # (1 - y) x + (1 + (pw - 1) y) (log(1 + exp(-|x|)) + max(-x, 0))
    x, y = float_operands(cx, x, y)
    dtype = cx.dtype(x)
    one = cx.scalar(1.0, dtype)
    softplus_neg = rlx.add(rlx.log(rlx.add(one, rlx.exp(rlx.negative(rlx.abs_(x))))),
                           rlx.relu(rlx.negative(x)))
    coef = one
    if pos_weight is not None:
        pw = cx.value(pos_weight, dtype)
        coef = rlx.add(one, rlx.multiply(rlx.subtract(pw, one), y))
    loss = rlx.add(rlx.multiply(rlx.subtract(one, y), x), rlx.multiply(coef, softplus_neg))
    if weight is not None:
        loss = rlx.multiply(loss, cx.value(weight, dtype))
    return _reduce(loss, _reduction(cx, reduction))


@aten("aten.kl_div.default")
def kl_div(cx, x, target, reduction=1, log_target=False):
    """``target * (log(target) - x)`` (0 where target is 0, torch's xlogy),
    or ``exp(target) * (target - x)`` with ``log_target``; batchmean is
    the sum divided in PyTorch after the op."""
    x, t = float_operands(cx, x, target)
    dtype = cx.dtype(x)
    if log_target:
        loss = rlx.multiply(rlx.exp(t), rlx.subtract(t, x))
    else:
        zero = rlx.equal(t, cx.scalar(0.0, dtype))
        safe = rlx.where(zero, cx.scalar(1.0, dtype), t)   # no log(0) in any branch
        loss = rlx.where(zero, cx.scalar(0.0, dtype),
                         rlx.multiply(t, rlx.subtract(rlx.log(safe), x)))
    return _reduce(loss, _reduction(cx, reduction))

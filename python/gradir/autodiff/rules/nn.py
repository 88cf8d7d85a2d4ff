"""VJP rules of the neural-network ops (Relax semantics, see DESIGN.md).

softmax log_softmax cross_entropy_with_logits nll_loss conv2d
conv2d_transpose max_pool2d avg_pool2d avg_pool2d_backward layer_norm
rms_norm.

Ops left without a rule (the pass reports "no gradient rule" if one lies on
the path to the target):
- ``rlx.max_pool2d_backward``: its adjoint w.r.t. ``output_grad`` is a gather
  of each window's arg-max, which no rlx op expresses; w.r.t. ``data`` it is
  zero almost everywhere.  So max-pool has no second derivative.
- ``rlx.collapse_sum_to`` is not an nn op (rules of the shape group).
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ...dialects import rlx
from ...dialects.infer import raw_attributes
from . import vjp
from ._helpers import attrs, const_scalar, elt_of, reduction_axes, shape_of


# ----------------------------------------------------------------------------
# softmax & losses

def _axis(op, rank):
    return reduction_axes(attrs(op).get("axis", [-1]), rank)


@vjp("rlx.softmax")
def softmax(op, grads):
    # dx = y * (g - sum(g * y, axis))
    (g,) = grads
    y = op.results[0]
    ax = _axis(op, len(shape_of(y)))
    s = rlx.sum(rlx.multiply(g, y), axis=ax, keepdims=True)
    return [rlx.multiply(y, rlx.subtract(g, s))]


@vjp("rlx.log_softmax")
def log_softmax(op, grads):
    # dx = g - exp(y) * sum(g, axis)
    (g,) = grads
    y = op.results[0]
    ax = _axis(op, len(shape_of(y)))
    s = rlx.sum(g, axis=ax, keepdims=True)
    return [rlx.subtract(g, rlx.multiply(rlx.exp(y), s))]


@vjp("rlx.cross_entropy_with_logits")
def cross_entropy_with_logits(op, grads):
    # loss = -sum(x * y) / batch (batch = 1 for 1-D inputs)
    (g,) = grads
    x, y = op.operands
    shape = shape_of(x)
    batch = shape[0] if len(shape) == 2 else 1
    scale = rlx.negative(g)
    if batch != 1:
        scale = rlx.divide(scale, const_scalar(batch, elt_of(x)))
    return [rlx.multiply(y, scale), rlx.multiply(x, scale)]


def _int_const(values: np.ndarray, elt: ir.Type) -> ir.Value:
    dtype = np.int32 if ir.IntegerType(elt).width == 32 else np.int64
    arr = np.ascontiguousarray(values.astype(dtype))
    t = ir.RankedTensorType.get(list(arr.shape), elt)
    return arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=elt)).result


@vjp("rlx.nll_loss")
def nll_loss(op, grads):
    """Relax nll_loss_backward, with rlx ops.

    With M[i, c, d...] = weights[c] * [c == t[i, d...]] * [t[i, d...] !=
    ignore_index] (the weighted one-hot mask of the targets):
    none: dpred = -g[:, None] * M;  sum: dpred = -g * M;
    mean: dpred = -g * M / sum(M).  Targets get no gradient; weights do
    (Relax marks them no_grad, but the gradient is cheap and exact):
    none/sum: dw[c] = -sum(g * O * pred) over the non-class axes, with O the
    unweighted mask; mean: dw[c] = -g / sum(M) * sum(O * (pred + loss)).
    With every target ignored (sum(M) = 0, M = 0) the mean is 0/0 (NaN, as
    in PyTorch) and the gradients are zero (as in PyTorch): sum(M) is then
    taken as 1 and the loss as 0.  That guard is emitted only where sum(M)
    can be 0: an ignore_index among the classes, or class weights."""
    (g,) = grads
    pred, targets = op.operands[0], op.operands[1]
    weights = op.operands[2] if len(op.operands) == 3 else None
    a = attrs(op)
    reduction = a.get("reduction", "mean")
    ignore_index = a.get("ignore_index", -100)
    ps = shape_of(pred)
    elt = elt_of(pred)
    c = ps[0] if len(ps) == 1 else ps[1]
    trailing = max(len(ps) - 2, 0)
    # Class ids [0, C) shaped (C, 1, ..., 1) so they broadcast along axis 1
    # of the predictions.  An ignore_index inside [0, C) is replaced by -1,
    # which no valid target equals (out-of-range targets are invalid), so
    # the mask is zero for ignored targets without a separate test.
    ids = np.arange(c)
    if 0 <= ignore_index < c:
        ids[ignore_index] = -1
    iota = _int_const(ids.reshape([c] + [1] * trailing), elt_of(targets))
    t = targets if len(ps) == 1 else rlx.expand_dims(targets, 1)
    onehot = rlx.astype(rlx.equal(t, iota), elt)               # O, pred's shape
    w_b = None
    if weights is not None:
        w_b = weights if trailing == 0 else rlx.reshape(weights, [c] + [1] * trailing)
    mask = onehot if w_b is None else rlx.multiply(onehot, w_b)  # M
    neg_g = rlx.negative(g)
    if reduction == "none" and len(ps) > 1:
        neg_g = rlx.expand_dims(neg_g, 1)
    if reduction == "mean":
        total = rlx.sum(mask)
        # sum(M) can only be 0 when a target may be ignored or weighted by 0;
        # otherwise every target counts and the guard would be dead ops in
        # every classifier's gradient.
        if weights is not None or 0 <= ignore_index < c:
            none_kept = rlx.equal(total, const_scalar(0.0, elt))
            total = rlx.where(none_kept, const_scalar(1.0, elt), total)
        neg_g = rlx.divide(neg_g, total)
    dpred = rlx.multiply(mask, neg_g)
    dweights = None
    if weights is not None:
        if reduction == "mean":
            loss = rlx.where(none_kept, const_scalar(0.0, elt), op.results[0])
            per = rlx.add(pred, loss)              # pred + loss
        else:
            per = pred
        contrib = rlx.multiply(rlx.multiply(onehot, per), neg_g)
        if len(ps) > 1:
            contrib = rlx.sum(contrib, axis=[0] + list(range(2, len(ps))))
        dweights = contrib
    out = [dpred, None]
    if weights is not None:
        out.append(dweights)
    return out


# ----------------------------------------------------------------------------
# convolution

def _conv_params(op):
    a = attrs(op)
    strides = list(a.get("strides", [1, 1]))
    dilation = list(a.get("dilation", [1, 1]))
    pad = list(a.get("padding", [0, 0, 0, 0]))
    if len(strides) == 1:
        strides *= 2
    if len(dilation) == 1:
        dilation *= 2
    if len(pad) == 1:
        pad *= 4
    elif len(pad) == 2:
        pad *= 2
    return strides, pad, dilation, int(a.get("groups", 1))


def _crop_hw(x: ir.Value, h: int, w: int) -> ir.Value:
    """``x[:, :, :h, :w]`` (``x`` itself when it already has that size)."""
    xs = shape_of(x)
    if xs[2] == h and xs[3] == w:
        return x
    return rlx.strided_slice(x, [2, 3], [0, 0], [h, w])


def _conv2d_weight_grad(data, out_grad, kernel_hw, strides, pad, dilation, groups):
    """d/dw of <out_grad, conv2d(data, w)> for an OIHW ``w`` with spatial
    size ``kernel_hw``: a conv2d of the data (batch as channels) with the
    output gradient as kernel, strides and dilation swapped.

    dw[o, c, ky, kx] = sum_{n,i,j} out_grad[n, o, i, j] *
                       data_pad[n, g(o)*Cg + c, i*s + ky*d, j*s + kx*d]."""
    n, cin, h, w = shape_of(data)
    _, cout, ho, wo = shape_of(out_grad)
    cg, og = cin // groups, cout // groups
    if groups == 1:
        x_t = rlx.permute_dims(data, [1, 0, 2, 3])                    # (C, N, H, W)
        g_t = rlx.permute_dims(out_grad, [1, 0, 2, 3])                # (O, N, Ho, Wo)
    else:
        x_t = rlx.reshape(data, [n, groups, cg, h, w])
        x_t = rlx.permute_dims(x_t, [2, 1, 0, 3, 4])                  # (Cg, G, N, H, W)
        x_t = rlx.reshape(x_t, [cg, groups * n, h, w])
        g_t = rlx.reshape(out_grad, [n, groups, og, ho, wo])
        g_t = rlx.permute_dims(g_t, [1, 2, 0, 3, 4])                  # (G, Og, N, Ho, Wo)
        g_t = rlx.reshape(g_t, [cout, n, ho, wo])
    dw = rlx.conv2d(x_t, g_t, strides=dilation, padding=pad, dilation=strides,
                    groups=groups)                                    # (Cg, O, KH', KW')
    dw = rlx.permute_dims(dw, [1, 0, 2, 3])                           # (O, Cg, KH', KW')
    # KH' >= KH: rows of the padded data past the last window are cropped.
    return _crop_hw(dw, *kernel_hw)


@vjp("rlx.conv2d")
def conv2d(op, grads):
    (g,) = grads
    x, w = op.operands
    strides, pad, dilation, groups = _conv_params(op)
    _, _, h, wd = shape_of(x)
    _, _, kh, kw = shape_of(w)
    _, _, ho, wo = shape_of(g)
    # output_padding makes the transposed convolution give back (H, W): the
    # rows/cols of the padded input no window reached.
    out_pad = [h + pad[0] + pad[2] - ((ho - 1) * strides[0] + dilation[0] * (kh - 1) + 1),
               wd + pad[1] + pad[3] - ((wo - 1) * strides[1] + dilation[1] * (kw - 1) + 1)]
    dx = rlx.conv2d_transpose(g, w, strides=strides, padding=pad, dilation=dilation,
                              groups=groups,
                              output_padding=out_pad if any(out_pad) else None)
    dw = _conv2d_weight_grad(x, g, (kh, kw), strides, pad, dilation, groups)
    return [dx, dw]


@vjp("rlx.conv2d_transpose")
def conv2d_transpose(op, grads):
    # conv2d_transpose(x, w) is the data-adjoint of conv2d(., w) (w read as
    # OIHW), so <g, T(x, w)> = <x, conv2d(g, w)>: dx = conv2d(g, w) and dw is
    # conv2d's weight gradient with data g and output gradient x.
    (g,) = grads
    x, w = op.operands
    strides, pad, dilation, groups = _conv_params(op)
    _, _, h, wd = shape_of(x)
    _, _, kh, kw = shape_of(w)
    dx = rlx.conv2d(g, w, strides=strides, padding=pad, dilation=dilation, groups=groups)
    dx = _crop_hw(dx, h, wd)   # larger only when output_padding >= stride
    dw = _conv2d_weight_grad(g, x, (kh, kw), strides, pad, dilation, groups)
    return [dx, dw]


# ----------------------------------------------------------------------------
# pooling

@vjp("rlx.max_pool2d")
def max_pool2d(op, grads):
    (g,) = grads
    return [rlx.build_op("rlx.max_pool2d_backward", [g, op.operands[0]],
                         raw_attributes(op)).result]


@vjp("rlx.avg_pool2d")
def avg_pool2d(op, grads):
    (g,) = grads
    return [rlx.build_op("rlx.avg_pool2d_backward", [g, op.operands[0]],
                         raw_attributes(op)).result]


@vjp("rlx.avg_pool2d_backward")
def avg_pool2d_backward(op, grads):
    # Linear in output_grad and independent of data's values: the adjoint
    # spreads-then-divides, i.e. avg_pool2d with the same attributes.
    (g,) = grads
    return [rlx.build_op("rlx.avg_pool2d", [g], raw_attributes(op)).result, None]


# ----------------------------------------------------------------------------
# normalization

def _param_axes(op, x):
    """(axes in the attribute's order, sorted axes, broadcast shape)."""
    rank = len(shape_of(x))
    given = [a + rank if a < 0 else a for a in attrs(op).get("axes", [-1])]
    srt = sorted(given)
    bshape = [d if i in srt else 1 for i, d in enumerate(shape_of(x))]
    return given, srt, bshape


def _param_to_x(p, given, srt, bshape):
    """A gamma-like parameter (dims in ``given`` order) broadcastable to x."""
    if given != srt:
        p = rlx.permute_dims(p, [int(i) for i in np.argsort(given)])
    return rlx.reshape(p, bshape)


def _reduce_to_param(v, given, srt):
    """Sums ``v`` (x's shape) over the non-normalized axes, in ``given`` order."""
    rank = len(shape_of(v))
    rest = [i for i in range(rank) if i not in srt]
    if rest:
        v = rlx.sum(v, axis=rest)
    if given != srt:
        order = np.argsort(given)
        v = rlx.permute_dims(v, [int(i) for i in np.argsort(order)])
    return v


@vjp("rlx.layer_norm")
def layer_norm(op, grads):
    """y = xhat * gamma + beta, xhat = (x - mean) * rstd, rstd = 1/sqrt(var + eps):
    dbeta = sum(g), dgamma = sum(g * xhat) over the other axes;
    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = g * gamma."""
    (g,) = grads
    x, gamma, _ = op.operands
    a = attrs(op)
    eps = a.get("epsilon", 1e-5)
    given, srt, bshape = _param_axes(op, x)
    elt = elt_of(x)
    centered = rlx.subtract(x, rlx.mean(x, axis=srt, keepdims=True))
    var = rlx.mean(rlx.square(centered), axis=srt, keepdims=True)
    rstd = rlx.rsqrt(rlx.add(var, const_scalar(eps, elt)))
    xhat = rlx.multiply(centered, rstd)
    scale = a.get("scale", True)
    dxhat = rlx.multiply(g, _param_to_x(gamma, given, srt, bshape)) if scale else g
    m1 = rlx.mean(dxhat, axis=srt, keepdims=True)
    m2 = rlx.mean(rlx.multiply(dxhat, xhat), axis=srt, keepdims=True)
    dx = rlx.multiply(rstd, rlx.subtract(rlx.subtract(dxhat, m1), rlx.multiply(xhat, m2)))
    dgamma = _reduce_to_param(rlx.multiply(g, xhat), given, srt) if scale else None
    dbeta = _reduce_to_param(g, given, srt) if a.get("center", True) else None
    return [dx, dgamma, dbeta]


@vjp("rlx.rms_norm")
def rms_norm(op, grads):
    """y = x * r * w, r = 1/sqrt(mean(x^2) + eps):
    dw = sum(g * x * r) over the other axes; dx = r * u - x * r^3 * mean(u * x),
    u = g * w."""
    (g,) = grads
    x, weight = op.operands
    eps = attrs(op).get("epsilon", 1e-5)
    given, srt, bshape = _param_axes(op, x)
    elt = elt_of(x)
    r = rlx.rsqrt(rlx.add(rlx.mean(rlx.square(x), axis=srt, keepdims=True),
                          const_scalar(eps, elt)))
    xr = rlx.multiply(x, r)
    u = rlx.multiply(g, _param_to_x(weight, given, srt, bshape))
    m = rlx.mean(rlx.multiply(u, xr), axis=srt, keepdims=True)      # r * mean(u * x)
    dx = rlx.multiply(r, rlx.subtract(u, rlx.multiply(xr, m)))
    dw = _reduce_to_param(rlx.multiply(g, xr), given, srt)
    return [dx, dw]

"""VJP and JVP rules of the neural-network ops (Relax semantics, see DESIGN.md).

softmax log_softmax cross_entropy_with_logits nll_loss conv2d
conv2d_transpose max_pool2d avg_pool2d avg_pool2d_backward layer_norm
rms_norm max_pool2d_with_indices; max_pool2d_backward and
max_pool2d_indices_backward have a JVP rule only.

Ops left without a VJP rule (the pass reports "no gradient rule" if one
lies on the path to the target):
- ``rlx.max_pool2d_backward``: its adjoint w.r.t. ``output_grad`` is a gather
  of each window's arg-max, which no rlx op expresses; w.r.t. ``data`` it is
  zero almost everywhere.  So max-pool has no reverse-over-reverse second
  derivative; its JVP rule below makes forward-over-reverse work.
- ``rlx.max_pool2d_indices_backward`` (rlx-pool-indices' backward from the
  saved arg-max positions): the same gather, at the saved positions.
- ``rlx.collapse_sum_to`` is not an nn op (rules of the shape group).

JVP rules (each after its op's VJP rule) take tangents with the leading
``batch`` dims (rules/__init__.py) and all accept a batch:
- ``softmax``: ``y * (t - sum(y * t))``; ``log_softmax``: ``t - sum(softmax *
  t)`` (sums over the op's axis, shifted past the batch dims).
- ``cross_entropy_with_logits``: ``-(sum(tx * y) + sum(x * ty)) / batch``.
- ``nll_loss``: linear in the predictions (``-sum_c M * t``, M the weighted
  one-hot mask of the targets) and in the weights; "mean" is ``(dS - L dZ) /
  Z`` (S the summed loss, Z = sum(M), L the loss) with the VJP's guard where
  every target is ignored (Z taken as 1, L as 0), so ``<jvp(v), u> = <v,
  vjp(u)>`` holds there too.  Targets have no tangent.
- ``conv2d`` / ``conv2d_transpose``: bilinear, ``op(tx, w) + op(x, tw)`` with
  the op's attributes.  A batch of data tangents is folded into N
  (``[B*N, C, H, W]``); a batch of weight tangents into each group's output
  channels (conv2d ``[G*B*Og, Cg, kh, kw]``, conv2d_transpose ``[Cin, B*Og,
  kh, kw]``), any ``groups``, and the result unfolded.
- ``avg_pool2d``, ``avg_pool2d_backward``, ``max_pool2d_backward``: linear in
  their first operand (the batch folded into N, the data operand of the
  backward ops tiled to match); zero w.r.t. the data of the backward ops
  (avg: only its shape counts; max: piecewise constant).
- ``max_pool2d``: each output takes the tangent at its window's arg-max, the
  first maximum in row-major window order on ties, as ``max_pool2d_backward``
  (its VJP) routes the adjoint, so ``<jvp(v), u> = <v, vjp(u)>`` at ties too.
  No gather op exists: the data is padded with -inf (the tangent with 0);
  per kernel offset a strided slice gives that element of every window, and
  its equality with the output, less the windows matched at an earlier
  offset, selects it (``kh * kw`` slices).
- ``max_pool2d_with_indices``: its values' tangent is ``max_pool2d``'s, its
  positions' none; ``max_pool2d_indices_backward``: linear in its output
  gradient (the batch folded into N, the positions tiled to match).
- ``layer_norm``: ``dxhat * gamma + xhat * tgamma + tbeta``, ``dxhat = rstd *
  (tx - mean(tx) - xhat * mean(xhat * tx))``; ``rms_norm``: ``w * r * (tx -
  xr * mean(xr * tx)) + xr * tw``, ``xr = x * r``.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ...dialects import rlx
from ...dialects.infer import raw_attributes
from . import jvp, vjp
from ._helpers import (attrs, batch_axes, const_scalar, elt_of, reduction_axes, shape_of,
                       sum_tangents, tangent_shape)


# ----------------------------------------------------------------------------
# softmax & losses

def _axis(op, rank):
    return reduction_axes(attrs(op).get("axis", [-1]), rank)


def _fill_shape(t, want):
    """``t`` broadcast to ``want`` (itself when it already has that shape)."""
    return t if t is None or shape_of(t) == list(want) else rlx.broadcast_to(t, list(want))


@vjp("rlx.softmax")
def softmax(op, grads):
    # dx = y * (g - sum(g * y, axis))
    (g,) = grads
    y = op.results[0]
    ax = _axis(op, len(shape_of(y)))
    s = rlx.sum(rlx.multiply(g, y), axis=ax, keepdims=True)
    return [rlx.multiply(y, rlx.subtract(g, s))]


@jvp("rlx.softmax")
def softmax_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    y = op.results[0]
    rank = len(shape_of(y))
    ax = batch_axes(_axis(op, rank), rank, batch)
    s = rlx.sum(rlx.multiply(y, t), axis=ax, keepdims=True)
    return [rlx.multiply(y, rlx.subtract(t, s))]


@vjp("rlx.log_softmax")
def log_softmax(op, grads):
    # dx = g - exp(y) * sum(g, axis)
    (g,) = grads
    y = op.results[0]
    ax = _axis(op, len(shape_of(y)))
    s = rlx.sum(g, axis=ax, keepdims=True)
    return [rlx.subtract(g, rlx.multiply(rlx.exp(y), s))]


@jvp("rlx.log_softmax")
def log_softmax_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    y = op.results[0]
    rank = len(shape_of(y))
    ax = batch_axes(_axis(op, rank), rank, batch)
    s = rlx.sum(rlx.multiply(rlx.exp(y), t), axis=ax, keepdims=True)
    return [rlx.subtract(t, s)]


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


def _sum_primal(v, rank, batch):
    """Sums the last ``rank`` axes of ``v`` (a primal's axes), keeping the batch."""
    return rlx.sum(v, axis=batch_axes(range(rank), rank, batch))


@jvp("rlx.cross_entropy_with_logits")
def cross_entropy_with_logits_jvp(op, tangents, batch):
    x, y = op.operands
    tx, ty = tangents
    rank = len(shape_of(x))
    prod = sum_tangents(None if tx is None else rlx.multiply(tx, y),
                        None if ty is None else rlx.multiply(x, ty))
    if prod is None:
        return [None]
    out = rlx.negative(_sum_primal(prod, rank, batch))
    if rank == 2 and shape_of(x)[0] != 1:
        out = rlx.divide(out, const_scalar(shape_of(x)[0], elt_of(x)))
    return [out]


def _int_const(values: np.ndarray, elt: ir.Type) -> ir.Value:
    dtype = np.int32 if ir.IntegerType(elt).width == 32 else np.int64
    arr = np.ascontiguousarray(values.astype(dtype))
    t = ir.RankedTensorType.get(list(arr.shape), elt)
    return arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=elt)).result


def _nll_masks(op):
    """(O, w_b, M) of an ``nll_loss``: the one-hot mask of the targets
    (pred's shape and type; zero at ignored targets), the weights shaped to
    broadcast along pred's class axis (None without weights), and their
    product (O without weights)."""
    pred, targets = op.operands[0], op.operands[1]
    weights = op.operands[2] if len(op.operands) == 3 else None
    ignore_index = attrs(op).get("ignore_index", -100)
    ps = shape_of(pred)
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
    onehot = rlx.astype(rlx.equal(t, iota), elt_of(pred))      # O, pred's shape
    w_b = None
    if weights is not None:
        w_b = weights if trailing == 0 else rlx.reshape(weights, [c] + [1] * trailing)
    return onehot, w_b, (onehot if w_b is None else rlx.multiply(onehot, w_b))


def _nll_total(op, mask):
    """(sum(M), guard) of a "mean" ``nll_loss``: sum(M) taken as 1 where it is
    0, and the 0-d i1 saying so (None where sum(M) cannot be 0)."""
    pred = op.operands[0]
    ps, elt = shape_of(pred), elt_of(pred)
    c = ps[0] if len(ps) == 1 else ps[1]
    total = rlx.sum(mask)
    # sum(M) can only be 0 when a target may be ignored or weighted by 0;
    # otherwise every target counts and the guard would be dead ops in
    # every classifier's gradient.
    if len(op.operands) == 3 or 0 <= attrs(op).get("ignore_index", -100) < c:
        none_kept = rlx.equal(total, const_scalar(0.0, elt))
        return rlx.where(none_kept, const_scalar(1.0, elt), total), none_kept
    return total, None


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
    pred = op.operands[0]
    weights = op.operands[2] if len(op.operands) == 3 else None
    reduction = attrs(op).get("reduction", "mean")
    ps = shape_of(pred)
    elt = elt_of(pred)
    onehot, _, mask = _nll_masks(op)
    neg_g = rlx.negative(g)
    if reduction == "none" and len(ps) > 1:
        neg_g = rlx.expand_dims(neg_g, 1)
    if reduction == "mean":
        total, none_kept = _nll_total(op, mask)
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


@jvp("rlx.nll_loss")
def nll_loss_jvp(op, tangents, batch):
    pred = op.operands[0]
    tp = tangents[0]
    tw = tangents[2] if len(tangents) == 3 else None
    if tp is None and tw is None:
        return [None]
    reduction = attrs(op).get("reduction", "mean")
    ps, elt = shape_of(pred), elt_of(pred)
    onehot, _, mask = _nll_masks(op)
    total = none_kept = None
    if reduction == "mean":
        total, none_kept = _nll_total(op, mask)
    # d(per-element loss) before the sign and the reduction: M * tp + O * tw * pred
    # ("mean": O * tw * (pred + L), the dZ term folded in)
    dw = None
    if tw is not None:
        cls = 0 if len(ps) == 1 else 1      # pred's class axis
        tw_b = rlx.reshape(tw, list(batch) + [1] * cls + [ps[cls]]
                           + [1] * (len(ps) - cls - 1))
        per = pred
        if reduction == "mean":
            loss = op.results[0]
            if none_kept is not None:
                loss = rlx.where(none_kept, const_scalar(0.0, elt), loss)
            per = rlx.add(pred, loss)
        dw = rlx.multiply(rlx.multiply(onehot, per), tw_b)
    d = sum_tangents(None if tp is None else rlx.multiply(mask, tp), dw)
    if reduction == "none":
        cls = 0 if len(ps) == 1 else 1
        return [rlx.negative(rlx.sum(d, axis=[cls + len(batch)]))]
    out = rlx.negative(_sum_primal(d, len(ps), batch))
    if reduction == "mean":
        out = rlx.divide(out, total)
    return [out]


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
    # Bottom/right padding that only windows past the kernel's last row or
    # column read is not padded at all (a stride-2 3x3 conv's weight gradient
    # came out 4x4 and was cropped: 44% of it wasted); _crop_hw crops the rest.
    pad = list(pad)
    for i, (size, k, out) in enumerate(((h, kernel_hw[0], ho), (w, kernel_hw[1], wo))):
        span = size + pad[i] + pad[i + 2] - strides[i] * (out - 1) - 1
        excess = span // dilation[i] + 1 - k
        pad[i + 2] -= min(max(0, excess) * dilation[i], pad[i + 2])
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


def _fold(t, batch):
    """A tangent ``batch + [N, ...]`` as ``[B*N, ...]``."""
    if not batch:
        return t
    s = shape_of(t)[len(batch):]
    return rlx.reshape(t, [math.prod(batch) * s[0]] + s[1:])


def _unfold(v, batch):
    """``[B*N, ...]`` back to ``batch + [N, ...]``."""
    if not batch:
        return v
    s = shape_of(v)
    return rlx.reshape(v, list(batch) + [s[0] // math.prod(batch)] + s[1:])


def _same_op(op, operands):
    """``op`` (same name and attributes) applied to other operands."""
    return rlx.build_op(op.name, operands, raw_attributes(op)).result


def _unfold_channels(y, groups, b, og, batch):
    """(N, G*B*Og, H, W), channels ordered (G, B, Og) -> batch + (N, G*Og, H, W)."""
    n, _, ho, wo = shape_of(y)
    y = rlx.reshape(y, [n, groups, b, og, ho, wo])
    y = rlx.permute_dims(y, [2, 0, 1, 3, 4, 5])                      # (B, N, G, Og, ...)
    return rlx.reshape(y, list(batch) + [n, groups * og, ho, wo])


def _conv_weight_batch(op, x, tw, batch):
    """conv2d(x, tw) for a batch of weight tangents ``tw`` (B, O, Cg, kh, kw):
    the batch folded into each group's output channels."""
    groups = _conv_params(op)[3]
    b = math.prod(batch)
    o, cg, kh, kw = shape_of(tw)[len(batch):]
    og = o // groups
    wf = tw
    if groups > 1:
        wf = rlx.reshape(tw, [b, groups, og, cg, kh, kw])
        wf = rlx.permute_dims(wf, [1, 0, 2, 3, 4, 5])               # (G, B, Og, ...)
    wf = rlx.reshape(wf, [groups * b * og, cg, kh, kw])
    y = _same_op(op, [x, wf])                                        # (N, G*B*Og, Ho, Wo)
    return _unfold_channels(y, groups, b, og, batch)


def _bilinear_conv(op, tangents, batch, weight_batch):
    x, w = op.operands
    tx, tw = tangents
    dx = None if tx is None else _unfold(_same_op(op, [_fold(tx, batch), w]), batch)
    dw = None
    if tw is not None:
        dw = _same_op(op, [x, tw]) if not batch else weight_batch(op, x, tw, batch)
    return [sum_tangents(dx, dw)]


@jvp("rlx.conv2d")
def conv2d_jvp(op, tangents, batch):
    return _bilinear_conv(op, tangents, batch, _conv_weight_batch)


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


def _convt_weight_batch(op, x, tw, batch):
    """conv2d_transpose(x, tw) for a batch of IOHW weight tangents ``tw``
    (B, Cin, Og, kh, kw): the batch folded into each group's output channels."""
    groups = _conv_params(op)[3]
    b = math.prod(batch)
    cin, og, kh, kw = shape_of(tw)[len(batch):]
    wf = rlx.reshape(tw, [b, cin, og, kh, kw])
    wf = rlx.permute_dims(wf, [1, 0, 2, 3, 4])                       # (Cin, B, Og, ...)
    wf = rlx.reshape(wf, [cin, b * og, kh, kw])
    y = _same_op(op, [x, wf])                                        # (N, G*B*Og, H', W')
    return _unfold_channels(y, groups, b, og, batch)


@jvp("rlx.conv2d_transpose")
def conv2d_transpose_jvp(op, tangents, batch):
    return _bilinear_conv(op, tangents, batch, _convt_weight_batch)


# ----------------------------------------------------------------------------
# pooling

@vjp("rlx.max_pool2d")
def max_pool2d(op, grads):
    (g,) = grads
    return [rlx.build_op("rlx.max_pool2d_backward", [g, op.operands[0]],
                         raw_attributes(op)).result]


def _pad_hw(v, before, after, fill, nb):
    """``v`` padded on its last two axes (``before``/``after`` per axis) with
    the 0-d ``fill``."""
    for k, (lo, hi) in enumerate(zip(before, after)):
        axis = nb + 2 + k
        pieces = []
        for count, piece in ((lo, None), (None, v), (hi, None)):
            if piece is not None:
                pieces.append(piece)
            elif count:
                shape = shape_of(v)
                shape[axis] = count
                pieces.append(rlx.broadcast_to(fill, shape))
        if len(pieces) > 1:
            v = rlx.concat(pieces, axis=axis)
    return v


@jvp("rlx.max_pool2d")
def max_pool2d_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    x, y = op.operands[0], op.results[0]
    a = attrs(op)
    strides, pad, dilation, _ = _conv_params(op)
    kernel = list(a.get("pool_size", [1, 1]))
    if len(kernel) == 1:
        kernel *= 2
    _, _, h, w = shape_of(x)
    _, _, ho, wo = shape_of(y)
    elt, nb = elt_of(x), len(batch)
    # rows/cols past the bottom/right padding that ceil_mode windows reach
    extra = [max(0, (o - 1) * s + d * (k - 1) + 1 - (size + p0 + p1))
             for o, s, d, k, size, p0, p1 in ((ho, strides[0], dilation[0], kernel[0], h,
                                               pad[0], pad[2]),
                                              (wo, strides[1], dilation[1], kernel[1], w,
                                               pad[1], pad[3]))]
    before, after = (pad[0], pad[1]), (pad[2] + extra[0], pad[3] + extra[1])
    xp = _pad_hw(x, before, after, const_scalar(-np.inf, elt), 0)
    tp = _pad_hw(t, before, after, const_scalar(0.0, elt), nb)
    one = const_scalar(1.0, elt)
    out = found = None
    offsets = [(ky, kx) for ky in range(kernel[0]) for kx in range(kernel[1])]
    for i, (ky, kx) in enumerate(offsets):
        begin = [ky * dilation[0], kx * dilation[1]]
        end = [begin[0] + (ho - 1) * strides[0] + 1, begin[1] + (wo - 1) * strides[1] + 1]
        xk = rlx.strided_slice(xp, [2, 3], begin, end, strides)
        tk = rlx.strided_slice(tp, [nb + 2, nb + 3], begin, end, strides)
        hit = rlx.astype(rlx.equal(xk, y), elt)          # window element == its max
        sel = hit if found is None else rlx.multiply(hit, rlx.subtract(one, found))
        if i + 1 < len(offsets):
            found = hit if found is None else rlx.maximum(found, hit)
        out = sum_tangents(out, rlx.multiply(tk, sel))
    return [_fill_shape(out, tangent_shape(y, batch))]


@vjp("rlx.avg_pool2d")
def avg_pool2d(op, grads):
    (g,) = grads
    return [rlx.build_op("rlx.avg_pool2d_backward", [g, op.operands[0]],
                         raw_attributes(op)).result]


@jvp("rlx.avg_pool2d")
def avg_pool2d_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    return [_unfold(_same_op(op, [_fold(t, batch)]), batch)]


@vjp("rlx.avg_pool2d_backward")
def avg_pool2d_backward(op, grads):
    # Linear in output_grad and independent of data's values: the adjoint
    # spreads-then-divides, i.e. avg_pool2d with the same attributes.
    (g,) = grads
    return [rlx.build_op("rlx.avg_pool2d", [g], raw_attributes(op)).result, None]


def _tile(x, batch):
    """A primal ``[N, ...]`` repeated for each batch element: ``[B*N, ...]``."""
    if not batch:
        return x
    return _fold(rlx.broadcast_to(x, tangent_shape(x, batch)), batch)


@jvp("rlx.avg_pool2d_backward", "rlx.max_pool2d_backward")
def pool_backward_jvp(op, tangents, batch):
    # linear in output_grad; zero w.r.t. data (avg: only its shape counts;
    # max: the arg-max is piecewise constant)
    tg = tangents[0]
    if tg is None:
        return [None]
    x = op.operands[1]
    return [_unfold(_same_op(op, [_fold(tg, batch), _tile(x, batch)]), batch)]


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


def _param_to_x_batch(p, given, srt, bshape, batch):
    """A batch of gamma-like tangents (``batch`` + dims in ``given`` order)
    broadcastable to a tangent of x (``batch + bshape``)."""
    nb = len(batch)
    if given != srt:
        p = rlx.permute_dims(p, list(range(nb)) + [nb + int(i) for i in np.argsort(given)])
    return rlx.reshape(p, list(batch) + bshape)


def _layer_norm_stats(x, axes, eps):
    """(rstd, xhat) of a layer_norm over ``axes`` (sorted), rstd keepdims."""
    centered = rlx.subtract(x, rlx.mean(x, axis=axes, keepdims=True))
    var = rlx.mean(rlx.square(centered), axis=axes, keepdims=True)
    rstd = rlx.rsqrt(rlx.add(var, const_scalar(eps, elt_of(x))))
    return rstd, rlx.multiply(centered, rstd)


def _rms_norm_scale(x, axes, eps):
    """r = 1 / sqrt(mean(x^2) + eps) of an rms_norm over ``axes``, keepdims."""
    return rlx.rsqrt(rlx.add(rlx.mean(rlx.square(x), axis=axes, keepdims=True),
                             const_scalar(eps, elt_of(x))))


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
    rstd, xhat = _layer_norm_stats(x, srt, eps)
    scale = a.get("scale", True)
    dxhat = rlx.multiply(g, _param_to_x(gamma, given, srt, bshape)) if scale else g
    m1 = rlx.mean(dxhat, axis=srt, keepdims=True)
    m2 = rlx.mean(rlx.multiply(dxhat, xhat), axis=srt, keepdims=True)
    dx = rlx.multiply(rstd, rlx.subtract(rlx.subtract(dxhat, m1), rlx.multiply(xhat, m2)))
    dgamma = _reduce_to_param(rlx.multiply(g, xhat), given, srt) if scale else None
    dbeta = _reduce_to_param(g, given, srt) if a.get("center", True) else None
    return [dx, dgamma, dbeta]


@jvp("rlx.layer_norm")
def layer_norm_jvp(op, tangents, batch):
    x, gamma, _ = op.operands
    tx, tg, tb = tangents
    a = attrs(op)
    scale, center = a.get("scale", True), a.get("center", True)
    given, srt, bshape = _param_axes(op, x)
    ax = batch_axes(srt, len(shape_of(x)), batch)
    rstd, xhat = _layer_norm_stats(x, srt, a.get("epsilon", 1e-5))
    dx = dg = db = None
    if tx is not None:
        m1 = rlx.mean(tx, axis=ax, keepdims=True)
        m2 = rlx.mean(rlx.multiply(xhat, tx), axis=ax, keepdims=True)
        dx = rlx.multiply(rstd, rlx.subtract(rlx.subtract(tx, m1), rlx.multiply(xhat, m2)))
        if scale:
            dx = rlx.multiply(dx, _param_to_x_batch(gamma, given, srt, bshape, ()))
    if tg is not None and scale:
        dg = rlx.multiply(xhat, _param_to_x_batch(tg, given, srt, bshape, batch))
    if tb is not None and center:
        db = _param_to_x_batch(tb, given, srt, bshape, batch)
    return [_fill_shape(sum_tangents(dx, dg, db), tangent_shape(op.results[0], batch))]


@vjp("rlx.rms_norm")
def rms_norm(op, grads):
    """y = x * r * w, r = 1/sqrt(mean(x^2) + eps):
    dw = sum(g * x * r) over the other axes; dx = r * u - x * r^3 * mean(u * x),
    u = g * w."""
    (g,) = grads
    x, weight = op.operands
    eps = attrs(op).get("epsilon", 1e-5)
    given, srt, bshape = _param_axes(op, x)
    r = _rms_norm_scale(x, srt, eps)
    xr = rlx.multiply(x, r)
    u = rlx.multiply(g, _param_to_x(weight, given, srt, bshape))
    m = rlx.mean(rlx.multiply(u, xr), axis=srt, keepdims=True)      # r * mean(u * x)
    dx = rlx.multiply(r, rlx.subtract(u, rlx.multiply(xr, m)))
    dw = _reduce_to_param(rlx.multiply(g, xr), given, srt)
    return [dx, dw]


@jvp("rlx.rms_norm")
def rms_norm_jvp(op, tangents, batch):
    x, weight = op.operands
    tx, tw = tangents
    given, srt, bshape = _param_axes(op, x)
    ax = batch_axes(srt, len(shape_of(x)), batch)
    r = _rms_norm_scale(x, srt, attrs(op).get("epsilon", 1e-5))
    xr = rlx.multiply(x, r)
    dx = dw = None
    if tx is not None:
        m = rlx.mean(rlx.multiply(xr, tx), axis=ax, keepdims=True)
        u = rlx.subtract(tx, rlx.multiply(xr, m))
        w_b = _param_to_x_batch(weight, given, srt, bshape, ())
        dx = rlx.multiply(u, rlx.multiply(r, w_b))
    if tw is not None:
        dw = rlx.multiply(xr, _param_to_x_batch(tw, given, srt, bshape, batch))
    if dx is None and dw is None:
        return [None]
    return [_fill_shape(sum_tangents(dx, dw), tangent_shape(op.results[0], batch))]


# ----------------------------------------------------------------------------
# max pooling with saved arg-max indices (conversion/cpu/rlx_pool_indices.py)

@vjp("rlx.max_pool2d_with_indices")
def max_pool2d_with_indices(op, grads):
    # the output's VJP is max_pool2d's, from the saved indices (the same
    # positions); the indices (i32) carry no gradient
    g = grads[0]
    if g is None:
        return [None]
    x = op.operands[0]
    return [rlx.build_op("rlx.max_pool2d_indices_backward", [g, op.results[1]],
                         raw_attributes(op), result=x.type).result]


@jvp("rlx.max_pool2d_with_indices")
def max_pool2d_with_indices_jvp(op, tangents, batch):
    # the output's tangent is max_pool2d's (each window's tangent at its
    # first maximum); the indices are piecewise constant
    return max_pool2d_jvp(op, tangents, batch)[:1] + [None]


@jvp("rlx.max_pool2d_indices_backward")
def max_pool2d_indices_backward_jvp(op, tangents, batch):
    # linear in output_grad; the indices are integers
    tg = tangents[0]
    if tg is None:
        return [None]
    idx = op.operands[1]
    shape = shape_of(op.results[0])
    if batch:
        shape = [math.prod(batch) * shape[0]] + shape[1:]
    result = ir.RankedTensorType.get(shape, elt_of(op.results[0]))
    return [_unfold(rlx.build_op(op.name, [_fold(tg, batch), _tile(idx, batch)],
                                 raw_attributes(op), result=result).result, batch)]

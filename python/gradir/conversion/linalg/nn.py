"""Neural-network rlx ops -> linalg.

- conv2d -> ``tensor.pad`` + ``linalg.conv_2d_nchw_fchw`` (groups > 1:
  ``linalg.conv_2d_ngchw_gfchw`` on the NGCHW / GFCHW views);
- conv2d_transpose -> the input scattered with stride into a zero tensor
  (``tensor.insert_slice`` with strides), then a stride-1 convolution with the
  spatially flipped, in/out-swapped kernel;
- max_pool2d / avg_pool2d -> ``tensor.pad`` + ``linalg.pooling_nchw_max`` /
  ``linalg.pooling_nchw_sum`` (divided by the window counts, a constant);
- max_pool2d_backward -> a reduction ``linalg.generic`` computing each
  window's arg-max (the first in row-major window order), then, per kernel
  offset, an in-place strided update of the padded gradient;
  avg_pool2d_backward -> the same update with ``grad / count``;
- softmax, log_softmax, layer_norm, rms_norm -> reductions and elementwise
  ``linalg.generic`` ops (the statistics are read through projected maps);
- cross_entropy_with_logits, nll_loss -> reduction ``linalg.generic`` ops
  (nll_loss gathers with ``tensor.extract``; a target outside [0, C) that is
  not ``ignore_index`` is clamped: the compiled code cannot raise).
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, tensor

from ...dialects.infer import attributes_of
from .linalg_utils import (PARALLEL, REDUCTION, elementwise, elt_of, empty, extract_slice,
                           filled, generic, identity_map, index_value, insert_slice,
                           normalize_axes, numel, pad, reduce_dims, reshape, scalar_const,
                           shape_of, zero)
from .reduce import centered_square_sum, divide_by, projected_map, reduce, reduce_sum
from .registry import lowers


def _c(x, v):
    return scalar_const(x.type, v)


def _maps_generic(inputs, maps, out_shape, elt, body):
    """An all-parallel generic over ``out_shape`` with explicit input maps."""
    rank = len(out_shape)
    n = len(inputs)
    return generic(inputs, [empty(out_shape, elt)], list(maps) + [identity_map(rank)],
                   [PARALLEL] * rank, lambda *a: [body(*a[:n])])[0]


def _full_reduction(inputs, elt, body, n_out=1):
    """A reduction of every loop dim of the (same-shaped) ``inputs`` into
    ``n_out`` 0-d accumulators (initialised to 0)."""
    rank = len(shape_of(inputs[0]))
    inits = [filled([], elt, 0) for _ in range(n_out)]
    scalar = ir.AffineMap.get(rank, 0, [])
    return generic(inputs, inits, [identity_map(rank)] * len(inputs) + [scalar] * n_out,
                   [REDUCTION] * rank, body)


# --- softmax & losses ------------------------------------------------------------

def _softmax_parts(op):
    x = op.operands[0]
    shape = shape_of(x)
    rank = len(shape)
    axis = attributes_of(op).get("axis")
    ax = normalize_axes([-1] if axis is None else axis, rank)[0]
    m = reduce(x, [ax], "max")
    pm = projected_map(rank, [ax])
    e = _maps_generic([x, m], [identity_map(rank), pm], shape, elt_of(x),
                      lambda v, mv: math.exp(arith.subf(v, mv)))
    return x, shape, rank, ax, m, pm, e


@lowers("rlx.softmax")
def lower_softmax(op):
    x, shape, rank, ax, m, pm, e = _softmax_parts(op)
    s = reduce_sum(e, [ax])
    return [_maps_generic([e, s], [identity_map(rank), pm], shape, elt_of(x), arith.divf)]


@lowers("rlx.log_softmax")
def lower_log_softmax(op):
    x, shape, rank, ax, m, pm, e = _softmax_parts(op)
    s = reduce_sum(e, [ax])
    return [_maps_generic([x, m, s], [identity_map(rank), pm, pm], shape, elt_of(x),
                          lambda v, mv, sv: arith.subf(arith.subf(v, mv), math.log(sv)))]


@lowers("rlx.cross_entropy_with_logits")
def lower_cross_entropy(op):
    # Relax: -sum(x * y), divided by the batch size for 2-D inputs.
    x, y = op.operands
    elt = elt_of(x)
    total = _full_reduction([x, y], elt,
                            lambda a, b, acc: [arith.addf(acc, arith.mulf(a, b))])[0]
    shape = shape_of(x)
    batch = shape[0] if len(shape) == 2 else None

    def finish(t):
        t = arith.negf(t)
        return t if batch is None else arith.divf(t, _c(t, batch))

    return [elementwise([total], [], elt, finish)]


@lowers("rlx.nll_loss")
def lower_nll_loss(op):
    pred, targets = op.operands[0], op.operands[1]
    weights = op.operands[2] if len(op.operands) > 2 else None
    attrs = attributes_of(op)
    reduction = attrs.get("reduction", "mean")
    ignore = attrs.get("ignore_index", -100)
    pshape = shape_of(pred)
    elt = elt_of(pred)
    n_classes = pshape[0] if len(pshape) == 1 else pshape[1]
    tshape = shape_of(targets)
    rank = len(tshape)

    def loss_and_weight(t):
        valid = arith.cmpi(arith.CmpIPredicate.ne, t, scalar_const(t.type, ignore))
        ti = arith.index_cast(ir.IndexType.get(), t)
        tc = arith.select(valid, ti, index_value(0))
        tc = arith.minsi(arith.maxsi(tc, index_value(0)), index_value(n_classes - 1))
        if len(pshape) == 1:
            coords = [tc]
        else:
            coords = [linalg.IndexOp(0).result, tc] + [linalg.IndexOp(d).result
                                                       for d in range(1, rank)]
        p = tensor.extract(pred, coords)
        w = tensor.extract(weights, [tc]) if weights is not None else scalar_const(elt, 1)
        w = arith.select(valid, w, zero(elt))
        return arith.mulf(arith.negf(p), w), w

    if reduction == "none":
        return [_maps_generic([targets], [identity_map(rank)], tshape, elt,
                              lambda t: loss_and_weight(t)[0])]

    def body(t, acc_l, acc_w):
        loss, w = loss_and_weight(t)
        return [arith.addf(acc_l, loss), arith.addf(acc_w, w)]

    inits = [filled([], elt, 0), filled([], elt, 0)]
    scalar = ir.AffineMap.get(rank, 0, [])
    total, wsum = generic([targets], inits, [identity_map(rank), scalar, scalar],
                          [REDUCTION] * rank, body)
    if reduction == "sum":
        return [total]
    return [elementwise([total, wsum], [], elt, arith.divf)]


# --- convolution -------------------------------------------------------------------

def _ints(attrs, name, default):
    v = attrs.get(name)
    return list(default) if v is None else list(v)


def _conv_geometry(op):
    attrs = attributes_of(op)
    return (_ints(attrs, "strides", [1, 1]), _ints(attrs, "padding", [0, 0, 0, 0]),
            _ints(attrs, "dilation", [1, 1]), attrs.get("groups", 1))


def _conv(xp, w, out_shape, strides, dilation, groups):
    """NCHW x OIHW convolution of the padded input ``xp`` (no padding left)."""
    elt = elt_of(xp)
    n, c, hp, wp = shape_of(xp)
    o, cg, kh, kw = shape_of(w)
    if groups == 1:
        return linalg.conv_2d_nchw_fchw(xp, w, outs=[filled(out_shape, elt, 0)],
                                        strides=strides, dilations=dilation)
    g = groups
    x5 = reshape(xp, [n, g, c // g, hp, wp])
    w5 = reshape(w, [g, o // g, cg, kh, kw])
    out5 = [out_shape[0], g, o // g, out_shape[2], out_shape[3]]
    y5 = linalg.conv_2d_ngchw_gfchw(x5, w5, outs=[filled(out5, elt, 0)],
                                    strides=strides, dilations=dilation)
    return reshape(y5, out_shape)


@lowers("rlx.conv2d")
def lower_conv2d(op):
    x, w = op.operands
    strides, (pt, pl, pb, pr), dilation, groups = _conv_geometry(op)
    xp = pad(x, [0, 0, pt, pl], [0, 0, pb, pr], 0)
    return [_conv(xp, w, shape_of(op.results[0].type), strides, dilation, groups)]


def _scatter_range(base, size, stride, limit):
    """Indices ``i`` in [0, size) whose position ``base + i*stride`` lies in
    [0, limit): (first, count)."""
    first = 0 if base >= 0 else -(-(-base) // stride)
    last = min(size - 1, (limit - 1 - base) // stride) if limit - 1 - base >= 0 else -1
    return first, max(0, last - first + 1)


@lowers("rlx.conv2d_transpose")
def lower_conv2d_transpose(op):
    x, w = op.operands
    (sh, sw), (pt, pl, pb, pr), (dh, dw), groups = _conv_geometry(op)
    n, cin, h, wd = shape_of(x)
    _, og, kh, kw = shape_of(w)
    out_shape = shape_of(op.results[0].type)
    ho, wo = out_shape[2], out_shape[3]
    elt = elt_of(x)
    hp, wp = ho + dh * (kh - 1), wo + dw * (kw - 1)
    base_h, base_w = dh * (kh - 1) - pt, dw * (kw - 1) - pl
    ih, ch = _scatter_range(base_h, h, sh, hp)
    iw, cw = _scatter_range(base_w, wd, sw, wp)
    padded = filled([n, cin, hp, wp], elt, 0)
    if ch and cw:
        xs = extract_slice(x, [0, 0, ih, iw], [n, cin, ch, cw])
        padded = insert_slice(xs, padded, [0, 0, base_h + ih * sh, base_w + iw * sw],
                              [1, 1, sh, sw])
    # Flipped kernel with in/out channels swapped, per group:
    # wf[g*og + o, c, y, x] = w[g*cg + c, o, kh-1-y, kw-1-x]  (OIHW, I = cin/groups)
    cg = cin // groups
    w5 = reshape(w, [groups, cg, og, kh, kw])
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    flip = ir.AffineMap.get(5, 0, [d[0], d[2], d[1],
                                   ir.AffineConstantExpr.get(kh - 1) - d[3],
                                   ir.AffineConstantExpr.get(kw - 1) - d[4]])
    wf5 = _maps_generic([w5], [flip], [groups, og, cg, kh, kw], elt, lambda v: v)
    wf = reshape(wf5, [groups * og, cg, kh, kw])
    return [_conv(padded, wf, out_shape, [1, 1], [dh, dw], groups)]


# --- pooling -------------------------------------------------------------------------

class _Pool:
    """Geometry of a 2-D pooling op (NCHW); ``out`` is the pooled (Ho, Wo)."""

    def __init__(self, op, data_shape, out_hw):
        attrs = attributes_of(op)
        self.kernel = _ints(attrs, "pool_size", [1, 1])
        self.strides = _ints(attrs, "strides", [1, 1])
        self.dilation = _ints(attrs, "dilation", [1, 1])
        self.pad = _ints(attrs, "padding", [0, 0, 0, 0])
        self.include_pad = attrs.get("count_include_pad", False)
        self.shape = data_shape
        self.out = out_hw
        _, _, h, w = data_shape
        pt, pl, pb, pr = self.pad
        self.extra = [max(0, (o - 1) * s + d * (k - 1) + 1 - (size + lo + hi))
                      for o, s, d, k, size, lo, hi in
                      ((out_hw[0], self.strides[0], self.dilation[0], self.kernel[0], h, pt, pb),
                       (out_hw[1], self.strides[1], self.dilation[1], self.kernel[1], w, pl, pr))]

    def padded(self, x, value):
        pt, pl, pb, pr = self.pad
        return pad(x, [0, 0, pt, pl], [0, 0, pb + self.extra[0], pr + self.extra[1]], value)

    def padded_shape(self):
        n, c, h, w = self.shape
        pt, pl, pb, pr = self.pad
        return [n, c, h + pt + pb + self.extra[0], w + pl + pr + self.extra[1]]

    def counts(self) -> np.ndarray:
        """Divisor of average pooling per output position (Ho, Wo): elements
        inside the data (count_include_pad: inside data and padding, not the
        ceil_mode overhang); at least 1."""
        _, _, h, w = self.shape
        pt, pl, pb, pr = self.pad
        per_axis = []
        for o, s, d, k, size, lo, hi in (
                (self.out[0], self.strides[0], self.dilation[0], self.kernel[0], h, pt, pb),
                (self.out[1], self.strides[1], self.dilation[1], self.kernel[1], w, pl, pr)):
            pos = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d - lo
            first, end = (-lo, size + hi) if self.include_pad else (0, size)
            per_axis.append(((pos >= first) & (pos < end)).sum(axis=1))
        return np.maximum(per_axis[0][:, None] * per_axis[1][None, :], 1)

    def window(self, elt):
        return empty(self.kernel, elt)


def _dense(values: np.ndarray, elt: ir.Type) -> ir.Value:
    dtype = np.float64 if isinstance(elt, ir.F64Type) else np.float32
    arr = np.ascontiguousarray(values.astype(dtype))
    t = ir.RankedTensorType.get(list(arr.shape), elt)
    return arith.constant(t, ir.DenseElementsAttr.get(arr, type=t))


def _divide_by_counts(v, p):
    """``v / counts`` with the (Ho, Wo) counts broadcast over N and C."""
    elt = elt_of(v)
    shape = shape_of(v)
    counts = _dense(p.counts(), elt)
    hw = ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(2), ir.AffineDimExpr.get(3)])
    return _maps_generic([v, counts], [identity_map(4), hw], shape, elt, arith.divf)


@lowers("rlx.max_pool2d")
def lower_max_pool2d(op):
    x = op.operands[0]
    out_shape = shape_of(op.results[0].type)
    p = _Pool(op, shape_of(x), out_shape[2:])
    elt = elt_of(x)
    xp = p.padded(x, float("-inf"))
    init = filled(out_shape, elt, float("-inf"))
    return [linalg.pooling_nchw_max(xp, p.window(elt), outs=[init], strides=p.strides,
                                    dilations=p.dilation)]


@lowers("rlx.avg_pool2d")
def lower_avg_pool2d(op):
    x = op.operands[0]
    out_shape = shape_of(op.results[0].type)
    p = _Pool(op, shape_of(x), out_shape[2:])
    elt = elt_of(x)
    s = linalg.pooling_nchw_sum(p.padded(x, 0), p.window(elt),
                                outs=[filled(out_shape, elt, 0)], strides=p.strides,
                                dilations=p.dilation)
    return [_divide_by_counts(s, p)]


def _window_map(p):
    """``(n, c, oh, ow, ky, kx) -> (n, c, oh*sh + ky*dh, ow*sw + kx*dw)``."""
    d = [ir.AffineDimExpr.get(i) for i in range(6)]
    (sh, sw), (dh, dw) = p.strides, p.dilation
    return ir.AffineMap.get(6, 0, [d[0], d[1], d[2] * sh + d[4] * dh, d[3] * sw + d[5] * dw])


def _argmax(xp, p, out_shape):
    """Per window: the row-major position ``ky * KW + kx`` of its first
    maximum (index type), as the interpreter's ``argmax``."""
    elt = elt_of(xp)
    kw = p.kernel[1]
    maxv = filled(out_shape, elt, float("-inf"))
    arg = filled(out_shape, ir.IndexType.get(), 0)
    out_map = ir.AffineMap.get(6, 0, [ir.AffineDimExpr.get(i) for i in range(4)])

    # The (unread) window operand gives the ky/kx loops their extent, as in
    # linalg's pooling ops.
    window_map = ir.AffineMap.get(6, 0, [ir.AffineDimExpr.get(4), ir.AffineDimExpr.get(5)])

    def body(v, _w, m, a):
        pos = arith.addi(arith.muli(linalg.IndexOp(4).result, index_value(kw)),
                         linalg.IndexOp(5).result)
        greater = arith.cmpf(arith.CmpFPredicate.OGT, v, m)
        return [arith.select(greater, v, m), arith.select(greater, pos, a)]

    return generic([xp, p.window(elt)], [maxv, arg], [_window_map(p), window_map, out_map, out_map],
                   [PARALLEL] * 4 + [REDUCTION] * 2, body)[1]


def _scatter(p, contribs, shape, elt):
    """Adds ``contribs(ky, kx, dest)`` (building a generic that updates the
    strided window slice ``dest``) into the padded gradient for every kernel
    offset, then crops the padding."""
    gp = filled(p.padded_shape(), elt, 0)
    n, c = shape[:2]
    ho, wo = p.out
    (sh, sw), (dh, dw) = p.strides, p.dilation
    for ky in range(p.kernel[0]):
        for kx in range(p.kernel[1]):
            offsets = [0, 0, ky * dh, kx * dw]
            dest = extract_slice(gp, offsets, [n, c, ho, wo], [1, 1, sh, sw])
            gp = insert_slice(contribs(ky, kx, dest), gp, offsets, [1, 1, sh, sw])
    pt, pl = p.pad[0], p.pad[1]
    return extract_slice(gp, [0, 0, pt, pl], shape)


@lowers("rlx.max_pool2d_backward")
def lower_max_pool2d_backward(op):
    grad, x = op.operands
    shape = shape_of(x)
    gshape = shape_of(grad)
    p = _Pool(op, shape, gshape[2:])
    elt = elt_of(x)
    arg = _argmax(p.padded(x, float("-inf")), p, gshape)
    kw = p.kernel[1]

    def contrib(ky, kx, dest):
        pos = ky * kw + kx

        def body(g, a, acc):
            hit = arith.cmpi(arith.CmpIPredicate.eq, a, index_value(pos))
            return [arith.addf(acc, arith.select(hit, g, zero(elt)))]

        return generic([grad, arg], [dest], [identity_map(4)] * 3, [PARALLEL] * 4, body)[0]

    return [_scatter(p, contrib, shape, elt)]


@lowers("rlx.avg_pool2d_backward")
def lower_avg_pool2d_backward(op):
    grad, x = op.operands
    shape = shape_of(x)
    p = _Pool(op, shape, shape_of(grad)[2:])
    elt = elt_of(x)
    g = _divide_by_counts(grad, p)

    def contrib(ky, kx, dest):
        return generic([g], [dest], [identity_map(4)] * 2, [PARALLEL] * 4,
                       lambda v, acc: [arith.addf(acc, v)])[0]

    return [_scatter(p, contrib, shape, elt)]


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

    return [_maps_generic([x, mean, var, gamma, beta], [identity_map(rank), pm, pm, gm, gm],
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

    return [_maps_generic([x, ms, weight], [identity_map(rank), pm, _param_map(rank, axes)],
                          shape, elt, body)]

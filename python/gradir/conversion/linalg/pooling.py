"""Pooling rlx ops -> linalg.

- max_pool2d / avg_pool2d -> windows of up to UNROLLED_WINDOW elements: one
  all-parallel generic over that many strided views of the padded input
  (column strides over 1: of its columns copied de-interleaved first)
  (avg: divided by the window counts, a constant); larger windows:
  ``linalg.pooling_nchw_max`` / ``linalg.pooling_nchw_sum``;
- max_pool2d_backward -> windows that tile the input (stride = window, no
  dilation or padding): per kernel offset, one generic over the windows finds
  the first maximum and writes grad or 0 into that offset's strided view;
  overlapping or gapped windows of up to UNROLLED_WINDOW elements: an
  all-parallel generic over the windows' views computing each window's
  arg-max (the first in row-major window order), then the gradient gathered
  per phase of the input modulo the strides (one all-parallel generic each
  over shifted views of the zero-padded gradient and arg-max,
  ``_gather_backward``); larger windows: a reduction ``linalg.generic`` for
  the arg-max, then an ``scf.for`` over the kernel offsets around one
  in-place strided update of the padded gradient; avg_pool2d_backward ->
  the same forms with ``grad / count``;
- with ``pool_kernels`` (``rlx-to-linalg{pool-kernels=true}``), 2x2 pools of
  stride 2, and 3x3 max pools of stride 2 and padding 1 over even rows and
  columns (``_kernel_pool3``), in the forms the pooling kernels take.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ... import _compat
from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...dialects.infer import attributes_of
from .linalg_utils import (PARALLEL, REDUCTION, affine_map, elt_of, empty, extract_slice,
                           filled, generic, identity_map, index_value, insert_slice, int_list,
                           kernel_loops, maps_generic, pad, scalar_const, scaled_index,
                           shape_of, zero)
from .matmul import _execute_region
from .registry import lowers


class _Pool:
    """Geometry of a 2-D pooling op (NCHW); ``out`` is the pooled (Ho, Wo)."""

    def __init__(self, op, data_shape, out_hw):
        attrs = attributes_of(op)
        self.kernel = int_list(attrs, "pool_size", [1, 1])
        self.strides = int_list(attrs, "strides", [1, 1])
        self.dilation = int_list(attrs, "dilation", [1, 1])
        self.pad = int_list(attrs, "padding", [0, 0, 0, 0])
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
    return maps_generic([v, counts], [identity_map(4), hw], shape, elt, arith.divf)


# Windows of at most this many elements are read as that many operands of
# one all-parallel generic (vectorizable loops over the output); larger ones
# use linalg's pooling ops (a reduction loop per window).
UNROLLED_WINDOW = 16


def _unrolled(p):
    return p.kernel[0] * p.kernel[1] <= UNROLLED_WINDOW


def _window_views(xp, p, fill=None):
    """Per kernel offset (row-major window order), the strided view
    ``xp[:, :, ky*dh :: sh, kx*dw :: sw]`` of the output's size (no copy).

    With a column stride over 1 and ``fill`` (the padding's value), the
    columns of ``xp`` are first copied de-interleaved, ``xd[n, c, y, r, j]
    = xp[n, c, y, j*sw + r]`` (one pass; ``fill`` past the last column), and
    the views are unit-stride rows of ``xd`` (``xd[:, :, ky*dh :: sh, r, q
    :: 1]`` with ``kx*dw = q*sw + r``): the generics reading them vectorize
    along the output's rows, where every strided view was a gather.  A 3x3
    max pool of stride 2 and padding 1 over 32x32x32x32 f32 (ResNet's stem,
    one thread, Intel Xeon AVX-512): 2.29 -> 1.06 ms (stride 1 over the same
    input: 1.08 ms for four times the outputs); the backward's arg-max reads
    the same views (``_argmax_unrolled``)."""
    n, c = p.shape[:2]
    (sh, sw), (dh, dw) = p.strides, p.dilation
    if sw == 1 or fill is None:
        return [extract_slice(xp, [0, 0, ky * dh, kx * dw], [n, c] + list(p.out), [1, 1, sh, sw])
                for ky in range(p.kernel[0]) for kx in range(p.kernel[1])]
    elt = elt_of(xp)
    _, _, hp, wp = shape_of(xp)
    q = -(-wp // sw)
    xq = pad(xp, [0, 0, 0, 0], [0, 0, 0, q * sw - wp], fill)
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    xd = generic([xq], [empty([n, c, hp, sw, q], elt)],
                 [ir.AffineMap.get(5, 0, [d[0], d[1], d[2], d[4] * sw + d[3]]), identity_map(5)],
                 [PARALLEL] * 5, lambda v, _o: [v])[0]
    ho, wo = p.out
    views = []
    for ky in range(p.kernel[0]):
        for kx in range(p.kernel[1]):
            qx, r = divmod(kx * dw, sw)
            # (5-D, the unit dim read through the map: a rank-reducing slice
            # of several unit dims is ambiguous to memref.subview)
            views.append(extract_slice(xd, [0, 0, ky * dh, r, qx], [n, c, ho, 1, wo],
                                       [1, 1, sh, 1, 1]))
    return views


def _view_maps(views):
    """The maps reading ``_window_views``' views over the output's (n, c, y, x)."""
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    five = ir.AffineMap.get(4, 0, [d[0], d[1], d[2], ir.AffineConstantExpr.get(0), d[3]])
    return [five if len(shape_of(v)) == 5 else identity_map(4) for v in views]


def _exact(p):
    """Windows that tile the input exactly (stride = window, no dilation, no
    padding): each input element lies in one window."""
    _, _, h, w = p.shape
    return (p.strides == p.kernel and p.dilation == [1, 1] and not any(p.pad)
            and h == p.out[0] * p.kernel[0] and w == p.out[1] * p.kernel[1])


@lowers("rlx.max_pool2d")
def lower_max_pool2d(op):
    x = op.operands[0]
    out_shape = shape_of(op.results[0].type)
    p = _Pool(op, shape_of(x), out_shape[2:])
    elt = elt_of(x)
    if _kernel_pool(p, elt):
        return [_kernel_max_pool(x, p, out_shape, elt)]
    if _kernel_pool3(p, elt):
        return [_kernel_max_pool(p.padded(x, float("-inf")), p, out_shape, elt)]
    xp = p.padded(x, float("-inf"))
    if _unrolled(p):
        views = _window_views(xp, p, float("-inf"))

        def body(*vals):
            m = vals[0]
            for v in vals[1:]:
                m = arith.maximumf(m, v)
            return m

        return [maps_generic(views, _view_maps(views), out_shape, elt, body)]
    init = filled(out_shape, elt, float("-inf"))
    return [linalg.pooling_nchw_max(xp, p.window(elt), outs=[init], strides=p.strides,
                                    dilations=p.dilation)]


@lowers("rlx.avg_pool2d")
def lower_avg_pool2d(op):
    x = op.operands[0]
    out_shape = shape_of(op.results[0].type)
    p = _Pool(op, shape_of(x), out_shape[2:])
    elt = elt_of(x)
    # (no kernel: this generic's additions vectorize, 0.055 ms for LeNet's
    # first pool on AVX2 against 0.088 for a kernel of the sums and the
    # division after it)
    if _unrolled(p):
        views = _window_views(p.padded(x, 0), p, 0)
        counts = _dense(p.counts(), elt)
        hw = affine_map(4, [2, 3])

        def body(count, *vals):
            acc = vals[0]
            for v in vals[1:]:
                acc = arith.addf(acc, v)
            return arith.divf(acc, count)

        return [maps_generic([counts] + views, [hw] + _view_maps(views), out_shape, elt, body)]
    s = linalg.pooling_nchw_sum(p.padded(x, 0), p.window(elt),
                                outs=[filled(out_shape, elt, 0)], strides=p.strides,
                                dilations=p.dilation)
    return [_divide_by_counts(s, p)]


def _exact_backward(p, grad, x, elt, pick):
    """The gradient of exactly tiling windows: for each kernel offset, one
    all-parallel generic over the output positions writes the strided view of
    the input gradient it owns, ``pick(g, window values, offset)`` with ``g``
    the window's output gradient (each element written once: no zero fill,
    no read-modify-write scatter).

    One nest per offset, unlike col2im (issue 14, compile time): with the
    offset a run-time value (an ``scf.for`` over the offsets; one 6-D
    generic over the (N, C, Ho, KH, Wo, KW) view; an arg-max pass and a
    spreading pass) LeNet's pool1 backward ran 0.27-0.29 ms against 0.21
    (``bench/conv_ops.py``): a constant offset lets LLVM fold the arg-max
    compare, and one generic with an output per offset is not bufferized
    in place (copies)."""
    views = _window_views(x, p) if x is not None else []
    out = empty(p.shape, elt)
    n, c = p.shape[:2]
    kh, kw = p.kernel
    for ky in range(kh):
        for kx in range(kw):
            part = maps_generic([grad] + views, [identity_map(4)] * (1 + len(views)),
                                [n, c] + list(p.out), elt,
                                lambda g, *vals, pos=ky * kw + kx: pick(g, vals, pos))
            out = insert_slice(part, out, [0, 0, ky, kx], [1, 1, kh, kw])
    return out


def _beats(v, m):
    """Whether window value ``v`` becomes the arg-max over the maximum so
    far ``m``: greater, or the first NaN (NaN counts as the maximum, as
    numpy's ``argmax`` and PyTorch's pooling have it; the forward pool's
    maximum is NaN there too).  ``v > m or isnan(v)``, unless ``m`` is NaN."""
    return arith.andi(arith.cmpf(arith.CmpFPredicate.UGT, v, m),
                      arith.cmpf(arith.CmpFPredicate.ORD, m, m))


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
        greater = _beats(v, m)
        return [arith.select(greater, v, m), arith.select(greater, pos, a)]

    return generic([xp, p.window(elt)], [maxv, arg], [_window_map(p), window_map, out_map, out_map],
                   [PARALLEL] * 4 + [REDUCTION] * 2, body)[1]


def _argmax_unrolled(xp, p, out_shape):
    """``_argmax`` for windows of at most UNROLLED_WINDOW elements: one
    all-parallel generic over the windows reading their views of the padded
    input (``_window_views``: de-interleaved columns for strides over 1;
    loops over the output, vectorizable), not a reduction over (ky, kx)
    innermost; the positions as i32 (index: 64-bit lanes).  ResNet's 3x3/2
    stem pool backward, 32x32x32x32 f32, one thread: 3.09 -> 2.39 ms (either
    change alone: 3.0)."""
    views = _window_views(xp, p, float("-inf"))
    i32 = ir.IntegerType.get_signless(32)

    def body(*vals):
        m, arg = scalar_const(elt_of(xp), float("-inf")), arith.constant(i32, 0)
        for pos, v in enumerate(vals[:-1]):
            greater = _beats(v, m)
            m = arith.select(greater, v, m)
            arg = arith.select(greater, arith.constant(i32, pos), arg)
        return [arg]

    init = empty(out_shape, i32)
    return generic(views, [init], _view_maps(views) + [identity_map(4)], [PARALLEL] * 4, body)[0]


def _phase_taps(size, stride, dilation, k, lo, phase):
    """The kernel offsets reaching the input rows ``phase, phase + stride,
    ...`` (of ``size``): ``(k_i, shift)`` with ``oy = q + shift`` the window
    of input row ``q * stride + phase`` at offset ``k_i`` (``oy * stride -
    lo + k_i * dilation``), and that phase's row count."""
    rows = (size - phase + stride - 1) // stride
    taps = [(ki, (phase + lo - ki * dilation) // stride) for ki in range(k)
            if (phase + lo - ki * dilation) % stride == 0]
    return taps, rows


def _gather_backward(p, grad, arg, shape, elt, pick):
    """The input gradient of overlapping (or gapped) windows as a gather:
    input rows and columns split by their phase modulo the strides; for each
    phase (py, px) the kernel offsets that reach it are fixed, and the window
    holding offset (ky, kx) is the phase position shifted by a constant
    (``_phase_taps``).  One all-parallel generic per phase sums ``pick(g,
    a, pos)`` (``g`` the window's gradient, ``a`` its arg-max, ``pos`` the
    offset's ``ky * KW + kx``; ``arg`` None: ``a`` unused) over those
    offsets in row-major order, reading unit-stride views of ``grad`` (and
    ``arg``) padded with zeros past the windows, and writes the phase's
    strided view of the input gradient: each element written once, no fill
    and no read-modify-write (``_scatter``'s in-place updates over every
    kernel offset)."""
    n, c, h, w = shape
    ho, wo = p.out
    (sh, sw), (dh, dw) = p.strides, p.dilation
    kh, kw = p.kernel
    pt, pl = p.pad[0], p.pad[1]
    out = empty(shape, elt)
    for py in range(min(sh, h)):
        taps_y, qh = _phase_taps(h, sh, dh, kh, pt, py)
        for px in range(min(sw, w)):
            taps_x, qw = _phase_taps(w, sw, dw, kw, pl, px)
            if not taps_y or not taps_x:
                part = filled([n, c, qh, qw], elt, 0)
            else:
                # windows outside [0, Ho) x [0, Wo) read the zero padding
                ys = [s for _, s in taps_y]
                xs = [s for _, s in taps_x]
                lo = [max(0, -min(ys)), max(0, -min(xs))]
                hi = [max(0, qh - 1 + max(ys) - (ho - 1)), max(0, qw - 1 + max(xs) - (wo - 1))]
                sources = [pad(grad, [0, 0] + lo, [0, 0] + hi, 0)]
                if arg is not None:
                    sources.append(pad(arg, [0, 0] + lo, [0, 0] + hi, arith.constant(elt_of(arg), 0)))
                views, positions = [], []
                for ky, oy in taps_y:
                    for kx, ox in taps_x:
                        positions.append(ky * kw + kx)
                        views += [extract_slice(v, [0, 0, oy + lo[0], ox + lo[1]], [n, c, qh, qw])
                                  for v in sources]
                per = len(sources)

                def body(*vals, positions=positions, per=per):
                    acc = None
                    for i, pos in enumerate(positions):
                        a = vals[i * per + 1] if per > 1 else None
                        v = pick(vals[i * per], a, pos)
                        acc = v if acc is None else arith.addf(acc, v)
                    return [acc]

                part = generic(views, [empty([n, c, qh, qw], elt)],
                               [identity_map(4)] * (len(views) + 1), [PARALLEL] * 4, body)[0]
            out = insert_slice(part, out, [0, 0, py, px], [1, 1, sh, sw])
    return out


def _scatter(p, contribs, shape, elt):
    """Adds ``contribs(pos, dest)`` (building a generic that updates the
    strided window slice ``dest``; ``pos`` the row-major kernel offset
    ``ky * KW + kx``, an ``index`` Value) into the padded gradient for every
    kernel offset (``kernel_loops``), then crops the padding."""
    n, c = shape[:2]
    ho, wo = p.out
    (sh, sw), (dh, dw) = p.strides, p.dilation

    def add_offset(ky, kx, gp):
        offsets = [0, 0, scaled_index(ky, dh), scaled_index(kx, dw)]
        dest = extract_slice(gp, offsets, [n, c, ho, wo], [1, 1, sh, sw])
        pos = arith.addi(scaled_index(ky, p.kernel[1]), kx)
        return insert_slice(contribs(pos, dest), gp, offsets, [1, 1, sh, sw])

    gp = kernel_loops(p.kernel, filled(p.padded_shape(), elt, 0), add_offset)
    pt, pl = p.pad[0], p.pad[1]
    return extract_slice(gp, [0, 0, pt, pl], shape)


@lowers("rlx.max_pool2d_backward")
def lower_max_pool2d_backward(op):
    grad, x = op.operands
    shape = shape_of(x)
    gshape = shape_of(grad)
    p = _Pool(op, shape, gshape[2:])
    elt = elt_of(x)
    if _exact(p) and _kernel_pool(p, elt):
        return [_kernel_max_pool_backward(grad, x, p, elt)]
    if _kernel_pool3(p, elt):
        return [_kernel_max_pool3_backward(grad, x, p, elt)]
    if _exact(p) and _unrolled(p):
        def pick(g, vals, own):
            # The first maximum in row-major window order, as _argmax.
            m, arg = scalar_const(elt, float("-inf")), index_value(0)
            for pos, v in enumerate(vals):
                greater = _beats(v, m)
                m = arith.select(greater, v, m)
                arg = arith.select(greater, index_value(pos), arg)
            hit = arith.cmpi(arith.CmpIPredicate.eq, arg, index_value(own))
            return arith.select(hit, g, zero(elt))

        return [_exact_backward(p, grad, x, elt, pick)]
    if _unrolled(p):
        arg = _argmax_unrolled(p.padded(x, float("-inf")), p, gshape)
        return [_gather_backward(p, grad, arg, shape, elt,
                                 lambda g, a, pos: _hit(a, arith.constant(a.type, pos), g, elt))]
    return [_scatter_argmax(p, grad, _argmax(p.padded(x, float("-inf")), p, gshape), shape, elt)]


def _hit(a, pos, g, elt):
    """``g`` where the arg-max ``a`` is ``pos`` (a value of its type), else 0."""
    return arith.select(arith.cmpi(arith.CmpIPredicate.eq, a, pos), g, zero(elt))


def _scatter_argmax(p, grad, arg, shape, elt):
    """The input gradient (``shape``): each window's gradient ``grad`` added
    at its arg-max ``arg`` (index positions in the window), window offset by
    window offset (``_scatter``)."""
    def contrib(pos, dest):
        return generic([grad, arg], [dest], [identity_map(4)] * 3, [PARALLEL] * 4,
                       lambda g, a, acc: [arith.addf(acc, _hit(a, pos, g, elt))])[0]

    return _scatter(p, contrib, shape, elt)


@lowers("rlx.avg_pool2d_backward")
def lower_avg_pool2d_backward(op):
    grad, x = op.operands
    shape = shape_of(x)
    p = _Pool(op, shape, shape_of(grad)[2:])
    elt = elt_of(x)
    if _exact(p) and _kernel_pool(p, elt):
        return [_kernel_backward(grad, [], p, elt, "avg_pool2x2_backward",
                                 lambda g: arith.divf(g, scalar_const(elt, 4)))]
    if _exact(p):
        # Exact windows hold kh*kw data elements each.
        count = scalar_const(elt, p.kernel[0] * p.kernel[1])
        return [_exact_backward(p, grad, None, elt, lambda g, _v, _o: arith.divf(g, count))]
    g = _divide_by_counts(grad, p)
    if _unrolled(p):
        return [_gather_backward(p, g, None, shape, elt, lambda v, _a, _pos: v)]

    def contrib(_pos, dest):
        return generic([g], [dest], [identity_map(4)] * 2, [PARALLEL] * 4,
                       lambda v, acc: [arith.addf(acc, v)])[0]

    return [_scatter(p, contrib, shape, elt)]


# --- issue 14: 2x2 pools as calls of the kernel library ------------------------------

_POOL_KERNELS = threading.local()
POOL_KERNEL_ELEMENT_TYPES = ("f32", "f64")


def pool_kernels_enabled() -> bool:
    return getattr(_POOL_KERNELS, "value", False)


@contextlib.contextmanager
def pool_kernels(enabled: bool):
    """Within it, 2x2 max pools of stride 2 and the backward of 2x2 max and
    average pools are emitted for the pooling kernels
    (``rlx-to-linalg{pool-kernels=true}``, then ``rlx-pool-kernels`` after
    bufferization)."""
    saved, _POOL_KERNELS.value = pool_kernels_enabled(), bool(enabled)
    try:
        yield
    finally:
        _POOL_KERNELS.value = saved


def _kernel_pool(p, elt) -> bool:
    """A pool the kernels take: 2x2 windows, stride 2, no dilation, no
    padding, no ceil-mode overhang (an odd last row or column is not read),
    f32 or f64."""
    return (pool_kernels_enabled() and str(elt) in POOL_KERNEL_ELEMENT_TYPES
            and p.kernel == [2, 2] and p.strides == [2, 2] and p.dilation == [1, 1]
            and not any(p.pad) and not any(p.extra))


def _kernel_pool3(p, elt) -> bool:
    """A pool the 3x3 kernels take: ResNet's stem pool, 3x3 windows of
    stride 2 and padding 1 over an even number of rows and columns (the
    padded input then has the 2 * Wo + 2 columns the kernel reads), f32 or
    f64."""
    return (pool_kernels_enabled() and str(elt) in POOL_KERNEL_ELEMENT_TYPES
            and p.kernel == [3, 3] and p.strides == [2, 2] and p.dilation == [1, 1]
            and p.pad == [1, 1, 1, 1] and not any(p.extra)
            and p.shape[2] % 2 == 0 and p.shape[3] % 2 == 0)


def _kernel_max_pool(x, p, out_shape, elt):
    """``linalg.pooling_nchw_max {gradir.kernel}`` (of the input padded with
    -inf for the 3x3 kernel): a named op, which elementwise fusion leaves
    alone; lowered as any pooling op when no ``rlx-pool-kernels`` replaces
    it."""
    init = filled(out_shape, elt, float("-inf"))
    y = linalg.pooling_nchw_max(x, p.window(elt), outs=[init], strides=[2, 2],
                                dilations=[1, 1])
    _compat.defining_op(y).attributes["gradir.kernel"] = ir.UnitAttr.get()
    return y


def _kernel_max_pool_backward(grad, x, p, elt):
    """The max pool's backward for the kernel (``_kernel_backward``): the
    gradient where the window's element is its first maximum, as ``pick``
    in ``lower_max_pool2d_backward``."""
    two_i = index_value(2)

    def body(gv, *vals):
        m, arg = scalar_const(elt, float("-inf")), index_value(0)
        for pos, v in enumerate(vals):
            greater = _beats(v, m)
            m = arith.select(greater, v, m)
            arg = arith.select(greater, index_value(pos), arg)
        own = arith.addi(arith.muli(arith.remui(linalg.IndexOp(2).result, two_i), two_i),
                         arith.remui(linalg.IndexOp(3).result, two_i))
        hit = arith.cmpi(arith.CmpIPredicate.eq, arg, own)
        return arith.select(hit, gv, zero(elt))

    return _kernel_backward(grad, [x] * 4, p, elt, "max_pool2x2_backward", body)


def _kernel_backward(grad, xs, p, elt, kind, value):
    """One ``linalg.generic {gradir.kernel = kind}`` over the input gradient
    (N, C, 2Ho, 2Wo) of 2x2 windows: each element reads its window's output
    gradient (and, ``xs``, the input four times, once per window element:
    maps with ``floordiv``) and yields ``value(g, *window)``.  The kernel
    takes only this form, which elementwise fusion would change: the
    generic sits in an ``scf.execute_region no_inline`` (it is all-parallel:
    fusion would fold it into its consumer), and reads the gradient through
    a ``linalg.copy`` (fusion folds a generic producer of a single use into
    its consumer; the copy is a named op, which it leaves alone;
    ``rlx-pool-kernels`` reads the copy's source and drops it).  The input
    read four times has no producer of that single use.  Without
    ``rlx-pool-kernels`` it lowers to loops (correct, scalar)."""
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    two = ir.AffineConstantExpr.get(2)
    oh, ow = (ir.AffineFloorDivExpr.get(d[i], two) for i in (2, 3))
    g_map = ir.AffineMap.get(4, 0, [d[0], d[1], oh, ow])
    x_maps = [ir.AffineMap.get(4, 0, [d[0], d[1], oh * 2 + a, ow * 2 + b])
              for a in range(2) for b in range(2)][:len(xs)]
    shape = p.shape
    region, block = _execute_region(ir.RankedTensorType.get(shape, elt))
    with ir.InsertionPoint(block):
        g = linalg.copy(grad, outs=[empty(shape_of(grad), elt)])
        (dx,) = generic([g] + list(xs), [empty(shape, elt)],
                        [g_map] + x_maps + [identity_map(4)], [PARALLEL] * 4,
                        lambda gv, *rest: [value(gv, *rest[:len(xs)])])
        _compat.defining_op(dx).attributes["gradir.kernel"] = ir.StringAttr.get(kind)
        ir.Operation.create("scf.yield", operands=[dx])
    return region.results[0]


# Input row 2q + py, column 2t + px of a 3x3 pool of stride 2 and padding 1
# takes, in this order, the gradients of the windows (row, column: "hi" the
# window q + 1 or t + 1, "lo" q or t) whose first maximum is at that
# position: the taps of _gather_backward (its kernel offsets in row-major
# order), the same sums in the same order.
_TAPS3 = {(0, 0): [("lo", "lo", 4)],
          (0, 1): [("lo", "hi", 3), ("lo", "lo", 5)],
          (1, 0): [("hi", "lo", 1), ("lo", "lo", 7)],
          (1, 1): [("hi", "hi", 0), ("hi", "lo", 2), ("lo", "hi", 6), ("lo", "lo", 8)]}
_WINDOWS3 = [("hi", "hi"), ("hi", "lo"), ("lo", "hi"), ("lo", "lo")]


def _kernel_max_pool3_backward(grad, x, p, elt):
    """The backward of a 3x3 max pool of stride 2 and padding 1 for the
    kernel (``_kernel_pool3``): one ``linalg.generic {gradir.kernel =
    "max_pool3x3s2_backward"}`` over the input gradient reading the output
    gradient zero-padded by a row and a column (the window past the last)
    through four maps (the windows "hi"/"lo" of ``_TAPS3``) and the input
    padded with -inf (the forward's buffer) through nine maps per window
    (a window past the last reads window 0: its gradient is 0), each
    element the sum of ``_TAPS3`` for its parity.  In an ``scf.execute_region``
    (as ``_kernel_backward``: fusion leaves it alone); ``rlx-pool-kernels``
    calls ``..._max_pool3x3s2_backward_<elt>(g, xp, dx)``, else its loops
    compute it (correct, scalar)."""
    ho, wo = p.out
    xp = p.padded(x, float("-inf"))
    gp = pad(grad, [0, 0, 0, 0], [0, 0, 1, 1], 0)
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    two = ir.AffineConstantExpr.get(2)
    one = ir.AffineConstantExpr.get(1)
    wy = {"lo": ir.AffineFloorDivExpr.get(d[2], two),
          "hi": ir.AffineFloorDivExpr.get(d[2] + one, two)}
    wx = {"lo": ir.AffineFloorDivExpr.get(d[3], two),
          "hi": ir.AffineFloorDivExpr.get(d[3] + one, two)}
    g_maps = [ir.AffineMap.get(4, 0, [d[0], d[1], wy[a], wx[b]]) for a, b in _WINDOWS3]
    x_maps = [ir.AffineMap.get(4, 0, [d[0], d[1], (wy[a] % ho) * 2 + ky, (wx[b] % wo) * 2 + kx])
              for a, b in _WINDOWS3 for ky in range(3) for kx in range(3)]
    i32 = ir.IntegerType.get_signless(32)
    two_i = index_value(2)

    def body(*vals):
        gs, xs = vals[:4], vals[4:40]
        window = {}
        for w_i, key in enumerate(_WINDOWS3):
            m, arg = scalar_const(elt, float("-inf")), arith.constant(i32, 0)
            for pos, v in enumerate(xs[9 * w_i: 9 * w_i + 9]):
                greater = _beats(v, m)
                m = arith.select(greater, v, m)
                arg = arith.select(greater, arith.constant(i32, pos), arg)
            window[key] = (gs[w_i], arg)
        sums = {}
        for parity, taps in _TAPS3.items():
            acc = None
            for row, col, pos in taps:
                g, a = window[(row, col)]
                hit = arith.cmpi(arith.CmpIPredicate.eq, a, arith.constant(i32, pos))
                v = arith.select(hit, g, zero(elt))
                acc = v if acc is None else arith.addf(acc, v)
            sums[parity] = acc
        py = arith.cmpi(arith.CmpIPredicate.ne, arith.remui(linalg.IndexOp(2).result, two_i),
                        index_value(0))
        px = arith.cmpi(arith.CmpIPredicate.ne, arith.remui(linalg.IndexOp(3).result, two_i),
                        index_value(0))
        return arith.select(py, arith.select(px, sums[(1, 1)], sums[(1, 0)]),
                            arith.select(px, sums[(0, 1)], sums[(0, 0)]))

    shape = p.shape
    region, block = _execute_region(ir.RankedTensorType.get(shape, elt))
    with ir.InsertionPoint(block):
        (dx,) = generic([gp] * 4 + [xp] * 36, [empty(shape, elt)],
                        g_maps + x_maps + [identity_map(4)], [PARALLEL] * 4,
                        lambda *v: [body(*v[:40])])
        _compat.defining_op(dx).attributes["gradir.kernel"] = ir.StringAttr.get(
            "max_pool3x3s2_backward")
        ir.Operation.create("scf.yield", operands=[dx])
    return region.results[0]

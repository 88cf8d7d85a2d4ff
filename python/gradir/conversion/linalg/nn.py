"""Neural-network rlx ops -> linalg.

- conv2d -> a GEMM over packed operands: ``tensor.pad``, an im2col
  ``linalg.generic`` writing the (C*KH*KW, N*OH*OW) matrix (columns padded
  with zeros to a multiple of PACK_COLUMNS), a generic packing the weights to
  (O, C*KH*KW), ``linalg.matmul`` (with ``matmul-kernels``, the kernels'
  ``linalg.contract {gradir.kernel}``; groups: ``linalg.batch_matmul`` over
  the groups), a generic reading the product back as NCHW; per block of images
  in an ``scf.for`` when the im2col matrix is over COL_BLOCK_BYTES (marked
  INDEPENDENT_ITERATIONS: rlx-parallel-loops may run the blocks on threads).  The
  conv weight gradient is the conv2d the VJP rule emits, so the same GEMM;
- conv2d_transpose of stride 1 -> conv2d of the input padded by the
  kernel's reach less the padding, with the kernel flipped and its input
  and output channels swapped; other strides ->
  a GEMM (O*KH*KW x Cin) x (Cin x N*H*W) and col2im (an
  ``scf.for`` over ky and kx around one generic adding the offset's rows into
  the strided view of the padded output: one loop nest for the whole kernel),
  blocked over images like conv2d;
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
- softmax, log_softmax, layer_norm, rms_norm -> reductions and elementwise
  ``linalg.generic`` ops (the statistics are read through projected maps);
- cross_entropy_with_logits, nll_loss -> reduction ``linalg.generic`` ops
  (nll_loss gathers with ``tensor.extract``; a target outside [0, C) that is
  not ``ignore_index`` is clamped: the compiled code cannot raise).
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, scf, tensor

from ... import _compat
from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg

from ...dialects.infer import attributes_of
from .linalg_utils import (PARALLEL, REDUCTION, affine_map, elementwise, elt_of, empty,
                           extract_slice,
                           filled, generic, identity_map, index_value, insert_slice,
                           normalize_axes, numel, pad, reduce_dims, reshape, scalar_const,
                           shape_of, zero)
from .matmul import _execute_region, _kernel_eligible, _kernel_matmul
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


# Convolutions are GEMMs over packed operands (the CPU schedule tiles and
# vectorizes linalg.matmul / linalg.batch_matmul; nothing conv-specific is
# left for convert-linalg-to-loops but the packing copies).  The packed
# matrices' column count is rounded up to a multiple of PACK_COLUMNS with zero
# columns, so the schedule's pad-to-register-tile step is a no-op on them
# (no copy of the large operand); 32 covers every register tile's N (AVX-512
# f32 32, f64 16; AVX2 16 / 8).
PACK_COLUMNS = 32


def _round_up(v, m):
    return -(-v // m) * m


def _d(i):
    return ir.AffineDimExpr.get(i)


def _k(v):
    return ir.AffineConstantExpr.get(v)


def _packed(elt, shape, cols, build):
    """A ``shape[:-1] + [cols]`` tensor whose first ``shape[-1]`` columns
    ``build(dest)`` writes (``dest`` the ``shape`` slice) and whose other
    columns are zero; bufferized in place (one buffer, no copy)."""
    full = list(shape[:-1]) + [cols]
    dest = empty(full, elt)
    extra = cols - shape[-1]
    if extra:
        zeros = filled(list(shape[:-1]) + [extra], elt, 0)
        dest = insert_slice(zeros, dest, [0] * (len(shape) - 1) + [shape[-1]])
    part = build(empty(shape, elt))
    return insert_slice(part, dest, [0] * len(shape))


def _group_index(g, per_group, e):
    """The (group, index in group) exprs of the flat channel ``e``; just
    the index when there is one group (the packed tensors drop the G dim)."""
    if g == 1:
        return [e]
    return [ir.AffineExpr.get_floor_div(e, per_group), e % per_group]


def _regroup(src, out_shape, exprs, elt):
    """``out[exprs(i)] = src[i]``: a copy over ``src``'s own index space into
    ``out_shape`` (the packing of weights; every output element is written)."""
    rank = len(shape_of(src))
    return generic([src], [empty(out_shape, elt)], [identity_map(rank), affine_map(rank, exprs)],
                   [PARALLEL] * rank, lambda v, _o: v)[0]


def _gemm(a, b, elt):
    """(M, K) x (K, N), or per group (G, M, K) x (G, K, N).  The operands come
    straight from packing generics: a reshape next to the matmul would be
    folded into it by linalg-fuse-elementwise-ops (a generic contraction the
    schedule does not match).  With ``matmul-kernels`` a 2-D f32/f64 GEMM is
    the kernels' ``linalg.contract {gradir.kernel}`` (issue 14: the same
    bits as the schedule's register tiles, no padding of M to the tile's
    rows, the kernels' multi-threaded strips; the LeNet step's first call
    0.56-0.59 -> 0.51-0.54 s, its weight gradients at 2 threads on AVX2
    1.27 -> 1.07 ms)."""
    sa, sb = shape_of(a), shape_of(b)
    out = sa[:-1] + sb[-1:]
    if len(sa) == 2 and _kernel_eligible(a, b, elt):
        return _kernel_matmul(a, b, False, False, out, elt)
    if len(sa) == 2:
        return linalg.matmul(a, b, outs=[filled(out, elt, 0)])
    return linalg.batch_matmul(a, b, outs=[filled(out, elt, 0)])


# The weight gradient's form (one "image" over COL_BLOCK_BYTES) builds its
# im2col matrix transposed when the kernel rows are at least this long (and
# longer than the output rows), for the matmul kernels.  bench/conv_ops.py,
# min of 300, two runs each, Intel Xeon, one thread, ms, plain -> transposed:
# LeNet conv1 dw (KW 24) AVX-512 0.59-0.60 -> 0.44-0.46, AVX2 0.67 -> 0.66;
# conv2 dw (KW 8) AVX-512 0.32-0.33 -> 0.36-0.37, AVX2 0.40 -> 0.51 (the
# kernel transposes the rhs panels; the shorter rows save less).
TRANSPOSED_COL_KW = 16


# An im2col matrix larger than this many bytes is built and multiplied in
# blocks of images, so each block stays in the L2 cache between its packing
# and its GEMM.
COL_BLOCK_BYTES = 256 << 10


# A convolution whose one image's im2col matrix is over COL_BLOCK_BYTES but
# at most IMAGE_BLOCK_MAX_BYTES, with at least IMAGE_BLOCK_MIN_PIXELS output
# pixels per image (the GEMM's N), runs a block per image (each GEMM wide
# enough for the kernels' tiles), not per block of input channels (a GEMM
# with K = KH*KW*channels of a block, each block a pass over the output).
# bench/cnn.py's ResNet (3x3 convs, padding 1), one thread, Intel Xeon
# AVX-512, min of runs, ms, channel blocks -> image blocks: 32x32x16x16
# (32 out) 2.18 -> 1.30, 32x64x8x8 (64 out) 1.31 -> 1.22, 16x64x16x16 (64
# out, 590 KB per image) 2.65 -> 2.16; a weight gradient's form (3x3
# "pixels") stays per channel block (1.9 ms; 5.6 as blocks of one image).
IMAGE_BLOCK_MIN_PIXELS = 64
IMAGE_BLOCK_MAX_BYTES = 4 * COL_BLOCK_BYTES


def _bytes(elt):
    return max(1, ir.FloatType(elt).width // 8) if isinstance(elt, ir.FloatType) else 4


def _largest_divisor(n, fits):
    """The largest divisor d of n with fits(d) (at least 1)."""
    return max([d for d in range(1, n + 1) if n % d == 0 and fits(d)] or [1])


def _im2col(xp, g, cg, kh, kw, oh, ow, strides, dilation, pad_columns=True):
    """col[g, (c, ky, kx), (n, oy, ox)] = xp[n, g*Cg + c, oy*sh + ky*dh, ox*sw + kx*dw],
    columns padded with zeros to a multiple of PACK_COLUMNS unless not
    ``pad_columns`` (G dim dropped for one group)."""
    elt = elt_of(xp)
    n = shape_of(xp)[0]
    (sh, sw), (dh, dw) = strides, dilation
    npix = n * oh * ow

    # d: (g, c, ky, kx, n, oy, ox); the two unread shape operands give the
    # loops their extents (the maps below are not projections).
    def build(dest):
        xmap = affine_map(7, [_d(4), _d(0) * cg + _d(1), _d(5) * sh + _d(2) * dh,
                              _d(6) * sw + _d(3) * dw])
        kmap = affine_map(7, [0, 1, 2, 3])
        pmap = affine_map(7, [4, 5, 6])
        omap = affine_map(7, [_d(0)] * (g > 1) + [_d(1) * (kh * kw) + _d(2) * kw + _d(3),
                                                  (_d(4) * oh + _d(5)) * ow + _d(6)])
        return generic([xp, empty([g, cg, kh, kw], elt), empty([n, oh, ow], elt)], [dest],
                       [xmap, kmap, pmap, omap], [PARALLEL] * 7, lambda v, _a, _b, _o: v)[0]

    gdim = [g] if g > 1 else []
    return _packed(elt, gdim + [cg * kh * kw, npix],
                   _round_up(npix, PACK_COLUMNS) if pad_columns else npix, build)


def _im2col_t(xp, cg, kh, kw, oh, ow, strides, dilation):
    """colt[(n, oy, ox), (c, ky, kx)] = xp[n, c, oy*sh + ky*dh, ox*sw + kx*dw]
    (one group, no padding): the im2col matrix transposed, its loops
    ordered so that the innermost (kx) writes its rows contiguously."""
    elt = elt_of(xp)
    n = shape_of(xp)[0]
    (sh, sw), (dh, dw) = strides, dilation
    # d: (n, oy, ox, c, ky, kx)
    xmap = affine_map(6, [_d(0), _d(3), _d(1) * sh + _d(4) * dh, _d(2) * sw + _d(5) * dw])
    pmap = affine_map(6, [0, 1, 2])
    kmap = affine_map(6, [3, 4, 5])
    omap = affine_map(6, [(_d(0) * oh + _d(1)) * ow + _d(2), _d(3) * (kh * kw) + _d(4) * kw + _d(5)])
    return generic([xp, empty([n, oh, ow], elt), empty([cg, kh, kw], elt)],
                   [empty([n * oh * ow, cg * kh * kw], elt)],
                   [xmap, pmap, kmap, omap], [PARALLEL] * 6, lambda v, _a, _b, _o: v)[0]


def _unpack(y, out_shape, g, og):
    """out[n, co, oy, ox] = y[co / Og, co % Og, (n*OH + oy)*OW + ox]."""
    _, _, oh, ow = out_shape
    pix = (_d(0) * oh + _d(2)) * ow + _d(3)
    ymap = affine_map(4, _group_index(g, og, _d(1)) + [pix])
    return _maps_generic([y], [ymap], out_shape, elt_of(y), lambda v: v)


# Marks a loop over blocks of images whose iterations are independent: each
# writes only its own images' slice of the loop's result, from values
# computed in the iteration (no other loop-carried value).  The CPU pipeline
# may run such a loop's iterations on its threads (rlx-parallel-loops,
# threads > 1), each computing its elements as one thread would.
INDEPENDENT_ITERATIONS = "gradir.independent_iterations"


def _image_blocks(x, nb: int, out_shape, block) -> ir.Value:
    """``out[n0:n0+nb] = block(x[n0:n0+nb])`` for n0 = 0, nb, ..., an
    ``scf.for`` carrying the output (empty), marked INDEPENDENT_ITERATIONS
    (``block`` builds, at the loop body's insertion point, the block's
    images of the output from those of ``x``, and nothing else)."""
    n, *rest = shape_of(x)
    loop = scf.ForOp(index_value(0), index_value(n), index_value(nb),
                     [empty(out_shape, elt_of(x))])
    loop.operation.attributes[INDEPENDENT_ITERATIONS] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        n0 = loop.induction_variable
        part = block(extract_slice(x, [n0] + [0] * len(rest), [nb] + rest))
        scf.YieldOp([insert_slice(part, loop.inner_iter_args[0], [n0] + [0] * len(rest))])
    _iteration_local(loop.operation)
    return loop.results[0]


# Marks the tensor.empty ops of an INDEPENDENT_ITERATIONS loop's body.
# Without it, CSE merged such an empty with an identical one before the loop
# (say, the body's accumulator, 64x288, with another convolution's packed
# weights), one-shot bufferization then gave every iteration that outer
# buffer, and the iterations run on two threads shared it: the weight
# gradients of bench/cnn.py's second residual block were wrong at threads=2
# (rel. error ~1, a different one each run).  An attribute makes them
# different ops for CSE: each iteration allocates its own.
ITERATION_LOCAL = "gradir.iteration_local"


def _iteration_local(loop: ir.Operation) -> None:
    for op in _compat.collect_ops(loop, lambda o: o.name == "tensor.empty"):
        op.attributes[ITERATION_LOCAL] = ir.UnitAttr.get()


def _conv(xp, w, out_shape, strides, dilation, groups):
    """NCHW x OIHW convolution of the padded input ``xp`` (no padding left),
    as a GEMM per group over the im2col matrix:

        col[g, (c, ky, kx), (n, oy, ox)] = xp[n, g*Cg + c, oy*sh + ky*dh, ox*sw + kx*dw]
        y[g, o, (n, oy, ox)] = sum_k w[g*Og + o, k] * col[g, k, (n, oy, ox)]

    (G dims dropped for one group), then ``y`` read back as NCHW (a copy that
    elementwise consumers fuse into).  With one group, an im2col matrix over
    COL_BLOCK_BYTES is built and multiplied per block of images (an scf.for
    writing the output's slices) when a block of at least two images fits."""
    elt = elt_of(xp)
    n, _, hp, wp = shape_of(xp)
    o, cg, kh, kw = shape_of(w)
    g = groups
    og = o // g
    _, _, oh, ow = out_shape
    kk = cg * kh * kw
    npix = n * oh * ow
    if npix == 0 or kk == 0:
        return filled(out_shape, elt, 0)
    gdim = [g] if g > 1 else []
    wm = _regroup(w, gdim + [og, kk], _group_index(g, og, _d(0))
                  + [_d(1) * (kh * kw) + _d(2) * kw + _d(3)], elt)
    eb = _bytes(elt)
    per_image = kk * oh * ow * eb
    if g > 1 or kk * _round_up(npix, PACK_COLUMNS) * eb <= COL_BLOCK_BYTES:
        col = _im2col(xp, g, cg, kh, kw, oh, ow, strides, dilation)
        return _unpack(_gemm(wm, col, elt), out_shape, g, og)
    nb = _largest_divisor(n, lambda d: d * per_image <= max(COL_BLOCK_BYTES, per_image))
    # (with the kernels, a block's GEMM at least IMAGE_BLOCK_MIN_PIXELS wide:
    # a weight gradient's form, 2 images of 3x3 "pixels" per block, ran
    # 64x32x8x8 at 2.24 ms against 1.33 per block of channels)
    wide = nb * oh * ow >= IMAGE_BLOCK_MIN_PIXELS or not _kernel_eligible(wm, wm, elt)
    if wide and (per_image * min(n, 2) <= COL_BLOCK_BYTES or (
            n >= 2 and oh * ow >= IMAGE_BLOCK_MIN_PIXELS
            and per_image <= IMAGE_BLOCK_MAX_BYTES)):
        # Blocks of nb images: out[n0:n0+nb] = unpack(wm @ col(xp[n0:n0+nb])).

        def block(xs):
            col = _im2col(xs, 1, cg, kh, kw, oh, ow, strides, dilation)
            return _unpack(_gemm(wm, col, elt), [nb, o, oh, ow], 1, o)
        return _image_blocks(xp, nb, out_shape, block)
    # One image's matrix over the budget (the weight gradient's form: few
    # large "images").  Without the kernels in one piece: blocks of input
    # channels accumulating the schedule's GEMM were measured slower there
    # (LeNet conv1 dw 0.82 ms against 0.45 ms in one piece; bench/conv_ops.py);
    # with them per block of channels (_conv_channel_blocks) unless the
    # kernel rows are long.
    if kw >= TRANSPOSED_COL_KW and kw > ow and _kernel_eligible(wm, wm, elt):
        # With two images or more, per block of channels and per half of
        # the images, the blocks' matrices transposed (below).  bench/cnn.py's
        # 32-channel weight gradients (32 "images" of 32 channels of 18x18,
        # a 16x16 kernel, 3x3 "pixels"; a 9.4 MB matrix in one piece), Intel
        # Xeon AVX-512, min of 300, ms, one piece -> blocks: 1 thread 1.92 ->
        # 1.52, 2 threads 1.10 -> 0.95.  One image keeps the one piece: its
        # blocks give the threads nothing (LeNet's conv1 weight gradient,
        # bench/conv_ops.py: 1 thread 0.42 -> 0.32, but 2 threads 0.35 ->
        # 0.40, the piece's packing generic no longer run on both).
        if n >= 2:
            blocked = _conv_channel_blocks(xp, wm, out_shape, (kh, kw), strides, dilation,
                                           transposed=True)
            if blocked is not None:
                return blocked
        # With the kernels and long kernel rows: the matrix transposed,
        # (N*OH*OW, C*KH*KW), whose rows are runs of KW contiguous input
        # elements (the other layout's rows are runs of OW, 5 in LeNet's
        # weight gradients), read by the kernel as a transposed rhs in
        # place (the same FMA chains, the same bits).
        colt = _im2col_t(xp, cg, kh, kw, oh, ow, strides, dilation)
        npix = shape_of(colt)[0]
        return _unpack(_kernel_matmul(wm, colt, False, True, [o, npix], elt), out_shape, 1, o)
    if _kernel_eligible(wm, wm, elt):
        blocked = _conv_channel_blocks(xp, wm, out_shape, (kh, kw), strides, dilation)
        if blocked is not None:
            return blocked
    col = _im2col(xp, 1, cg, kh, kw, oh, ow, strides, dilation)
    return _unpack(_gemm(wm, col, elt), out_shape, 1, o)


def _conv_channel_blocks(xp, wm, out_shape, kernel, strides, dilation, transposed=False):
    """The weight gradient's form with the kernels: the im2col matrix built
    and multiplied per block of ``cb`` input channels (rows of the matrix,
    K of the GEMM), each block's product added to the last by the kernel (C
    read: every element's FMA chain goes on in the same K order, the same
    bits as in one piece), so each block stays in the L2 cache between its
    packing and its GEMM; and, with two images or more, per half of the
    images (an INDEPENDENT_ITERATIONS loop: the threads' share; the
    channel blocks' GEMMs are too small for the kernels' strips).  The
    matrix's columns are not padded (the kernels mask the last tile).
    LeNet's conv2 weight gradient (6 images, 64 channels of 8x8, 4096 x 150
    in one piece; bench/conv_ops.py, min of 300): AVX2 0.48 -> 0.34 ms at 1
    thread, 0.36 -> 0.20 at 2; AVX-512 0.33 -> 0.32 and 0.33 -> 0.17.
    ``transposed``: each block's matrix built transposed (``_im2col_t``:
    rows of KW contiguous input elements, where the usual layout's are runs
    of OW) and read by the kernel as a transposed rhs (the same K order,
    the same bits).  None when one block of channels would hold them all."""
    elt = elt_of(xp)
    n, cg, hp, wp = shape_of(xp)
    o = shape_of(wm)[0]
    _, _, oh, ow = out_shape
    kh, kw = kernel
    nb = _largest_divisor(n, lambda d: 2 * d <= n) if n >= 2 else n
    cb = _largest_divisor(cg, lambda d: d * kh * kw * nb * oh * ow * _bytes(elt)
                          <= COL_BLOCK_BYTES)
    if cb >= cg:
        return None

    def product(xs):
        npix = nb * oh * ow
        loop = scf.ForOp(index_value(0), index_value(cg), index_value(cb),
                         [filled([o, npix], elt, 0)])
        with ir.InsertionPoint(loop.body):
            c0 = loop.induction_variable
            part = extract_slice(xs, [0, c0, 0, 0], [nb, cb, hp, wp])
            if transposed:
                col = _im2col_t(part, cb, kh, kw, oh, ow, strides, dilation)
            else:
                col = _im2col(part, 1, cb, kh, kw, oh, ow, strides, dilation, pad_columns=False)
            ws = extract_slice(wm, [0, _scaled(c0, kh * kw)], [o, cb * kh * kw])
            scf.YieldOp([_kernel_matmul(ws, col, False, transposed, [o, npix], elt,
                                        acc=loop.inner_iter_args[0])])
        return _unpack(loop.results[0], [nb, o, oh, ow], 1, o)

    return product(xp) if nb == n else _image_blocks(xp, nb, out_shape, product)


@lowers("rlx.conv2d")
def lower_conv2d(op):
    x, w = op.operands
    strides, (pt, pl, pb, pr), dilation, groups = _conv_geometry(op)
    xp = pad(x, [0, 0, pt, pl], [0, 0, pb, pr], 0)
    return [_conv(xp, w, shape_of(op.results[0].type), strides, dilation, groups)]


def _kernel_loops(kernel, init, body):
    """``body(ky, kx, acc) -> acc'`` for every kernel offset (ky, kx) in
    row-major order, as an ``scf.for`` over ky around one over kx carrying
    the tensor ``init`` (``ky``/``kx`` are ``index`` Values): one copy of the
    body's loop nest for the whole kernel, not one per offset (issue 14,
    compile time: each nest costs MLIR passes, LLVM optimization and code
    generation)."""
    kh, kw = kernel
    outer = scf.ForOp(index_value(0), index_value(kh), index_value(1), [init])
    with ir.InsertionPoint(outer.body):
        inner = scf.ForOp(index_value(0), index_value(kw), index_value(1),
                          [outer.inner_iter_args[0]])
        with ir.InsertionPoint(inner.body):
            scf.YieldOp([body(outer.induction_variable, inner.induction_variable,
                              inner.inner_iter_args[0])])
        scf.YieldOp([inner.results[0]])
    return outer.results[0]


def _scaled(i, factor):
    return i if factor == 1 else arith.muli(i, index_value(factor))


def _col2im(cols, out_p, g, og, kernel, hw, strides, dilation):
    """``out_p[n, g*Og + o, y*sh + ky*dh, x*sw + kx*dw] += cols[g, (o, ky, kx), (n, y, x)]``
    for every kernel offset (``_kernel_loops``): the offset's rows of
    ``cols`` (the strided row view ``cols[g, ky*KW + kx :: KH*KW]``) added
    into the strided view of ``out_p`` they reach."""
    (kh, kw), (h, wd), (sh, sw), (dh, dw) = kernel, hw, strides, dilation
    nb, cout = shape_of(out_p)[:2]
    grouped = g > 1
    ncols = shape_of(cols)[-1]
    cmap = affine_map(4, _group_index(g, og, _d(1)) + [(_d(0) * h + _d(2)) * wd + _d(3)])

    def add_offset(ky, kx, acc):
        row = arith.addi(_scaled(ky, kw), kx)
        rows = extract_slice(cols, [0] * grouped + [row, 0], [g] * grouped + [og, ncols],
                             [1] * grouped + [kh * kw, 1])
        offsets = [0, 0, _scaled(ky, dh), _scaled(kx, dw)]
        dest = extract_slice(acc, offsets, [nb, cout, h, wd], [1, 1, sh, sw])
        upd = generic([rows], [dest], [cmap, identity_map(4)], [PARALLEL] * 4,
                      lambda v, a: [arith.addf(a, v)])[0]
        return insert_slice(upd, acc, offsets, [1, 1, sh, sw])

    return _kernel_loops(kernel, out_p, add_offset)


# conv2d_transpose of stride 1 as a conv2d (below) from this many output
# channels (the GEMM's rows).
FLIPPED_MIN_CHANNELS = 16


@lowers("rlx.conv2d_transpose")
def lower_conv2d_transpose(op):
    """A GEMM per group, then col2im:

        cols[g, (o, ky, kx), (n, y, x)] = sum_c w[g*Cg + c, o, ky, kx] * x[n, g*Cg + c, y, x]
        out_p[n, g*Og + o, y*sh + ky*dh, x*sw + kx*dw] += cols[g, (o, ky, kx), (n, y, x)]

    (one strided slice update of the padded output per kernel offset), then
    the padding cropped; output_padding rows/columns no window reaches stay 0.
    When ``cols`` is over COL_BLOCK_BYTES, per block of images (an scf.for)."""
    x, w = op.operands
    (sh, sw), (pt, pl, pb, pr), (dh, dw), groups = _conv_geometry(op)
    n, cin, h, wd = shape_of(x)
    _, og, kh, kw = shape_of(w)
    out_shape = shape_of(op.results[0].type)
    cout = out_shape[1]
    elt = elt_of(x)
    g = groups
    cg = cin // g
    kk = og * kh * kw
    npix = n * h * wd
    hf, wf = (h - 1) * sh + dh * (kh - 1) + 1, (wd - 1) * sw + dw * (kw - 1) + 1
    hp, wp = max(hf, pt + out_shape[2]), max(wf, pl + out_shape[3])
    if npix == 0 or cg == 0 or kk == 0:
        return [filled(out_shape, elt, 0)]
    # Stride 1: the convolution of the input padded by the kernel's reach
    # less the padding with the kernel flipped and its channels swapped
    # (conv2d's GEMMs over im2col blocks, no col2im passes over the output).
    # bench/cnn.py's 3x3 convs' input gradients, one thread, Intel Xeon
    # AVX-512, min of runs: 32x32x16x16 1.81 -> 1.57 ms, 32x64x8x8 1.53 -> 1.35.
    # Only where that convolution multiplies few padding zeros (its output
    # no larger than the input by a quarter: 3x3 convs of padding 1) and
    # has rows enough for the GEMM's register tiles: LeNet's conv2 input
    # gradient (16 -> 6 channels, 8x8 -> 12x12) ran 0.29 ms with col2im,
    # 1.64 ms so.
    flipped = [dh * (kh - 1) - pt, dw * (kw - 1) - pl,
               out_shape[2] - h + pt, out_shape[3] - wd + pl]
    if ((sh, sw) == (1, 1) and min(flipped) >= 0 and cout >= FLIPPED_MIN_CHANNELS
            and 4 * out_shape[2] * out_shape[3] <= 5 * h * wd):
        gi = _group_index(g, cg, _d(0))
        # wf[g*Og + o, c, KH-1-ky, KW-1-kx] = w[g*Cg + c, o, ky, kx]
        wf = _regroup(w, [cout, cg, kh, kw],
                      [(gi[0] * og + _d(1)) if g > 1 else _d(1), gi[-1],
                       _k(kh - 1) - _d(2), _k(kw - 1) - _d(3)], elt)
        xp = pad(x, [0, 0, flipped[0], flipped[1]], [0, 0, flipped[2], flipped[3]], 0)
        return [_conv(xp, wf, out_shape, [1, 1], [dh, dw], g)]
    gdim = [g] if g > 1 else []
    # wm[g, (o, ky, kx), c] = w[g*Cg + c, o, ky, kx]; d: (ci, o, ky, kx)
    gi = _group_index(g, cg, _d(0))
    wm = _regroup(w, gdim + [kk, cg], gi[:-1] + [_d(1) * (kh * kw) + _d(2) * kw + _d(3), gi[-1]],
                  elt)

    def block(xb, nb):
        """The output of the ``nb`` images ``xb``."""
        bpix = nb * h * wd

        # xm[g, c, (n, y, x)] = x[n, g*Cg + c, y, x]; d: (n, ci, y, x)
        def build_x(dest):
            omap = affine_map(4, _group_index(g, cg, _d(1))
                              + [(_d(0) * h + _d(2)) * wd + _d(3)])
            return generic([xb], [dest], [identity_map(4), omap], [PARALLEL] * 4,
                           lambda v, _o: v)[0]

        xm = _packed(elt, gdim + [cg, bpix], _round_up(bpix, PACK_COLUMNS), build_x)
        cols = _gemm(wm, xm, elt)                                  # ([G,] Og*KH*KW, cols)
        out_p = _col2im(cols, filled([nb, cout, hp, wp], elt, 0), g, og, (kh, kw), (h, wd),
                        (sh, sw), (dh, dw))
        return extract_slice(out_p, [0, 0, pt, pl], [nb] + out_shape[1:])

    # Blocks of images whose GEMM product (the cols matrix) stays in L2, as
    # for conv2d's im2col.
    per_image = g * kk * h * wd * _bytes(elt)
    if npix and per_image * n > COL_BLOCK_BYTES and per_image * min(n, 2) <= COL_BLOCK_BYTES:
        nb = _largest_divisor(n, lambda d: d * per_image <= COL_BLOCK_BYTES)
        return [_image_blocks(x, nb, out_shape, lambda xs: block(xs, nb))]
    return [block(x, n)]


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
    xp = p.padded(x, float("-inf"))
    if _unrolled(p):
        views = _window_views(xp, p, float("-inf"))

        def body(*vals):
            m = vals[0]
            for v in vals[1:]:
                m = arith.maximumf(m, v)
            return m

        return [_maps_generic(views, _view_maps(views), out_shape, elt, body)]
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

        return [_maps_generic([counts] + views, [hw] + _view_maps(views), out_shape, elt, body)]
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
            part = _maps_generic([grad] + views, [identity_map(4)] * (1 + len(views)),
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
    kernel offset (``_kernel_loops``), then crops the padding."""
    n, c = shape[:2]
    ho, wo = p.out
    (sh, sw), (dh, dw) = p.strides, p.dilation

    def add_offset(ky, kx, gp):
        offsets = [0, 0, _scaled(ky, dh), _scaled(kx, dw)]
        dest = extract_slice(gp, offsets, [n, c, ho, wo], [1, 1, sh, sw])
        pos = arith.addi(_scaled(ky, p.kernel[1]), kx)
        return insert_slice(contribs(pos, dest), gp, offsets, [1, 1, sh, sw])

    gp = _kernel_loops(p.kernel, filled(p.padded_shape(), elt, 0), add_offset)
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

        def pick(g, a, pos):
            hit = arith.cmpi(arith.CmpIPredicate.eq, a, arith.constant(a.type, pos))
            return arith.select(hit, g, zero(elt))

        return [_gather_backward(p, grad, arg, shape, elt, pick)]
    arg = _argmax(p.padded(x, float("-inf")), p, gshape)

    def contrib(pos, dest):
        def body(g, a, acc):
            hit = arith.cmpi(arith.CmpIPredicate.eq, a, pos)
            return [arith.addf(acc, arith.select(hit, g, zero(elt)))]

        return generic([grad, arg], [dest], [identity_map(4)] * 3, [PARALLEL] * 4, body)[0]

    return [_scatter(p, contrib, shape, elt)]


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


def _kernel_max_pool(x, p, out_shape, elt):
    """``linalg.pooling_nchw_max {gradir.kernel}``: a named op, which
    elementwise fusion leaves alone; lowered as any pooling op when no
    ``rlx-pool-kernels`` replaces it."""
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

"""Convolution rlx ops -> linalg.

With ``rlx-to-linalg{direct-convolutions=true}`` (the GPU pipeline) both
ops are one generic over the whole batch instead (``conv_direct``); the
forms below are the CPU's:

- conv2d -> a GEMM over packed operands: ``tensor.pad``, an im2col
  ``linalg.generic`` writing the (C*KH*KW, N*OH*OW) matrix (columns padded
  with zeros to a multiple of PACK_COLUMNS), a generic packing the weights to
  (O, C*KH*KW), ``linalg.matmul`` (with ``matmul-kernels``, the kernels'
  ``linalg.contract {gradir.kernel}``; groups: ``linalg.batch_matmul`` over
  the groups), a generic reading the product back as NCHW; per block of images
  in an ``scf.for`` when the im2col matrix is over COL_BLOCK_BYTES (marked
  INDEPENDENT_ITERATIONS: rlx-parallel-loops may run the blocks on threads),
  each block padding its own images (PAD_PER_BLOCK).  The
  conv weight gradient is the conv2d the VJP rule emits, so the same GEMM;
- with the kernels, conv2d of one group, stride 1 and at least
  IMAGE_BLOCK_MIN_PIXELS output pixels per image -> the implicit-GEMM
  kernel's marked generic (``_conv_kernel``, rlx-conv-kernels,
  ``cpu/conv_kernels.py``): the rhs panels packed from the padded images,
  no im2col matrix, no read back as NCHW, per block of images of at most
  CONV_KERNEL_BLOCK_PIXELS output pixels (INDEPENDENT_ITERATIONS), each
  padding its own images.  bench/cnn.py's convs, f32, one thread, AMD EPYC
  Zen 5 (load 3-9), thread CPU time, min of 40 paired, im2col GEMM ->
  kernel: 32x32x16x16 (32 out) 0.765 -> 0.722 ms, 32x64x8x8 (64 out)
  0.806 -> 0.721, the stem 32x3x32x32 (32 out) 0.430 -> 0.380; f64 (min
  of 30) 1.533 -> 1.508, 1.435 -> 1.355, 0.826 -> 0.717; the same bits;
  blocks of 1024 / 256 pixels instead of 4096: 16x16 0.98x / 1.03x the
  im2col GEMM's time, the stem 0.89x / 0.86x (0.78x at 4096);
- with the kernels, the weight gradient's form (an image's im2col matrix
  over the budget, few output pixels per image) of unit column dilation ->
  the weight gradient kernel's marked generic (``_conv_kernel(...,
  columns=True)``, ``conv_kernels.convw_driver``): one GEMM over the
  columns (n, oy, ox) of every image, written (O, N, OH, OW) and read back
  as NCHW, the whole input padded first; the threads' share is split by
  rlx-conv-kernels (ranges of the columns).  bench/cnn.py's weight
  gradients, f32, AMD EPYC Zen 5 (load 0.4-1.4), min of 200-400 paired,
  ms, blocks of channels / the transposed im2col -> kernel, 1 thread / 2
  threads: 32x32x16x16 (KW 16) 0.898-0.950 -> 0.746-0.788 / 0.484 ->
  0.442, 64x32x8x8 (KW 8) 0.800-0.809 -> 0.704 / 0.443 -> 0.387, the stem
  (KW 32, 27 columns) 0.429-0.436 -> 0.415-0.432 / 0.393 -> 0.307;
  LeNet's conv1 dw 0.207-0.220 -> 0.172-0.186 / 0.207 -> 0.168, conv2 dw
  0.199 -> 0.150 / 0.108 -> 0.091; the same bits;
- conv2d_transpose of stride 1 -> conv2d of the input padded by the
  kernel's reach less the padding, with the kernel flipped and its input
  and output channels swapped; other strides ->
  a GEMM (O*KH*KW x Cin) x (Cin x N*H*W) and col2im (an
  ``scf.for`` over ky and kx around one generic adding the offset's rows into
  the strided view of the padded output: one loop nest for the whole kernel),
  blocked over images like conv2d.

Where a convolution's time goes (bench/cnn.py's 32x32x16x16, 32 -> 32
channels, one thread, AMD EPYC Zen 5, perf record): the kernel 74%
(~250 GFLOP/s, the GEMM's own rate), the im2col generic 11%, the padding
3.5% (before PAD_PER_BLOCK), the read back as NCHW 2%.  Measured and not
taken (min of 30-40 paired, thread CPU time, load 3-5): the im2col built
and multiplied per panel of output rows inside an image (an scf.for around
the im2col generic and the kernel's contraction, the panel in L1/L2), 2, 4
and 8 rows of 16 (32-128 columns): 1.15x, 1.15x and 1.05x the time of one
image's matrix (288 x 256, already in L2; narrower GEMMs pack the weights
again each call), 8x8 images per image instead of per 2: 1.04x; the
kernel writing each image's product straight into the NCHW output (a view:
the kernels then read C, so it is filled with zeros first, as costly as
the copy it saves): 16x16 0.99-1.0x, the stem 1.10x; padding per block of
channels in the weight gradients' form: 0.99-1.01x; the transposed
im2col for kernel rows of 8 (TRANSPOSED_COL_KW 8): 64x32x8x8's weight
gradient 1.035x; conv2d_transpose of stride 2 as four stride-1 conv2d
(sub-pixel: the kernel's taps split by parity, each phase on the
implicit-GEMM kernel, the input padded once, the phases' outputs copied
into the output by strided inserts): bench/cnn.py's 32x64x8x8 ->
32x32x16x16 alone 0.508 -> 0.480 ms (1 thread, AMD EPYC Zen 5, load 9),
its step 15.26 -> 15.47 ms.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ... import _compat
from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...dialects.infer import attributes_of
from .linalg_utils import (PARALLEL, affine_map, elt_of, empty, extract_slice, filled, generic,
                           identity_map, index_value, insert_slice, int_list, kernel_loops,
                           maps_generic, pad, scaled_index, shape_of)
from .conv_direct import (_permuted, direct_conv2d, direct_conv2d_transpose, direct_enabled,
                          result_permutation)
from .matmul import _execute_region, _kernel_eligible, _kernel_matmul
from .registry import lowers


def _conv_geometry(op):
    attrs = attributes_of(op)
    return (int_list(attrs, "strides", [1, 1]), int_list(attrs, "padding", [0, 0, 0, 0]),
            int_list(attrs, "dilation", [1, 1]), attrs.get("groups", 1))


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
    elt = _ielt(xp)
    n = _ishape(xp)[0]
    (sh, sw), (dh, dw) = strides, dilation
    npix = n * oh * ow

    # d: (g, c, ky, kx, n, oy, ox); the two unread shape operands give the
    # loops their extents (the maps below are not projections).
    def build(dest):
        xs, xmap = _images_map(xp, 7, [_d(4), _d(0) * cg + _d(1), _d(5) * sh + _d(2) * dh,
                                       _d(6) * sw + _d(3) * dw])
        kmap = affine_map(7, [0, 1, 2, 3])
        pmap = affine_map(7, [4, 5, 6])
        omap = affine_map(7, [_d(0)] * (g > 1) + [_d(1) * (kh * kw) + _d(2) * kw + _d(3),
                                                  (_d(4) * oh + _d(5)) * ow + _d(6)])
        return generic([xs, empty([g, cg, kh, kw], elt), empty([n, oh, ow], elt)], [dest],
                       [xmap, kmap, pmap, omap], [PARALLEL] * 7, lambda v, _a, _b, _o: v)[0]

    gdim = [g] if g > 1 else []
    return _packed(elt, gdim + [cg * kh * kw, npix],
                   _round_up(npix, PACK_COLUMNS) if pad_columns else npix, build)


def _im2col_t(xp, cg, kh, kw, oh, ow, strides, dilation):
    """colt[(n, oy, ox), (c, ky, kx)] = xp[n, c, oy*sh + ky*dh, ox*sw + kx*dw]
    (one group, no padding): the im2col matrix transposed, its loops
    ordered so that the innermost (kx) writes its rows contiguously."""
    elt = _ielt(xp)
    n = _ishape(xp)[0]
    (sh, sw), (dh, dw) = strides, dilation
    # d: (n, oy, ox, c, ky, kx)
    xs, xmap = _images_map(xp, 6, [_d(0), _d(3), _d(1) * sh + _d(4) * dh,
                                   _d(2) * sw + _d(5) * dw])
    pmap = affine_map(6, [0, 1, 2])
    kmap = affine_map(6, [3, 4, 5])
    omap = affine_map(6, [(_d(0) * oh + _d(1)) * ow + _d(2), _d(3) * (kh * kw) + _d(4) * kw + _d(5)])
    return generic([xs, empty([n, oh, ow], elt), empty([cg, kh, kw], elt)],
                   [empty([n * oh * ow, cg * kh * kw], elt)],
                   [xmap, pmap, kmap, omap], [PARALLEL] * 6, lambda v, _a, _b, _o: v)[0]


def _unpack(y, out_shape, g, og):
    """out[n, co, oy, ox] = y[co / Og, co % Og, (n*OH + oy)*OW + ox]."""
    _, _, oh, ow = out_shape
    pix = (_d(0) * oh + _d(2)) * ow + _d(3)
    ymap = affine_map(4, _group_index(g, og, _d(1)) + [pix])
    return maps_generic([y], [ymap], out_shape, elt_of(y), lambda v: v)


# A convolution run per block of images pads each block's images in its
# iteration (a buffer the block's im2col reads while it is in the L1/L2
# cache), not the whole input before the loop (a fill and a copy of the
# padded input, 1.3 MB for bench/cnn.py's 32x32x16x16, written out of the
# caches and read back by every block).  bench/cnn.py's convs, one thread,
# AMD EPYC Zen 5 (load 3.2), thread CPU time, min of 30 paired, ms, whole ->
# per block: stem 32x3x32x32 (3->32) 0.430 -> 0.388, 32x32x16x16 0.709 ->
# 0.696, its input gradient (the flipped conv2d) 0.709 -> 0.695, the
# stride-2 32->64 0.422 -> 0.415, 32x64x8x8 0.790 -> 0.782; the same bits.
PAD_PER_BLOCK = True


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
    n, *rest = _ishape(x)
    loop = scf.ForOp(index_value(0), index_value(n), index_value(nb),
                     [empty(out_shape, _ielt(x))])
    loop.operation.attributes[INDEPENDENT_ITERATIONS] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        n0 = loop.induction_variable
        part = block(_islice(x, [n0] + [0] * len(rest), [nb] + rest))
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


# The weight gradient's conv2d reads its data, ``permute_dims(x, [1, 0, 2,
# 3])`` (the VJP rule's (C, N, H, W)), from x itself through the maps (a
# ``_Swapped``): padded in x's layout, the marked generics' images map
# swapped, the kernels given a transposed view (rlx-conv-kernels).  Without
# it the permute was a copy of the data before the padding's (0.33 ms of
# bench/cnn.py's ResNet step at one thread, op by op).
SWAPPED_IMAGES = True


class _Swapped:
    """The images ``permute_dims(src, [1, 0, 2, 3])``, never built: read
    from ``src`` through the maps (``_images_map``)."""

    def __init__(self, src):
        self.src = src


def _swapped(x):
    """``x`` as a ``_Swapped`` when it permutes its source's first two dims."""
    src, perm = _permuted(x)
    return _Swapped(src) if SWAPPED_IMAGES and perm == [1, 0, 2, 3] else x


def _swap01(v):
    return [v[1], v[0]] + list(v[2:])


def _ishape(x):
    """The images' NCHW shape (of a ``_Swapped``: its source's, N and C swapped)."""
    return _swap01(shape_of(x.src)) if isinstance(x, _Swapped) else shape_of(x)


def _ielt(x):
    return elt_of(x.src if isinstance(x, _Swapped) else x)


def _islice(x, offsets, sizes):
    """``extract_slice`` of the images (NCHW offsets and sizes)."""
    if isinstance(x, _Swapped):
        return _Swapped(extract_slice(x.src, _swap01(offsets), _swap01(sizes)))
    return extract_slice(x, offsets, sizes)


def _images_map(x, num_dims, exprs):
    """``(tensor, map)`` reading the images at NCHW ``exprs``."""
    if isinstance(x, _Swapped):
        return x.src, affine_map(num_dims, _swap01(exprs))
    return x, affine_map(num_dims, exprs)


def _padded(x, padding):
    """``x`` with zeros around its images: ``padding`` (top, left, bottom,
    right; a ``_Swapped``'s source padded, its H and W the same dims)."""
    pt, pl, pb, pr = padding
    if isinstance(x, _Swapped):
        return _Swapped(_padded(x.src, padding))
    return pad(x, [0, 0, pt, pl], [0, 0, pb, pr], 0)


# With the kernels, a conv2d of one group runs the implicit-GEMM kernel
# (conv_kernels.py: the rhs panels packed from the padded images, no im2col
# matrix): a ``linalg.generic {gradir.conv_kernel = [kh, kw, sh, sw, dh,
# dw]}`` over (n, o, oy, ox, c, ky, kx) that rlx-conv-kernels turns into its
# call once bufferized, per block of images of at most
# CONV_KERNEL_BLOCK_PIXELS output pixels (the threads' share).
CONV_KERNEL = True
CONV_KERNEL_BLOCK_PIXELS = 4096
CONV_KERNEL_ATTR = "gradir.conv_kernel"


# Strides the kernel runs.  Stride 2 (its panels' runs as two masked vectors
# and an even-lane shuffle) measured no faster: bench/cnn.py's 32x32x16x16 ->
# 32x64x8x8, f32, AMD EPYC Zen 5 (load 0.4-1.1), min of 200-400 paired, 1
# thread 0.95-1.01x the im2col GEMM's time, 2 threads 1.00-1.14x; other
# strides pack the panels element by element.
CONV_KERNEL_STRIDES = ((1, 1),)


def _conv_kernel_wanted(wm, elt, strides, pixels) -> bool:
    """Stride 1 and at least IMAGE_BLOCK_MIN_PIXELS output pixels per image
    (the weight gradient's form, 3x3 "pixels", runs its own kernel,
    CONVW_KERNEL: this kernel's GEMMs are per image)."""
    return (CONV_KERNEL and _kernel_eligible(wm, wm, elt) and tuple(strides) in CONV_KERNEL_STRIDES
            and pixels >= IMAGE_BLOCK_MIN_PIXELS)


# The weight gradient's form (an image's im2col matrix over the budget, few
# output pixels per image) with the kernels: one GEMM over the columns of
# every image, its rhs panels packed from the padded images
# (conv_kernels.convw_driver), ``linalg.generic {gradir.wgrad_conv_kernel =
# [kh, kw, sh, sw, dh, dw]}`` writing (O, N, OH, OW), read back as NCHW;
# for the column dilations of CONVW_KERNEL_DILATIONS: 1, runs of KW
# contiguous elements (measured faster from KW 8 to 32, the module's
# docstring); 2 packs element by element, 1.09x the im2col lowering's time
# (bench/cnn.py's 32x32x16x16 x 64x32x8x8 -> 32x64x3x3, f32, one thread).
CONVW_KERNEL = True
CONVW_KERNEL_ATTR = "gradir.wgrad_conv_kernel"
CONVW_KERNEL_DILATIONS = (1,)


def _convw_kernel_wanted(wm, elt, dilation) -> bool:
    return (CONVW_KERNEL and _kernel_eligible(wm, wm, elt)
            and dilation[1] in CONVW_KERNEL_DILATIONS)


def _conv_kernel(xp, wm, out_shape, kernel, strides, dilation, columns=False):
    """out[n, o, oy, ox] = sum wm[o, (c*KH + ky)*KW + kx] * xp[n, c, oy*sh + ky*dh, ox*sw + kx*dw],
    marked for the implicit-GEMM kernel; ``columns``: for the weight
    gradient's kernel (CONVW_KERNEL_ATTR), its output (O, N, OH, OW) read
    back as NCHW."""
    elt = _ielt(xp)
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilation
    # d: (n, o, oy, ox, c, ky, kx)
    wmap = affine_map(7, [_d(1), (_d(4) * kh + _d(5)) * kw + _d(6)])
    xs, xmap = _images_map(xp, 7, [_d(0), _d(4), _d(2) * sh + _d(5) * dh,
                                   _d(3) * sw + _d(6) * dw])
    omap = affine_map(7, [1, 0, 2, 3] if columns else [0, 1, 2, 3])
    n, o, oh, ow = out_shape
    if columns:
        out_shape = [o, n, oh, ow]
    c = _ishape(xp)[1]
    shapes = empty([c, kh, kw], elt)
    smap = affine_map(7, [4, 5, 6])

    def body(wv, xv, _s, acc):
        return arith.addf(acc, arith.mulf(wv, xv))
    # The images read through a linalg.copy (a named op, which elementwise
    # fusion leaves alone; rlx-conv-kernels reads the copy's source and
    # drops it): fusion folds a generic producer of a single use (the
    # weight gradient's permute_dims of its data, a relu before an unpadded
    # conv) into its consumer as a new generic without the mark, left as
    # scalar loops (LeNet-5's step: 1.21 -> 5.73 ms at 1 thread).  In an
    # scf.execute_region no_inline, as the pooling kernels' generics.
    region, block = _execute_region(ir.RankedTensorType.get(out_shape, elt))
    with ir.InsertionPoint(block):
        init = filled(out_shape, elt, 0)
        xc = linalg.copy(xs, outs=[empty(shape_of(xs), elt)])
        y = generic([wm, xc, shapes], [init], [wmap, xmap, smap, omap],
                    [PARALLEL] * 4 + ["reduction"] * 3, body)[0]
        _compat.defining_op(y).attributes[CONVW_KERNEL_ATTR if columns else CONV_KERNEL_ATTR] = \
            ir.DenseI64ArrayAttr.get([kh, kw, sh, sw, dh, dw])
        ir.Operation.create("scf.yield", operands=[y])
    y = region.results[0]
    if columns:
        return maps_generic([y], [affine_map(4, [1, 0, 2, 3])], [n, o, oh, ow], elt,
                            lambda v: v)
    return y


def _conv(x, w, out_shape, strides, dilation, groups, padding=(0, 0, 0, 0)):
    """NCHW x OIHW convolution of the input ``x`` padded by ``padding`` (top,
    left, bottom, right; ``xp`` below), as a GEMM per group over the im2col
    matrix:

        col[g, (c, ky, kx), (n, oy, ox)] = xp[n, g*Cg + c, oy*sh + ky*dh, ox*sw + kx*dw]
        y[g, o, (n, oy, ox)] = sum_k w[g*Og + o, k] * col[g, k, (n, oy, ox)]

    (G dims dropped for one group), then ``y`` read back as NCHW (a copy that
    elementwise consumers fuse into).  With one group, an im2col matrix over
    COL_BLOCK_BYTES is built and multiplied per block of images (an scf.for
    writing the output's slices) when a block of at least two images fits;
    each block then pads its own images (PAD_PER_BLOCK); the other forms pad
    the whole input first.  With the kernels, the implicit-GEMM kernels'
    marked generics instead (CONV_KERNEL, CONVW_KERNEL): no im2col matrix.
    ``x`` may be a ``_Swapped`` (read through the maps)."""
    elt = _ielt(x)
    n = _ishape(x)[0]
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
    if g == 1 and _conv_kernel_wanted(wm, elt, strides, oh * ow):
        nb = _largest_divisor(n, lambda d: d * oh * ow <= CONV_KERNEL_BLOCK_PIXELS)

        def kblock(xs):
            return _conv_kernel(_padded(xs, padding), wm, [_ishape(xs)[0], o, oh, ow],
                                (kh, kw), strides, dilation)
        if nb == n:
            return kblock(x)
        return _image_blocks(x, nb, out_shape, kblock)
    per_image = kk * oh * ow * eb
    if g > 1 or kk * _round_up(npix, PACK_COLUMNS) * eb <= COL_BLOCK_BYTES:
        col = _im2col(_padded(x, padding), g, cg, kh, kw, oh, ow, strides, dilation)
        return _unpack(_gemm(wm, col, elt), out_shape, g, og)
    nb = _largest_divisor(n, lambda d: d * per_image <= max(COL_BLOCK_BYTES, per_image))
    if nb * oh * ow < 2 * IMAGE_BLOCK_MIN_PIXELS:
        # A GEMM under 128 columns wide runs few register tiles per packed
        # lhs block: up to twice the budget for 128.  bench/cnn.py's 64
        # channels of 8x8 (147 KB per image), one thread, AMD EPYC Zen 5
        # (load 6), min of 60 paired: 1 -> 2 images per block, conv 0.883 ->
        # 0.842 ms, its input gradient 0.873 -> 0.837.
        nb = _largest_divisor(n, lambda d: d * per_image <= max(2 * COL_BLOCK_BYTES, per_image)
                              and d * oh * ow <= 2 * IMAGE_BLOCK_MIN_PIXELS)
    # (with the kernels, a block's GEMM at least IMAGE_BLOCK_MIN_PIXELS wide:
    # a weight gradient's form, 2 images of 3x3 "pixels" per block, ran
    # 64x32x8x8 at 2.24 ms against 1.33 per block of channels)
    wide = nb * oh * ow >= IMAGE_BLOCK_MIN_PIXELS or not _kernel_eligible(wm, wm, elt)
    if wide and (per_image * min(n, 2) <= COL_BLOCK_BYTES or (
            n >= 2 and oh * ow >= IMAGE_BLOCK_MIN_PIXELS
            and per_image <= IMAGE_BLOCK_MAX_BYTES)):
        # Blocks of nb images: out[n0:n0+nb] = unpack(wm @ col(xp[n0:n0+nb])),
        # each block's images padded in the block (PAD_PER_BLOCK).

        def block(xs):
            xs = _padded(xs, padding) if PAD_PER_BLOCK else xs
            col = _im2col(xs, 1, cg, kh, kw, oh, ow, strides, dilation)
            return _unpack(_gemm(wm, col, elt), [nb, o, oh, ow], 1, o)
        return _image_blocks(x if PAD_PER_BLOCK else _padded(x, padding), nb, out_shape, block)
    # One image's matrix over the budget (the weight gradient's form: few
    # large "images").  Without the kernels in one piece: blocks of input
    # channels accumulating the schedule's GEMM were measured slower there
    # (LeNet conv1 dw 0.82 ms against 0.45 ms in one piece; bench/conv_ops.py);
    # with them the weight gradient's kernel (CONVW_KERNEL, unit column
    # dilation), else per block of channels (_conv_channel_blocks) unless
    # the kernel rows are long.
    if _convw_kernel_wanted(wm, elt, dilation):
        return _conv_kernel(_padded(x, padding), wm, out_shape, (kh, kw), strides, dilation,
                            columns=True)
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
            blocked = _conv_channel_blocks(x, wm, out_shape, (kh, kw), strides, dilation,
                                           padding, transposed=True)
            if blocked is not None:
                return blocked
        # With the kernels and long kernel rows: the matrix transposed,
        # (N*OH*OW, C*KH*KW), whose rows are runs of KW contiguous input
        # elements (the other layout's rows are runs of OW, 5 in LeNet's
        # weight gradients), read by the kernel as a transposed rhs in
        # place (the same FMA chains, the same bits).
        colt = _im2col_t(_padded(x, padding), cg, kh, kw, oh, ow, strides, dilation)
        npix = shape_of(colt)[0]
        return _unpack(_kernel_matmul(wm, colt, False, True, [o, npix], elt), out_shape, 1, o)
    if _kernel_eligible(wm, wm, elt):
        blocked = _conv_channel_blocks(x, wm, out_shape, (kh, kw), strides, dilation, padding)
        if blocked is not None:
            return blocked
    col = _im2col(_padded(x, padding), 1, cg, kh, kw, oh, ow, strides, dilation)
    return _unpack(_gemm(wm, col, elt), out_shape, 1, o)


def _conv_channel_blocks(x, wm, out_shape, kernel, strides, dilation, padding,
                         transposed=False):
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
    the same bits).  The input ``x`` is padded by ``padding`` as a whole
    (per block of channels, PAD_PER_BLOCK's way, measured no faster:
    bench/cnn.py's weight gradients 0.987-1.011x, AMD EPYC Zen 5, load 3.4).
    None when one block of channels would hold them all."""
    elt = _ielt(x)
    n, cg, h, wd = _ishape(x)
    o = shape_of(wm)[0]
    _, _, oh, ow = out_shape
    kh, kw = kernel
    nb = _largest_divisor(n, lambda d: 2 * d <= n) if n >= 2 else n
    if nb * oh * ow < PACK_COLUMNS // 2:
        # Blocks narrower than half a register tile waste most of its
        # columns: all the images in one block.  bench/cnn.py's stem weight gradient
        # (3 "images" of 3x3 "pixels": N = 9 per block, 27 together), one
        # thread, AMD EPYC Zen 5 AVX-512, min of 300, load 3-5: 0.78 -> 0.44 ms
        # (2 threads 0.79 -> 0.56).
        nb = n
    cb = _largest_divisor(cg, lambda d: d * kh * kw * nb * oh * ow * _bytes(elt)
                          <= COL_BLOCK_BYTES)
    if cb >= cg:
        return None
    x = _padded(x, padding)
    h, wd = _ishape(x)[2:]

    def product(xs):
        npix = nb * oh * ow
        loop = scf.ForOp(index_value(0), index_value(cg), index_value(cb),
                         [filled([o, npix], elt, 0)])
        with ir.InsertionPoint(loop.body):
            c0 = loop.induction_variable
            part = _islice(xs, [0, c0, 0, 0], [nb, cb, h, wd])
            if transposed:
                col = _im2col_t(part, cb, kh, kw, oh, ow, strides, dilation)
            else:
                col = _im2col(part, 1, cb, kh, kw, oh, ow, strides, dilation, pad_columns=False)
            ws = extract_slice(wm, [0, scaled_index(c0, kh * kw)], [o, cb * kh * kw])
            scf.YieldOp([_kernel_matmul(ws, col, False, transposed, [o, npix], elt,
                                        acc=loop.inner_iter_args[0])])
        return _unpack(loop.results[0], [nb, o, oh, ow], 1, o)

    return product(x) if nb == n else _image_blocks(x, nb, out_shape, product)


@lowers("rlx.conv2d")
def lower_conv2d(op):
    x, w = op.operands
    strides, (pt, pl, pb, pr), dilation, groups = _conv_geometry(op)
    if direct_enabled():
        return [direct_conv2d(x, w, shape_of(op.results[0].type), strides, (pt, pl, pb, pr),
                              dilation, groups, result_permutation(op))]
    return [_conv(_swapped(x) if groups == 1 else x, w, shape_of(op.results[0].type), strides,
                  dilation, groups, (pt, pl, pb, pr))]


def _col2im(cols, out_p, g, og, kernel, hw, strides, dilation):
    """``out_p[n, g*Og + o, y*sh + ky*dh, x*sw + kx*dw] += cols[g, (o, ky, kx), (n, y, x)]``
    for every kernel offset (``kernel_loops``): the offset's rows of
    ``cols`` (the strided row view ``cols[g, ky*KW + kx :: KH*KW]``) added
    into the strided view of ``out_p`` they reach."""
    (kh, kw), (h, wd), (sh, sw), (dh, dw) = kernel, hw, strides, dilation
    nb, cout = shape_of(out_p)[:2]
    grouped = g > 1
    ncols = shape_of(cols)[-1]
    cmap = affine_map(4, _group_index(g, og, _d(1)) + [(_d(0) * h + _d(2)) * wd + _d(3)])

    def add_offset(ky, kx, acc):
        row = arith.addi(scaled_index(ky, kw), kx)
        rows = extract_slice(cols, [0] * grouped + [row, 0], [g] * grouped + [og, ncols],
                             [1] * grouped + [kh * kw, 1])
        offsets = [0, 0, scaled_index(ky, dh), scaled_index(kx, dw)]
        dest = extract_slice(acc, offsets, [nb, cout, h, wd], [1, 1, sh, sw])
        upd = generic([rows], [dest], [cmap, identity_map(4)], [PARALLEL] * 4,
                      lambda v, a: [arith.addf(a, v)])[0]
        return insert_slice(upd, acc, offsets, [1, 1, sh, sw])

    return kernel_loops(kernel, out_p, add_offset)


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
    if direct_enabled():
        return [direct_conv2d_transpose(x, w, shape_of(op.results[0].type), (sh, sw),
                                        (pt, pl, pb, pr), (dh, dw), groups)]
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
        return [_conv(x, wf, out_shape, [1, 1], [dh, dw], g, flipped)]
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

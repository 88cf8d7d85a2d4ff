"""Convolutions as one ``linalg.generic`` over the whole batch
(``rlx-to-linalg{direct-convolutions=true}``, the GPU pipeline): no im2col
matrix, no loop over blocks of images; gpu-linalg-to-kernels reads the
generic's operands in place as an implicit GEMM (``kernels/gemm.py``).

- conv2d: ``tensor.pad`` (when padded), then

      out[n, o, y, x] += w[o, c, ky, kx] * xp[n, g*Cg + c, y*sh + ky*dh, x*sw + kx*dw]

  (loops n, o, y, x parallel, c, ky, kx reduction; the weights are the
  first input, so the GEMM's rows are the output channels and its columns
  the pixels, as in the im2col form: stores run along x).  With groups the
  input, the weights and the output get a G dim (``tensor.expand_shape``
  views): loops n, g, o, y, x, c, ky, kx, the G dim a batch of the GEMM.
  The weight gradient (a conv2d of the transposed data and output gradient
  that the VJP rule emits) is the same generic; gpu-fold-transposes folds
  its output gradient's transpose into the indexing map.
- conv2d_transpose (the data gradient): the convolution of the input,
  zero-inserted between its rows and columns when strided (a strided
  ``tensor.insert_slice`` into zeros) and padded by the kernel's reach less
  the padding, with the kernel flipped and its in/out channels swapped,
  both read in place through the generic's indexing maps (the input at
  ``y + (KH-1-ky)*dh``).
  The padding the kernel's reach does not cover is a constant offset in the
  input's map.

f16 and bf16 convolutions (computed in f32, as every op on half types,
with the operands extended by a cast generic before the op) pad, zero-insert
and read their operands in the half type, each extended in the generic's
body (``arith.extf`` before the ``arith.mulf``, f32 accumulation): the
values are the same (extending is exact, and so are zeros), and the
implicit-GEMM kernels see half operands (tensor cores, as for a bf16
matmul) instead of an f32 padded copy beside a half weight (SIMT).

The pad (and the zero-inserting insert_slice) stays a tensor op, so every
path that does not make a GEMM kernel of the generic reads a valid buffer;
gpu-linalg-to-kernels recognises the bufferized form (a zero fill, the
input copied into a static subview) and has the GEMM's tile loads read the
unpadded input instead, masked (``conversion/gpu/padded_inputs.py``).
"""

from __future__ import annotations

import contextlib
import threading

from mlir import ir
from mlir.dialects import arith

from ... import _compat
from .linalg_utils import (PARALLEL, REDUCTION, affine_map, elt_of, filled, generic,
                           identity_map, insert_slice, is_float, is_half, pad, reshape,
                           shape_of, transpose)

__all__ = ["direct_convolutions", "direct_enabled", "direct_conv2d", "direct_conv2d_transpose",
           "result_permutation"]

_DIRECT = threading.local()


def direct_enabled() -> bool:
    return getattr(_DIRECT, "value", False)


@contextlib.contextmanager
def direct_convolutions(enabled: bool):
    """Within it, convolutions lower to one generic over the whole batch
    (``rlx-to-linalg{direct-convolutions=true}``)."""
    saved, _DIRECT.value = direct_enabled(), bool(enabled)
    try:
        yield
    finally:
        _DIRECT.value = saved


def _d(i):
    return ir.AffineDimExpr.get(i)


def _k(v):
    return ir.AffineConstantExpr.get(v)


def _mac(elt):
    """``acc + a * b`` in ``elt``, the accumulator's type; narrower float
    operands (f16/bf16 read by an f32 convolution) extended first."""
    if is_float(elt):
        def mac(a, b, acc):
            a, b = (v if v.type == elt else arith.extf(elt, v) for v in (a, b))
            return arith.addf(acc, arith.mulf(a, b))
        return mac
    return lambda a, b, acc: arith.addi(acc, arith.muli(a, b))


def _narrow(v):
    """The f16/bf16 tensor ``v`` is the f32 extension of, when a cast
    generic computes it (what rlx-to-linalg puts before an op on half
    types: one input, identity maps, body ``yield arith.extf(%in)``), else
    ``v``.  The convolution reads the half tensor and extends it in its
    body."""
    op = _compat.defining_op(v)
    if op is None or op.name != "linalg.generic" or len(op.operands) != 2:
        return v
    src = op.operands[0]
    if not isinstance(src.type, ir.RankedTensorType) or not is_half(src.type):
        return v
    if not isinstance(elt_of(v), ir.F32Type):
        return v
    rank = len(shape_of(v))
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if any(m != identity_map(rank) for m in maps):
        return v
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if (len(ops) != 2 or ops[0].name != "arith.extf"
            or ops[0].operands[0] != block.arguments[0]
            or list(ops[1].operands) != [ops[0].results[0]]):
        return v
    return src


def _permutation_of(op):
    """``perm`` when ``op`` permutes its one operand (``result.shape[k] =
    operand.shape[perm[k]]``): rlx.permute_dims, or what it lowers to (the
    patterns run users first), a linalg.transpose or a copy generic whose
    input map is a permutation; else None."""
    if op is None:
        return None
    if op.name == "rlx.permute_dims":
        rank = len(shape_of(op.operands[0]))
        axes = op.attributes["axes"] if "axes" in op.attributes else None
        return ([int(a) % rank for a in ir.DenseI64ArrayAttr(axes)] if axes is not None
                else list(range(rank))[::-1])
    if op.name == "linalg.transpose":
        return list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    if maps[1] != ir.AffineMap.get_identity(maps[1].n_dims) or not maps[0].is_permutation:
        return None
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 1 or list(ops[0].operands) != [block.arguments[0]]:
        return None
    # out[d] = in[d[m_0], d[m_1], ...]: in dim j is out dim m_j
    m = [ir.AffineDimExpr(e).position for e in maps[0].results]
    perm = [0] * len(m)
    for j, mj in enumerate(m):
        perm[mj] = j
    return perm


def _permuted(v):
    """``(src, perm)`` when ``v`` is a permutation of ``src``
    (``v.shape[k] = src.shape[perm[k]]``), else ``(v, None)``."""
    owner = _compat.defining_op(v)
    perm = _permutation_of(owner)
    return (owner.operands[0], perm) if perm is not None else (v, None)


def _conv_generic(xp, w, out_shape, strides, dilation, groups, offsets=(0, 0),
                  transposed=False, perm=None, out_perm=None, acc=None):
    """``out[n, g*Og + o, y, x] = sum_{c, ky, kx} W(g, o, c, ky, kx) *
    xp[n, g*Cg + c, y*sh + ky*dh + oy, x*sw + kx*dw + ox]`` with ``(oy, ox) =
    offsets`` (with ``perm``, ``xp`` is given as ``src``, ``xp.shape[k] =
    src.shape[perm[k]]``: read through the map, never copied); with
    ``out_perm`` (one group) the generic writes ``out`` permuted by it and a
    ``linalg.transpose`` gives it back (elementwise fusion and canonicalize
    cancel that against the result's permutation: the weight gradient's,
    which then writes its output buffer in place); ``W`` is
    ``w[g*Og + o, c, ky, kx]`` (OIHW) or, ``transposed``,
    ``w[g*Cg + c, o, KH-1-ky, KW-1-kx]`` (IOHW, flipped: the loops run
    over the stored kernel, the input read at ``(KH-1-ky)*dh``).  ``acc``:
    the result's element type (default ``xp``'s; f32 for half operands,
    extended in the body)."""
    elt = acc if acc is not None else elt_of(xp)
    src = xp
    if perm is not None:
        xp_shape = [shape_of(src)[p] for p in perm]
    else:
        xp_shape = shape_of(xp)
    n, cin, hp, wp = xp_shape
    if transposed:
        _, og, kh, kw = shape_of(w)
        cg = cin // groups
    else:
        _, cg, kh, kw = shape_of(w)
        og = shape_of(w)[0] // groups
    g = groups
    _, o, oh, ow = out_shape
    if 0 in (n, o, oh, ow) or cg == 0 or kh * kw == 0:
        return filled(out_shape, elt, 0)
    (sh, sw), (dh, dw), (oy, ox) = strides, dilation, offsets
    mac = _mac(elt)
    if g == 1:
        # d: n, o, y, x | c, ky, kx
        n_d, o_d, y_d, x_d, c_d, ky_d, kx_d = range(7)
        gd = []
        xs, ws, outs = xp, w, list(out_shape)
    else:
        # d: n, g, o, y, x | c, ky, kx
        n_d, g_d, o_d, y_d, x_d, c_d, ky_d, kx_d = range(8)
        gd = [_d(g_d)]
        xs = reshape(xp, [n, g, cg, hp, wp])
        ws = reshape(w, [g, cg, og, kh, kw] if transposed else [g, og, cg, kh, kw])
        outs = [n, g, og, oh, ow]
    rank = 7 + (g > 1)
    if transposed:
        # the loops run over the kernel as stored (every loop dim a plain
        # result of some map, as linalg requires), the input read flipped
        iy = _d(y_d) * sh + _k(oy + (kh - 1) * dh) - _d(ky_d) * dh
        ix = _d(x_d) * sw + _k(ox + (kw - 1) * dw) - _d(kx_d) * dw
        wmap = affine_map(rank, gd + [_d(c_d), _d(o_d), _d(ky_d), _d(kx_d)])
    else:
        iy = _d(y_d) * sh + _d(ky_d) * dh + _k(oy)
        ix = _d(x_d) * sw + _d(kx_d) * dw + _k(ox)
        wmap = affine_map(rank, gd + [_d(o_d), _d(c_d), _d(ky_d), _d(kx_d)])
    xexprs = [_d(n_d)] + gd + [_d(c_d), iy, ix]
    if perm is not None:
        # xp[i0, i1, i2, i3] = src[j] with j[perm[k]] = i[k]
        src_exprs = [None] * 4
        for k, p in enumerate(perm):
            src_exprs[p] = xexprs[k]
        xexprs, xs = src_exprs, src
    xmap = affine_map(rank, xexprs)
    oexprs = [_d(n_d)] + gd + [_d(o_d), _d(y_d), _d(x_d)]
    if out_perm is not None and g == 1:
        oexprs = [oexprs[q] for q in out_perm]
        outs = [outs[q] for q in out_perm]
    omap = affine_map(rank, oexprs)
    iters = [PARALLEL] * (rank - 3) + [REDUCTION] * 3
    out = generic([ws, xs], [filled(outs, elt, 0)], [wmap, xmap, omap], iters,
                  lambda a, b, acc: [mac(a, b, acc)])[0]
    if out_perm is not None and g == 1:
        return transpose(out, sorted(range(4), key=lambda k: out_perm[k]))
    return out if g == 1 else reshape(out, out_shape)


def _half_original(twin):
    """The f16/bf16 op that rlx-to-linalg lowers as ``twin`` (its f32 copy
    on extended operands, which has no users of its own), else None."""
    narrow = [_narrow(v) for v in twin.operands]
    if not narrow or narrow == list(twin.operands):
        return None
    for user, _ in _compat.uses_of(narrow[0]):
        if user.name == twin.name and user != twin and list(user.operands) == narrow:
            return user
    return None


def result_permutation(op):
    """The permutation of ``op``'s result when its only user is a 4-D
    rlx.permute_dims (the weight gradient's form), else None.  Of a half
    type convolution's f32 twin: its original's user (the rounding to the
    half type then sits between the two transposes, which fusion folds,
    so the GEMM's epilogue rounds in place)."""
    uses = _compat.uses_of(op.results[0])
    if not uses:
        original = _half_original(op)
        uses = _compat.uses_of(original.results[0]) if original is not None else []
    if len(uses) != 1:
        return None
    perm = _permutation_of(uses[0][0])
    return perm if perm is not None and len(perm) == 4 else None


def direct_conv2d(x, w, out_shape, strides, padding, dilation, groups, out_perm=None):
    """rlx.conv2d (NCHW x OIHW) as ``tensor.pad`` + one generic
    (``out_perm``: see ``_conv_generic``)."""
    pt, pl, pb, pr = padding
    acc = elt_of(x)
    x, w = _narrow(x), _narrow(w)
    src, perm = _permuted(x) if groups == 1 else (x, None)
    if perm is not None and len(perm) == 4:
        # the weight gradient's data (N and C swapped by the VJP rule): the
        # source padded, read through the permutation (no transposed copy;
        # the same padded buffer as the forward convolution's after CSE)
        low, high = [0] * 4, [0] * 4
        low[perm[2]], low[perm[3]], high[perm[2]], high[perm[3]] = pt, pl, pb, pr
        return _conv_generic(pad(src, low, high, 0), w, out_shape, strides, dilation, groups,
                             perm=perm, out_perm=out_perm, acc=acc)
    xp = pad(x, [0, 0, pt, pl], [0, 0, pb, pr], 0)
    return _conv_generic(xp, w, out_shape, strides, dilation, groups, out_perm=out_perm,
                         acc=acc)


def direct_conv2d_transpose(x, w, out_shape, strides, padding, dilation, groups):
    """rlx.conv2d_transpose (NCHW x IOHW):

        out_p[n, g*Og + o, y*sh + ky*dh, x*sw + kx*dw] +=
            w[g*Cg + c, o, ky, kx] * x[n, g*Cg + c, y, x]
        out = out_p[:, :, pt:, pl:] (output_padding: rows no window reaches are 0)

    as the stride-1 convolution of ``z`` (``x`` with sh-1 zeros between its
    rows, sw-1 between its columns, ``lo`` zero rows/columns before) with
    the flipped kernel: ``out[Y] = sum_ky z[Y + off + ky*dh] *
    w[KH-1-ky]`` where ``lo + pt = off + (KH-1)*dh``."""
    (sh, sw), (pt, pl, _, _), (dh, dw) = strides, padding, dilation
    acc = elt_of(x)
    x, w = _narrow(x), _narrow(w)
    n, cin, h, wd = shape_of(x)
    _, _, kh, kw = shape_of(w)
    _, _, oh, ow = out_shape
    reach_y, reach_x = dh * (kh - 1), dw * (kw - 1)
    lo_y, lo_x = max(0, reach_y - pt), max(0, reach_x - pl)
    off_y, off_x = max(0, pt - reach_y), max(0, pl - reach_x)
    span_y, span_x = (h - 1) * sh + 1, (wd - 1) * sw + 1
    hz = max(lo_y + span_y, oh + off_y + reach_y)
    wz = max(lo_x + span_x, ow + off_x + reach_x)
    if (sh, sw) == (1, 1):
        z = pad(x, [0, 0, lo_y, lo_x], [0, 0, hz - lo_y - span_y, wz - lo_x - span_x], 0)
    else:
        z = insert_slice(x, filled([n, cin, hz, wz], elt_of(x), 0), [0, 0, lo_y, lo_x],
                         [1, 1, sh, sw])
    return _conv_generic(z, w, out_shape, [1, 1], [dh, dw], groups, (off_y, off_x),
                         transposed=True, acc=acc)

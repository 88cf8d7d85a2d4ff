"""Shape rlx ops -> ``tensor`` views and copies, ``linalg.transpose``,
``linalg.broadcast`` and gathers.

- reshape, expand_dims, squeeze, flatten -> ``tensor.collapse_shape`` /
  ``tensor.expand_shape`` (no copy after bufferization);
- permute_dims -> ``linalg.transpose``, or a copy ``linalg.generic`` for rank
  > 2 when the innermost axis stays (elementwise fusion then folds it into
  its generic producer or consumer); broadcast_to -> ``linalg.broadcast``
  (stretched unit dims are collapsed away first);
- concat -> ``tensor.insert_slice`` into a ``tensor.empty``; split and
  strided_slice with positive strides -> ``tensor.extract_slice``; negative
  strides -> a ``linalg.generic`` whose indexing map walks backwards;
- take -> a ``linalg.generic`` gathering with ``tensor.extract``; negative
  indices count from the end, and an index still out of range is clamped;
  in mode "fast" the generic is marked (``mark_index_check``) so that the
  CPU's code checks the indices first and raises, as the interpreter does;
- triu -> a ``linalg.generic`` selecting on ``linalg.index``.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...dialects.infer import attributes_of
from .linalg_utils import (PARALLEL, affine_map, broadcast_to, elt_of, empty, extract_slice, generic,
                           identity_map, index_value, insert_slice, mark_index_check,
                           normalize_axes, numel, reshape, shape_of, transpose, zero)
from .registry import lowers


def _result_shape(op, i=0):
    return shape_of(op.results[i].type)


@lowers("rlx.reshape", "rlx.expand_dims", "rlx.squeeze", "rlx.flatten", promote_half=False)
def lower_reshape(op):
    return [reshape(op.operands[0], _result_shape(op))]


@lowers("rlx.permute_dims", promote_half=False)
def lower_permute_dims(op):
    x = op.operands[0]
    rank = len(shape_of(x))
    axes = attributes_of(op).get("axes")
    perm = list(range(rank))[::-1] if axes is None else normalize_axes(axes, rank)
    if rank > 2 and perm[-1] == rank - 1 and perm != sorted(perm):
        # Rows stay rows: a copy generic, which linalg-fuse-elementwise-ops
        # fuses into its generic consumer or producer (issue 14: the conv
        # weight gradient's NCHW <-> CNHW swaps read and written by the
        # packing generics of its GEMM, not copied on their own).
        return [generic([x], [empty(_result_shape(op), elt_of(x))],
                        [affine_map(rank, [perm.index(j) for j in range(rank)]), identity_map(rank)], [PARALLEL] * rank,
                        lambda v, _o: [v])[0]]
    return [transpose(x, perm)]


@lowers("rlx.broadcast_to", promote_half=False)
def lower_broadcast_to(op):
    return [broadcast_to(op.operands[0], _result_shape(op))]


def _axis(op, rank, default=0):
    axis = attributes_of(op).get("axis")
    return normalize_axes([default] if axis is None else axis, rank)[0]


@lowers("rlx.concat", promote_half=False)
def lower_concat(op):
    shape = _result_shape(op)
    axis = _axis(op, len(shape))
    out = empty(shape, elt_of(op.results[0].type))
    offset = 0
    for x in op.operands:
        offsets = [0] * len(shape)
        offsets[axis] = offset
        if numel(shape_of(x)):
            out = insert_slice(x, out, offsets)
        offset += shape_of(x)[axis]
    return [out]


@lowers("rlx.split", promote_half=False)
def lower_split(op):
    x = op.operands[0]
    rank = len(shape_of(x))
    axis = _axis(op, rank)
    outs, offset = [], 0
    for r in op.results:
        sizes = shape_of(r.type)
        if numel(sizes) == 0:
            outs.append(empty(sizes, elt_of(r.type)))
        else:
            offsets = [0] * rank
            offsets[axis] = offset
            outs.append(extract_slice(x, offsets, sizes))
        offset += sizes[axis]
    return outs


@lowers("rlx.strided_slice", promote_half=False)
def lower_strided_slice(op):
    x = op.operands[0]
    shape = shape_of(x)
    rank = len(shape)
    attrs = attributes_of(op)
    axes = normalize_axes(attrs["axes"], rank)
    strides = attrs.get("strides", [1] * len(axes))
    starts, steps = [0] * rank, [1] * rank
    for a, b, e, s in zip(axes, attrs["begin"], attrs["end"], strides):
        start, _, step = slice(b, e, s).indices(shape[a])
        starts[a], steps[a] = start, step
    out_shape = _result_shape(op)
    elt = elt_of(x)
    if numel(out_shape) == 0:
        return [empty(out_shape, elt)]
    if all(s > 0 for s in steps):
        return [extract_slice(x, starts, out_shape, steps)]
    exprs = [ir.AffineConstantExpr.get(start) + ir.AffineDimExpr.get(i) * step
             for i, (start, step) in enumerate(zip(starts, steps))]
    in_map = ir.AffineMap.get(rank, 0, exprs)
    return generic([x], [empty(out_shape, elt)], [in_map, identity_map(rank)],
                   [PARALLEL] * rank, lambda v, _out: [v])


def _clamp(i, n):
    lo, hi = index_value(0), index_value(n - 1)
    return arith.minsi(arith.maxsi(i, lo), hi)


@lowers("rlx.take", promote_half=False)
def lower_take(op):
    x, indices = op.operands
    attrs = attributes_of(op)
    axis = attrs.get("axis")
    mode = attrs.get("mode", "fast")
    if axis is None:
        x = reshape(x, [numel(shape_of(x))])
        axis = 0
    else:
        axis = normalize_axes(axis, len(shape_of(x)))[0]
    xs = shape_of(x)
    n = xs[axis]
    ind_rank = len(shape_of(indices))
    out_shape = _result_shape(op)
    rank = len(out_shape)
    ind_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(axis + i)
                                          for i in range(ind_rank)])
    elt = elt_of(op.results[0].type)
    if numel(out_shape) == 0:
        return [empty(out_shape, elt)]

    def body(i, _out):
        idx = arith.index_cast(ir.IndexType.get(), i)
        nn = index_value(n)
        if mode == "wrap":
            idx = arith.remsi(arith.addi(arith.remsi(idx, nn), nn), nn)
        else:
            if mode != "clip":  # fast: negative indices count from the end
                neg = arith.cmpi(arith.CmpIPredicate.slt, idx, index_value(0))
                idx = arith.select(neg, arith.addi(idx, nn), idx)
            idx = _clamp(idx, n)
        coords = [linalg.IndexOp(d).result for d in range(axis)]
        coords.append(idx)
        coords += [linalg.IndexOp(axis + ind_rank + d).result
                   for d in range(len(xs) - axis - 1)]
        return [tensor.extract(x, coords)]

    out = generic([indices], [empty(out_shape, elt)], [ind_map, identity_map(rank)],
                  [PARALLEL] * rank, body)
    if mode == "fast":      # (an index still out of range raises at run time on the CPU)
        on = f"on axis {axis}" if attrs.get("axis") is not None else "of the flattened input"
        mark_index_check(out[0], "rlx.take", -n, n, None, f"index out of range [{-n}, {n}) {on}")
    return out


@lowers("rlx.triu", promote_half=False)
def lower_triu(op):
    x = op.operands[0]
    shape = shape_of(x)
    rank = len(shape)
    k = attributes_of(op).get("k", 0)
    elt = elt_of(x)

    def body(v, _out):
        i = linalg.IndexOp(rank - 2).result
        j = linalg.IndexOp(rank - 1).result
        keep = arith.cmpi(arith.CmpIPredicate.sge, arith.subi(j, i), index_value(k))
        return [arith.select(keep, v, zero(elt))]

    return generic([x], [empty(shape, elt)], [identity_map(rank)] * 2,
                   [PARALLEL] * rank, body)

"""Shape aten ops: view/reshape/flatten/unflatten, permute/transpose/t,
expand, cat/stack, split/chunk/unbind, select/slice/narrow, unsqueeze/squeeze,
index_select/index/gather, repeat, tril/triu, and the creation ops whose result does
not depend on their operand's values (zeros_like, new_ones, ...)."""

from __future__ import annotations

import math
import sys

import numpy as np

from gradir.dialects import rlx

from .registry import aten
from ._helpers import concat_many, norm_axes, norm_axis, reshape_to, split_sizes

__all__: list[str] = []


@aten("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
      "aten.view_copy.default", "aten._reshape_alias.default", "aten.flatten.using_ints",
      "aten.unflatten.int", "aten.view.dtype")
def reshape(cx, x, *_):
    if cx.op == "aten.view.dtype":
        raise cx.error("reinterpreting the bits of a tensor (view(dtype)) has no rlx mapping")
    return reshape_to(cx.value(x), cx.out_shape)


@aten("aten.permute.default", "aten.permute_copy.default")
def permute(cx, x, dims):
    v = cx.value(x)
    axes = norm_axes(dims, cx.rank(v))
    return v if axes == list(range(len(axes))) else rlx.permute_dims(v, axes)


@aten("aten.transpose.int", "aten.transpose_copy.int")
def transpose(cx, x, d0, d1):
    v = cx.value(x)
    rank = cx.rank(v)
    axes = list(range(rank))
    d0, d1 = norm_axis(d0, rank), norm_axis(d1, rank)
    if d0 == d1:
        return v
    axes[d0], axes[d1] = axes[d1], axes[d0]
    return rlx.permute_dims(v, axes)


@aten("aten.t.default", "aten.numpy_T.default")
def t(cx, x):
    v = cx.value(x)
    return v if cx.rank(v) < 2 else rlx.permute_dims(v)


@aten("aten.expand.default", "aten.expand_copy.default", "aten.broadcast_to.default",
      "aten.expand_as.default")
def expand(cx, x, *_):
    v = cx.value(x)
    return v if cx.shape(v) == cx.out_shape else rlx.broadcast_to(v, cx.out_shape)


@aten("aten.repeat.default")
def repeat(cx, x, repeats):
    # tile: out[r*s + j] = x[j] per axis -> reshape (1, s0, 1, s1, ...),
    # broadcast to (r0, s0, r1, s1, ...), reshape to the result.
    v = cx.value(x)
    shape = [1] * (len(repeats) - cx.rank(v)) + cx.shape(v)
    inter = [d for s in shape for d in (1, s)]
    full = [d for r, s in zip(repeats, shape) for d in (int(r), s)]
    return reshape_to(rlx.broadcast_to(reshape_to(v, inter), full), cx.out_shape)


@aten("aten.cat.default", "aten.concat.default")
def cat(cx, tensors, dim=0):
    dtype = cx.out_dtype
    vs = [cx.value(t, dtype) for t in tensors if cx.shape(t) != [0]]
    rank = len(cx.out_shape)
    return concat_many(vs, norm_axis(dim, rank))


@aten("aten.stack.default")
def stack(cx, tensors, dim=0):
    dtype = cx.out_dtype
    axis = norm_axis(dim, len(cx.out_shape))
    return concat_many([rlx.expand_dims(cx.value(t, dtype), [axis]) for t in tensors], axis)


def _pieces(cx, x, dim, sizes=None):
    v = cx.value(x)
    axis = norm_axis(dim, cx.rank(v))
    sizes = sizes or [int(o.shape[axis]) for o in cx.out]
    return split_sizes(v, sizes, axis)


@aten("aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default",
      "aten.tensor_split.sections", "aten.split_copy.Tensor",
      "aten.split_with_sizes_copy.default")
def split(cx, x, _sizes, dim=0):
    return _pieces(cx, x, dim)


@aten("aten.unbind.int")
def unbind(cx, x, dim=0):
    axis = norm_axis(dim, cx.rank(x))
    return [rlx.squeeze(p, [axis]) for p in _pieces(cx, x, dim, [1] * len(cx.out))]


def _slice(v, axis, start, end, step=1):
    n = int(v.type.shape[axis])
    start, end, step = slice(start, end, step).indices(n)
    if (start, end, step) == (0, n, 1):
        return v
    return rlx.strided_slice(v, [axis], [start], [end], [step])


@aten("aten.slice.Tensor", "aten.slice_copy.Tensor")
def slice_(cx, x, dim=0, start=None, end=None, step=1):
    v = cx.value(x)
    if end is not None and end >= sys.maxsize:
        end = None
    out = _slice(v, norm_axis(dim, cx.rank(v)), start, end, step)
    if 0 in cx.out_shape:
        raise cx.error("slices with no elements have no rlx mapping")
    return out


@aten("aten.narrow.default")
def narrow(cx, x, dim, start, length):
    v = cx.value(x)
    axis = norm_axis(dim, cx.rank(v))
    start = norm_axis(start, cx.shape(v)[axis])
    return _slice(v, axis, start, start + length)


@aten("aten.select.int", "aten.select_copy.int")
def select(cx, x, dim, index):
    v = cx.value(x)
    axis = norm_axis(dim, cx.rank(v))
    index = norm_axis(index, cx.shape(v)[axis])
    return rlx.squeeze(_slice(v, axis, index, index + 1), [axis])


@aten("aten.unsqueeze.default", "aten.unsqueeze_copy.default")
def unsqueeze(cx, x, dim):
    v = cx.value(x)
    return rlx.expand_dims(v, [norm_axis(dim, cx.rank(v) + 1)])


@aten("aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default",
      "aten.squeeze_copy.dim", "aten.squeeze_copy.dims")
def squeeze(cx, x, dims=None):
    v = cx.value(x)
    shape = cx.shape(v)
    axes = [a for a in norm_axes(dims, len(shape)) if shape[a] == 1]
    return rlx.squeeze(v, axes) if axes else v


@aten("aten.index_select.default")
def index_select(cx, x, dim, index):
    v = cx.value(x)
    return rlx.take(v, cx.value(index), [norm_axis(dim, cx.rank(v))])


_INTEGER = ("torch.int64", "torch.int32")


def _flat_index(cx, parts, shape):
    """The row-major flat position ``sum_k index_k * stride_k`` of integer
    index tensors (constants or Values, broadcast to ``shape``) into axes
    of ``sizes``; ``parts``: (index, size, stride).  rlx has no integer
    arithmetic: a run-time index is computed in f64 (exact below 2**53)
    and cast back to i64.  Negative indices count from the end, as in
    torch."""
    t = cx.torch
    const = np.zeros(shape, dtype=np.int64)
    dynamic = []
    for ix, size, stride in parts:
        if isinstance(ix, np.ndarray):
            const = const + np.where(ix < 0, ix + size, ix) * stride
        elif cx.is_value(ix):
            dynamic.append((ix, size, stride))
        else:
            arr = ix.detach().cpu().numpy().astype(np.int64)
            const = const + np.broadcast_to(np.where(arr < 0, arr + size, arr) * stride, shape)
    if not dynamic:
        return cx.const(np.ascontiguousarray(np.broadcast_to(const, shape)))
    f64 = cx.ir_type(t.float64)
    total = cx.const(np.broadcast_to(const, shape).astype(np.float64))
    zero = cx.scalar(0.0, t.float64)
    for ix, size, stride in dynamic:
        f = rlx.astype(ix, f64)
        f = rlx.where(rlx.less(f, zero), rlx.add(f, cx.scalar(float(size), t.float64)), f)
        if stride != 1:
            f = rlx.multiply(f, cx.scalar(float(stride), t.float64))
        total = rlx.add(total, f)
    if cx.shape(total) != list(shape):
        total = rlx.broadcast_to(total, list(shape))
    return rlx.astype(total, cx.ir_type(t.int64))


@aten("aten.index.Tensor")
def index(cx, x, indices):
    """``x[i0, i1, ...]`` with integer index tensors (and ``:`` between or
    around them): one ``rlx.take`` along one axis, or, for several index
    tensors, of the flat positions into the indexed axes gathered into one
    (``_flat_index``).  The result's axes are placed as torch places them
    (at the first indexed axis when the indexed axes are adjacent, else
    first).  Boolean masks give data-dependent shapes: no mapping."""
    v = cx.value(x)
    rank = cx.rank(v)
    indices = list(indices) + [None] * (rank - len(indices))
    used = [i for i, ix in enumerate(indices) if ix is not None]
    if any(str(cx.dtype(indices[i])) not in _INTEGER for i in used):
        raise cx.error("indexing with a boolean mask (x[mask]) has a data-dependent shape: "
                       "no rlx mapping (torch.where(mask, x, 0) keeps the shape)")
    if len(used) == 1:
        return rlx.take(v, cx.value(indices[used[0]]), [used[0]])
    shape = cx.shape(v)
    bshape = list(np.broadcast_shapes(*[tuple(cx.shape(indices[i])) for i in used]))
    rest = [i for i in range(rank) if i not in used]
    strides = [math.prod(shape[j] for j in used[k + 1:]) for k in range(len(used))]
    flat = _flat_index(cx, [(indices[i], shape[i], st) for i, st in zip(used, strides)],
                       bshape)
    moved = rlx.permute_dims(v, used + rest) if used + rest != list(range(rank)) else v
    moved = reshape_to(moved, [math.prod(shape[i] for i in used)] + [shape[i] for i in rest])
    y = rlx.take(moved, flat, [0])                       # (bshape..., rest...)
    adjacent = used == list(range(used[0], used[-1] + 1))
    if adjacent and used[0] > 0:
        nb, lead = len(bshape), used[0]
        axes = list(range(nb, nb + lead)) + list(range(nb)) + list(range(nb + lead,
                                                                        nb + len(rest)))
        y = rlx.permute_dims(y, axes)
    return y


@aten("aten.gather.default")
def gather(cx, x, dim, index, sparse_grad=False):
    """``torch.gather``: ``out[p] = x[p with axis dim replaced by
    index[p]]``, a ``rlx.take`` of the flat positions from the flattened
    ``x`` (its gradient a scatter-add, as torch's)."""
    v = cx.value(x)
    if cx.rank(v) == 0:
        return v
    shape = cx.shape(v)
    axis = norm_axis(dim, len(shape))
    ishape = cx.shape(index)
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    parts = []
    for k, n in enumerate(ishape):
        if k == axis:
            parts.append((index, shape[k], strides[k]))
        else:
            iota = np.arange(n, dtype=np.int64).reshape([n if j == k else 1
                                                         for j in range(len(ishape))])
            parts.append((iota, shape[k], strides[k]))
    flat = _flat_index(cx, parts, ishape)
    return rlx.take(reshape_to(v, [math.prod(shape)]), flat, [0])


@aten("aten.tril.default", "aten.triu.default")
def tri(cx, x, diagonal=0):
    v = cx.value(x)
    if cx.op == "aten.triu.default" and str(cx.dtype(v)) != "torch.bool":
        return rlx.triu(v, diagonal)
    rows, cols = cx.shape(v)[-2:]
    fn = np.tril if cx.op == "aten.tril.default" else np.triu
    mask = cx.const(fn(np.ones((rows, cols), dtype=bool), diagonal))
    return rlx.where(mask, v, cx.scalar(0, cx.dtype(v)))


@aten("aten.broadcast_tensors.default")
def broadcast_tensors(cx, tensors):
    out = []
    for t, o in zip(tensors, cx.out):
        v = cx.value(t)
        shape = [int(d) for d in o.shape]
        out.append(v if cx.shape(v) == shape else rlx.broadcast_to(v, shape))
    return out


# --- creation from a run-time tensor's shape -----------------------------------

@aten("aten.zeros_like.default", "aten.ones_like.default", "aten.full_like.default",
      "aten.empty_like.default", "aten.new_zeros.default", "aten.new_ones.default",
      "aten.new_full.default", "aten.new_empty.default")
def like(cx, x, *args):
    t = cx.torch
    name = cx.op.split(".")[1]
    if name in ("full_like", "new_full"):
        fill = args[1] if name == "new_full" else args[0]
    else:
        fill = 1 if "ones" in name else 0
    return t.full(cx.out_shape, fill, dtype=cx.out_dtype)

"""Shape aten ops: view/reshape/flatten/unflatten, permute/transpose/t,
expand, cat/stack, split/chunk/unbind, select/slice/narrow, unsqueeze/squeeze,
index_select/index, repeat, tril/triu, and the creation ops whose result does
not depend on their operand's values (zeros_like, new_ones, ...)."""

from __future__ import annotations

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


@aten("aten.index.Tensor")
def index(cx, x, indices):
    v = cx.value(x)
    used = [(i, ix) for i, ix in enumerate(indices) if ix is not None]
    if len(used) != 1 or str(cx.dtype(used[0][1])) not in ("torch.int64", "torch.int32"):
        raise cx.error("advanced indexing with one integer index tensor is supported "
                       "(x[idx], x[:, idx]); several index tensors or boolean masks are not")
    axis, ix = used[0]
    return rlx.take(v, cx.value(ix), [axis])


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

"""Creation, type, tuple and grad ops; arith.constant; func.call."""

from __future__ import annotations

import numpy as np
from mlir import ir

from .core import InterpreterError, np_dtype, parse_bf16_dense, register, type_shape


@register("rlx.zeros")
def _zeros(ctx, *unused):
    return np.zeros(ctx.result_shape(), dtype=ctx.result_dtype())


@register("rlx.ones")
def _ones(ctx, *unused):
    return np.ones(ctx.result_shape(), dtype=ctx.result_dtype())


@register("rlx.full")
def _full(ctx, fill):
    fill = np.asarray(fill)
    if fill.size != 1:
        raise ctx.error(f"fill value must be a 0-d tensor, got shape {fill.shape}")
    return np.full(ctx.result_shape(), fill.reshape(()), dtype=ctx.result_dtype())


@register("rlx.zeros_like")
def _zeros_like(ctx, x):
    return np.zeros(np.shape(x), dtype=ctx.result_dtype())


@register("rlx.ones_like")
def _ones_like(ctx, x):
    return np.ones(np.shape(x), dtype=ctx.result_dtype())


@register("rlx.astype")
def _astype(ctx, x):
    # numpy's C casts: float -> int truncates toward zero, nonzero -> true.
    return np.asarray(x).astype(ctx.result_dtype())


@register("rlx.tuple")
def _tuple(ctx, *xs):
    return tuple(xs)


@register("rlx.tuple_get_item")
def _tuple_get_item(ctx, t):
    if not isinstance(t, tuple):
        raise ctx.error("operand is not a tuple")
    i = ctx.int("index")
    if not -len(t) <= i < len(t):
        raise ctx.error(f"index {i} out of range for a tuple of {len(t)}")
    return t[i]


@register("grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad")
def _identity(ctx, *xs):
    # Identity markers (Relax start_checkpoint / end_checkpoint, stop_gradient).
    if ctx.num_results == 1:
        if len(xs) != 1:
            raise ctx.error(f"expects 1 operand, got {len(xs)}")
        return xs[0]
    return list(xs)


@register("arith.constant")
def _constant(ctx):
    attr = ctx.op.attributes["value"]
    t = ctx.result_type()
    if isinstance(attr, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr)):
        return np.asarray(attr.value, dtype=np_dtype(t))
    if not isinstance(attr, ir.DenseElementsAttr):
        text = str(attr)
        if text.startswith("dense_resource<"):
            # the blob's bytes, little-endian, as the compiled code reads them
            key = text[len("dense_resource<"):text.index(">")]
            blob = ctx.interp.resource_blob(key)
            shape = type_shape(t)
            dtype = ctx.result_dtype()
            count = int(np.prod(shape, dtype=np.int64))
            if blob is None or len(blob) != count * np.dtype(dtype).itemsize:
                raise ctx.error(f"dense_resource<{key}> has no data of the size its type needs")
            return np.frombuffer(blob, dtype=np.dtype(dtype).newbyteorder("<")).astype(
                dtype).reshape(shape)
        raise ctx.error(f"unsupported constant attribute {attr}")
    dense = ir.DenseElementsAttr(attr)
    shape = type_shape(dense.type)
    dtype = ctx.result_dtype()
    if dense.is_splat:
        v = dense.get_splat_value()
        val = v.value
        return np.full(shape, val, dtype=dtype)
    arr = np.array(dense)
    if arr.dtype == object:
        if isinstance(dense.type.element_type, ir.BF16Type):
            return parse_bf16_dense(attr)
        raise ctx.error(f"cannot read the elements of {dense.type}")
    return arr.reshape(shape).astype(dtype, copy=False)


@register("func.call")
def _call(ctx, *args):
    callee = ir.FlatSymbolRefAttr(ctx.op.attributes["callee"]).value
    # A `grad.vjp` attribute only matters to the gradient pass: the call's
    # value is the callee's.
    try:
        outs = ctx.interp.call(callee, list(args), where=f"{ctx.loc}: 'func.call'")
    except InterpreterError:
        raise
    if ctx.num_results == 1:
        return outs[0]
    return list(outs)

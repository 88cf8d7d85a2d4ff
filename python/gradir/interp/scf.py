"""Control flow and the index/scalar ops around it: ``scf.for``/``if``/
``while``, ``tensor.extract``/``from_elements``/``empty``/``extract_slice``/
``insert_slice``/``dim``, and ``arith`` on index and integer scalars.

Scalars (``index``, ``i1``, ``i64``) are 0-d numpy arrays, as the rest of the
interpreter represents them.  Region bodies see the values defined around
them (``Interpreter.run_region_block``)."""

from __future__ import annotations

import numpy as np
from mlir import ir

from .core import InterpreterError, register

# Trips of one loop beyond which the interpreter assumes it never ends.
MAX_TRIPS = 10_000_000


def _scalar(v) -> int:
    return int(np.asarray(v).reshape(()))


def _region_block(op, i: int):
    return op.regions[i].blocks[0]


@register("scf.for")
def _for(ctx, lb, ub, step, *inits):
    lb, ub, step = _scalar(lb), _scalar(ub), _scalar(step)
    if step <= 0:
        # the words of rlx-verify (a constant step) and of the compiled
        # code's run-time check (runtime.errors.ExecutionError)
        raise InterpreterError(f"{ctx.loc}: 'scf.for' op step must be positive, got {step}")
    body = _region_block(ctx.op, 0)
    vals = list(inits)
    for i in range(lb, ub, step):
        vals = ctx.interp.run_region_block(body, [np.asarray(i, np.int64)] + vals, ctx.env)
    return vals if ctx.num_results != 1 else vals[0]


@register("scf.if")
def _if(ctx, cond):
    taken = bool(np.asarray(cond).reshape(()))
    region = ctx.op.regions[0 if taken else 1]
    if not len(region.blocks):
        return [] if ctx.num_results != 1 else None
    vals = ctx.interp.run_region_block(region.blocks[0], [], ctx.env)
    return vals if ctx.num_results != 1 else vals[0]


@register("scf.while")
def _while(ctx, *inits):
    before, after = _region_block(ctx.op, 0), _region_block(ctx.op, 1)
    vals = list(inits)
    for _ in range(MAX_TRIPS):
        cond, *passed = ctx.interp.run_region_block(before, vals, ctx.env)
        if not bool(np.asarray(cond).reshape(())):
            return passed if ctx.num_results != 1 else passed[0]
        vals = ctx.interp.run_region_block(after, passed, ctx.env)
    raise ctx.error(f"the loop ran more than {MAX_TRIPS} trips")


# ----------------------------------------------------------------------------
# tensor

@register("tensor.extract")
def _extract(ctx, t, *indices):
    return np.asarray(t)[tuple(_scalar(i) for i in indices)]


@register("tensor.from_elements")
def _from_elements(ctx, *elems):
    return np.array([np.asarray(e).reshape(()) for e in elems],
                    dtype=ctx.result_dtype()).reshape(ctx.result_shape())


def _dims_with(ctx, dyn_sizes, static):
    dyn = iter(_scalar(d) for d in dyn_sizes)
    kdyn = ir.ShapedType.get_dynamic_size()
    return [next(dyn) if s == kdyn else s for s in static]


@register("tensor.empty")
def _empty(ctx, *sizes):
    t = ir.RankedTensorType(ctx.result_type())
    return np.zeros(_dims_with(ctx, sizes, list(t.shape)), dtype=ctx.result_dtype())


@register("tensor.dim")
def _dim(ctx, t, index):
    return np.asarray(np.shape(t)[_scalar(index)], np.int64)


def _slice_params(ctx, operands):
    """Offsets, sizes and strides of an extract/insert_slice (static or SSA)."""
    kdyn = ir.ShapedType.get_dynamic_size()
    vals = iter(operands)
    out = []
    for name in ("static_offsets", "static_sizes", "static_strides"):
        static = [int(x) for x in ir.DenseI64ArrayAttr(ctx.op.attributes[name])]
        out.append([_scalar(next(vals)) if s == kdyn else s for s in static])
    return out


def _index(offsets, sizes, strides):
    return tuple(slice(o, o + n * s, s) for o, n, s in zip(offsets, sizes, strides))


@register("tensor.extract_slice")
def _extract_slice(ctx, src, *dyn):
    offsets, sizes, strides = _slice_params(ctx, dyn)
    part = np.asarray(src)[_index(offsets, sizes, strides)]
    return part.reshape(ctx.result_shape() if all(
        d is not None for d in ir.RankedTensorType(ctx.result_type()).shape) else part.shape)


@register("tensor.insert_slice")
def _insert_slice(ctx, src, dest, *dyn):
    offsets, sizes, strides = _slice_params(ctx, dyn)
    out = np.array(dest, copy=True)
    where = _index(offsets, sizes, strides)
    out[where] = np.asarray(src).reshape(out[where].shape)
    return out


# ----------------------------------------------------------------------------
# arith on scalars (index, i1, integers)

def _binary(fn):
    def impl(ctx, a, b):
        return np.asarray(fn(np.asarray(a), np.asarray(b)))
    return impl


def _floordiv(a, b):
    if np.any(b == 0):
        raise InterpreterError("division by zero")
    return np.floor_divide(a, b)


def _truncdiv(a, b):
    if np.any(b == 0):
        raise InterpreterError("division by zero")
    return np.trunc(a / b).astype(np.result_type(a, b))


def _ceildiv(a, b):
    if np.any(b == 0):
        raise InterpreterError("division by zero")
    return -np.floor_divide(-a, b)


for _name, _fn in {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.floordivsi": _floordiv, "arith.divsi": _truncdiv, "arith.divui": _truncdiv,
    "arith.ceildivsi": _ceildiv, "arith.ceildivui": _ceildiv,
    "arith.remsi": np.fmod, "arith.remui": np.fmod,
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
    "arith.maxui": np.maximum, "arith.minui": np.minimum,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
}.items():
    register(_name)(_binary(_fn))

# arith.cmpi predicates, in the enum's order.
_CMPI = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
         np.less, np.less_equal, np.greater, np.greater_equal]


@register("arith.cmpi")
def _cmpi(ctx, a, b):
    pred = ctx.int("predicate")
    return np.asarray(_CMPI[pred](np.asarray(a), np.asarray(b)))


@register("arith.select")
def _select(ctx, c, a, b):
    return np.where(np.asarray(c), a, b)


@register("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui",
          "arith.trunci")
def _cast(ctx, x):
    return np.asarray(x).astype(ctx.result_dtype())


@register("tensor.insert")
def _insert(ctx, scalar, dest, *indices):
    out = np.array(dest, copy=True)
    out[tuple(_scalar(i) for i in indices)] = np.asarray(scalar).reshape(())
    return out

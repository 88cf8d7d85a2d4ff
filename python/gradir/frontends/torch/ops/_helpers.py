"""Helpers shared by the op mappings."""

from __future__ import annotations

from mlir import ir

from gradir.dialects import rlx

__all__ = ["norm_axis", "norm_axes", "pair", "float_operands", "reshape_to", "bcast_param",
           "concat_many", "split_sizes", "integer_via_f64", "FLOATING", "Unavailable"]



class Unavailable:
    """A result rlx does not compute (a BatchNorm's running statistics, the
    indices of max.dim); using it is an error naming ``op``."""

    def __init__(self, op: str, reason: str):
        self.op, self.reason = op, reason


FLOATING = ("torch.float16", "torch.bfloat16", "torch.float32", "torch.float64")


def norm_axis(a: int, rank: int) -> int:
    return a + rank if a < 0 else a


def norm_axes(axes, rank: int) -> list[int]:
    if axes is None:
        return list(range(rank))
    if isinstance(axes, int):
        axes = [axes]
    return [norm_axis(int(a), rank) for a in axes]


def pair(v, n: int = 2) -> list[int]:
    if isinstance(v, int):
        return [v] * n
    v = [int(x) for x in v]
    return v * n if len(v) == 1 else v


def float_operands(cx, *xs, dtype=None):
    """Operands of floating-point arithmetic, cast to ``dtype`` (default: the
    node's result type); refuses integer arithmetic on run-time tensors."""
    dtype = dtype or cx.out_dtype
    if str(dtype) not in FLOATING:
        raise cx.error(f"integer arithmetic ({dtype}) on run-time tensors: rlx arithmetic "
                       "is floating-point only")
    return [cx.value(x, dtype) for x in xs]


def integer_via_f64(cx, compute, *xs):
    """Integer arithmetic (``lengths - 1``, ``mask.sum(-1)``) that rlx,
    floating-point only, cannot do: ``compute`` on the operands cast to f64,
    the result cast back to the node's integer type; exact while every
    value stays below 2**53 in magnitude (torch's int64 would wrap around
    only past 2**63).  Integer results carry no gradient."""
    if str(cx.out_dtype) not in ("torch.int64", "torch.int32", "torch.bool"):
        raise cx.error(f"integer arithmetic ({cx.out_dtype}) on run-time tensors has no "
                       "rlx mapping")
    f64 = cx.torch.float64
    return rlx.astype(compute(*[cx.value(x, f64) for x in xs]), cx.ir_type(cx.out_dtype))


def reshape_to(x: ir.Value, shape) -> ir.Value:
    shape = [int(d) for d in shape]
    if [int(d) for d in x.type.shape] == shape:
        return x
    return rlx.reshape(x, shape)


def bcast_param(p: ir.Value, rank: int, axis: int = 1) -> ir.Value:
    """A per-channel vector (C,) as (1, C, 1, ...) of ``rank`` dimensions."""
    shape = [1] * rank
    shape[axis] = int(p.type.shape[0])
    return reshape_to(p, shape)


def concat_many(xs, axis: int) -> ir.Value:
    """``rlx.concat`` of any number of values (at most MAX_VARIADIC per op)."""
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    while len(xs) > rlx.MAX_VARIADIC:
        xs = [rlx.concat(xs[i:i + rlx.MAX_VARIADIC], axis=axis) if len(xs[i:i + rlx.MAX_VARIADIC]) > 1
              else xs[i] for i in range(0, len(xs), rlx.MAX_VARIADIC)]
    return rlx.concat(xs, axis=axis)


def split_sizes(x: ir.Value, sizes, axis: int) -> list[ir.Value]:
    """Pieces of ``sizes`` along ``axis`` (several rlx.split ops past
    MAX_VARIADIC pieces)."""
    sizes = [int(s) for s in sizes]
    if len(sizes) == 1:
        return [x]
    if len(sizes) <= rlx.MAX_VARIADIC:
        bounds, acc = [], 0
        for s in sizes[:-1]:
            acc += s
            bounds.append(acc)
        return rlx.split(x, bounds, axis=axis)
    groups = [sizes[i:i + rlx.MAX_VARIADIC] for i in range(0, len(sizes), rlx.MAX_VARIADIC)]
    out = []
    for part, g in zip(split_sizes(x, [sum(g) for g in groups], axis), groups):
        out.extend(split_sizes(part, g, axis))
    return out

"""The table of rlx/grad lowerings and the adapter that turns them into
rewrite patterns.

A lowering is a plain function ``fn(op) -> list[Value]`` that builds the
replacement of ``op``'s results at the current insertion point (the adapter
enters ``rewriter.ip`` and ``op.location``).  The adapter also computes f16
and bf16 ops in f32: it extends the float operands, lowers an f32 copy of the
op, and truncates the results, so each op rounds once, as the reference
interpreter does (numpy computes half-precision ops in float32 and rounds).
"""

from __future__ import annotations

from typing import Callable

from mlir import ir

from ... import _compat
from ...dialects.infer import raw_attributes
from .linalg_utils import convert_scalar, elementwise, elt_of, is_half, shape_of

__all__ = ["LOWERINGS", "lowers", "pattern_for", "promote_half_needed"]

# op name -> (lowering, promote_half)
LOWERINGS: dict[str, tuple[Callable, bool]] = {}


def lowers(*names: str, promote_half: bool = True):
    """Registers ``fn`` as the lowering of ``names``.  ``promote_half=False``
    for ops that only move data (reshape, slices, ...): those keep f16/bf16."""

    def deco(fn):
        for name in names:
            if name in LOWERINGS:
                raise RuntimeError(f"lowering of {name} registered twice")
            LOWERINGS[name] = (fn, promote_half)
        return fn

    return deco


def _tensor_types(op):
    for v in list(op.operands) + list(op.results):
        if isinstance(v.type, ir.RankedTensorType):
            yield v.type


def promote_half_needed(op) -> bool:
    return any(is_half(t) for t in _tensor_types(op))


def _promoted(t: ir.Type) -> ir.Type:
    if isinstance(t, ir.RankedTensorType) and is_half(t):
        return ir.RankedTensorType.get(list(t.shape), ir.F32Type.get())
    return t


def _convert_tensor(v: ir.Value, elt: ir.Type) -> ir.Value:
    if elt_of(v) == elt:
        return v
    shape = shape_of(v)
    return elementwise([v], shape, elt, lambda x: convert_scalar(x, elt))


def _lower_promoted(op, fn) -> list[ir.Value]:
    f32 = ir.F32Type.get()
    operands = [_convert_tensor(v, f32) if is_half(v.type) else v for v in op.operands]
    attrs = raw_attributes(op)
    twin = ir.Operation.create(op.name, results=[_promoted(r.type) for r in op.results],
                               operands=operands, attributes=attrs, loc=op.location)
    values = fn(twin)
    out = [_convert_tensor(v, elt_of(r.type)) for v, r in zip(values, op.results)]
    twin.erase()
    return out


# rlx-gradient's mark on ops it recomputes in the backward (rematerialization).
# The ops lowering such an op carry it too, so upstream CSE in the pipeline
# (which compares attribute dictionaries) does not merge the recomputation
# with the forward op and undo the memory saving.
RECOMPUTED = "grad.recomputed"


def _mark_recomputed(values, op) -> None:
    stop = set(op.operands)
    todo = [v for v in values if v not in stop]
    seen = set()
    while todo:
        v = todo.pop()
        owner = _compat.defining_op(v)     # not v.owner: see _compat.linalg
        if owner is None:
            continue                                 # a block argument
        if owner in seen or owner == op:
            continue
        seen.add(owner)
        if owner.name != "arith.constant":
            owner.attributes[RECOMPUTED] = ir.UnitAttr.get()
        todo.extend(x for x in owner.operands if x not in stop)


def pattern_for(name: str) -> Callable:
    """The rewrite pattern ``fn(op, rewriter)`` lowering op ``name``."""
    fn, promote = LOWERINGS[name]

    def pattern(op, rewriter):
        op = op.operation
        with rewriter.ip, op.location:
            if promote and promote_half_needed(op):
                values = _lower_promoted(op, fn)
            else:
                values = fn(op)
        if RECOMPUTED in op.attributes:
            _mark_recomputed(values, op)
        rewriter.replace_op(op, list(values))
        return None  # matched

    pattern.__name__ = "lower_" + name.replace(".", "_")
    return pattern

"""Splits a VJP function into PyTorch-style forward and backward functions.

``@f_vjp(args..., cotangents...) -> (results..., grads...)`` becomes
``@f_fwd(args...) -> (results..., saved...)`` — the forward plus every value
the backward needs — and ``@f_bwd(saved..., cotangents...) -> (grads...)``.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from .gradient import (body_of, clone_ops, insertion_point_after, set_function_type,
                       terminator)
from .regions import region_inputs

__all__ = ["split_forward_backward"]


def _new_function(after: ir.Operation, name: str, arg_types: list, loc) -> ir.Operation:
    with loc, insertion_point_after(after):
        fop = func.FuncOp(name, ir.FunctionType.get(arg_types, []))
        fop.add_entry_block()
    return fop.operation


def _scalar_constant(op) -> bool:
    return op.name == "arith.constant" and not isinstance(
        op.results[0].type, (ir.RankedTensorType, ir.TupleType))


def split_forward_backward(module: ir.Operation, vjp_fn: ir.Operation, name: str,
                           n_inputs: int, n_results: int) -> None:
    block = body_of(vjp_fn)
    ret = terminator(block)
    outs = list(ret.operands)
    results, grads = outs[:n_results], outs[n_results:]
    ops = [o.operation for o in block.operations][:-1]
    args = list(block.arguments)
    inputs, cots = args[:n_inputs], args[n_inputs:]

    # Forward: everything the results need.
    needed = set(results)
    forward = set()
    for op in reversed(ops):
        if any(r in needed for r in op.results):
            forward.add(op)
            needed.update(region_inputs(op))   # loop bodies' captures too
    # Scalar constants (loop bounds) are rebuilt in the backward, not saved.
    shared = {op for op in forward if _scalar_constant(op)}
    fwd_ops = [op for op in ops if op in forward]
    bwd_ops = [op for op in ops if op not in forward or op in shared]
    fwd_values = set(inputs)
    for op in fwd_ops:
        if op not in shared:
            fwd_values.update(op.results)

    saved, seen = [], set()
    def save(v):
        if v in fwd_values and v not in seen:
            seen.add(v)
            saved.append(v)
    for op in bwd_ops:
        for v in region_inputs(op):
            save(v)
    for g in grads:  # a gradient may be a forward value itself
        save(g)

    loc = vjp_fn.location
    fwd = _new_function(vjp_fn, f"{name}_fwd", [a.type for a in inputs], loc)
    fblock = body_of(fwd)
    mapping = dict(zip(inputs, fblock.arguments))
    with ir.InsertionPoint(fblock):
        clone_ops(fwd_ops, mapping)
    fwd_out = [mapping.get(v, v) for v in results + saved]
    with ir.InsertionPoint(fblock), loc:
        func.ReturnOp(fwd_out)
    set_function_type(fwd, [a.type for a in inputs], [v.type for v in fwd_out])

    bwd_in = [v.type for v in saved] + [c.type for c in cots]
    bwd = _new_function(fwd, f"{name}_bwd", bwd_in, loc)
    bblock = body_of(bwd)
    bargs = list(bblock.arguments)
    mapping = dict(zip(saved, bargs[:len(saved)]))
    mapping.update(zip(cots, bargs[len(saved):]))
    with ir.InsertionPoint(bblock):
        clone_ops(bwd_ops, mapping)
    bwd_out = [mapping.get(v, v) for v in grads]
    with ir.InsertionPoint(bblock), loc:
        func.ReturnOp(bwd_out)
    set_function_type(bwd, bwd_in, [v.type for v in bwd_out])
    vjp_fn.erase()

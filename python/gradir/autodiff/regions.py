"""Region ops in the gradient: captured values, and the hooks that
``autodiff/scf`` registers its control-flow adjoints through (so the core
sweep in gradient.py never imports it)."""

from __future__ import annotations

from typing import Callable

from mlir import ir


__all__ = ["captured_values", "region_inputs", "walk_nested", "REGION_RULES",
           "PREPARE", "CHECK", "FINISH"]

# op name -> fn(op, grads, adj, active, call_vjp): the adjoint of a region op.
REGION_RULES: dict[str, Callable] = {}
# fns(block, forward_ops, active) -> forward_ops: rewrite forward loops so that
# they record what their backward needs (run before the backward sweep).
PREPARE: list[Callable] = []
# fns(op) -> bool: checks an op that is not rlx/grad; True when it is accepted
# (raises GradientError when refused); False when the hook does not know it.
CHECK: list[Callable] = []
# fns(fn_op): run once the gradient is built (drop bookkeeping marks).
FINISH: list[Callable] = []


def _ops_in(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation


def walk_nested(op: ir.Operation):
    """Every op nested in ``op``'s regions (not ``op`` itself), in order
    (``ir.walk``'s pre-order).  One generator per open region op on a
    stack, not one nested in another: each op costs O(1), not O(its
    depth) (loops nested a hundred deep)."""
    stack = [_ops_in(op)]
    while stack:
        for inner in stack[-1]:
            yield inner
            if len(inner.regions):
                stack.append(_ops_in(inner))
                break
        else:
            stack.pop()


def _defined_inside(op: ir.Operation) -> set:
    inside = set()
    for region in op.regions:
        for block in region.blocks:
            inside.update(block.arguments)
    for inner in walk_nested(op):
        inside.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.arguments)
    return inside


def captured_values(op: ir.Operation) -> list:
    """Values defined outside ``op`` and used in its regions, first use first."""
    if not op.regions:
        return []
    inside = _defined_inside(op)
    out, seen = [], set()
    for inner in walk_nested(op):
        for v in inner.operands:
            if v not in inside and v not in seen:
                seen.add(v)
                out.append(v)
    return out


def region_inputs(op: ir.Operation) -> list:
    """An op's operands, and for a region op also the values it captures."""
    if not op.regions:
        return list(op.operands)
    return list(op.operands) + [v for v in captured_values(op) if v not in set(op.operands)]

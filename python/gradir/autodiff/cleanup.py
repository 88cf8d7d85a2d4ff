"""The cleanup core shared by rlx-cse, rlx-dce and the gradient simplifier:
common-subexpression elimination and dead-code removal of pure rlx/grad ops."""

from __future__ import annotations

from mlir import ir

from ..dialects.util import is_pure
from ..ir import blocks_of, has_uses

__all__ = ["cse", "cse_block", "erase_dead_ops", "dce"]

# Ops whose regions cannot see values defined outside them.
_ISOLATED = frozenset({"builtin.module", "func.func", "gpu.module", "gpu.func", "llvm.func"})


def _key(op: ir.Operation):
    attrs = op.attributes
    return (
        op.name,
        tuple(op.operands),
        tuple(sorted((attrs[i].name, str(attrs[i].attr)) for i in range(len(attrs)))),
        tuple(str(r.type) for r in op.results),
    )


def cse(op: ir.Operation) -> None:
    """Merges identical pure ops in every block under ``op``."""
    for region in op.regions:
        for block in region.blocks:
            cse_block(block, {})


def cse_block(block: ir.Block, outer: dict) -> None:
    """CSE of ``block``; ``outer`` holds the ops of enclosing blocks it may reuse."""
    seen = dict(outer)
    for op in list(block.operations):
        op = op.operation
        if op.regions and any(len(r.blocks) for r in op.regions):
            scope = {} if op.name in _ISOLATED else seen
            for region in op.regions:
                for inner in region.blocks:
                    cse_block(inner, scope)
            continue
        if not is_pure(op) or op.name.startswith("grad.") or "grad.recomputed" in op.attributes:
            continue
        key = _key(op)
        first = seen.get(key)
        if first is None:
            seen[key] = op
            continue
        for old, new in zip(op.results, first.results):
            old.replace_all_uses_with(new)
        op.erase()


def erase_dead_ops(block: ir.Block) -> int:
    """Erases dead pure ops of ``block`` in reverse order; returns how many."""
    erased = 0
    for op in reversed(list(block.operations)):
        op = op.operation
        if op.regions and any(len(r.blocks) for r in op.regions):
            continue
        if is_pure(op) and not has_uses(op):
            op.erase()
            erased += 1
    return erased


def dce(op: ir.Operation) -> None:
    """Erases dead pure ops in every block under ``op``."""
    for block in list(blocks_of(op)):
        erase_dead_ops(block)

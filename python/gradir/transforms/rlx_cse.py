"""rlx-cse: merges identical rlx ops (same operands, attributes, types)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from .base import ModulePass
from ._util import is_pure


@dataclass(frozen=True)
class RlxCse(ModulePass):
    """Merges rlx ops that compute the same value.

    Two pure rlx ops (or constants) with the same name, operands, attributes
    and result types compute the same value: the later one's uses move to
    the earlier one and it is erased.  An op in a nested region may reuse one
    of an enclosing block.  grad markers are never merged (they mark places),
    nor are ops marked ``grad.recomputed`` (checkpointing recomputes them in
    the backward on purpose, so that the forward value need not be kept).

        %0 = "rlx.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
        %1 = "rlx.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
        %2 = "rlx.add"(%0, %1) ...
    becomes
        %0 = "rlx.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
        %2 = "rlx.add"(%0, %0) ...
    """

    name = "rlx-cse"

    def apply(self, module: ir.Operation) -> None:
        for region in module.regions:
            for block in region.blocks:
                _cse_block(block, {})


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


def _cse_block(block: ir.Block, outer: dict) -> None:
    seen = dict(outer)
    for op in list(block.operations):
        op = op.operation
        if op.regions and any(len(r.blocks) for r in op.regions):
            scope = {} if op.name in _ISOLATED else seen
            for region in op.regions:
                for inner in region.blocks:
                    _cse_block(inner, scope)
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

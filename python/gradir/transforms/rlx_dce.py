"""rlx-dce: removes rlx/grad ops (and constants) whose results are unused."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from .base import ModulePass
from ._util import blocks_of, has_uses, is_pure


@dataclass(frozen=True)
class RlxDce(ModulePass):
    """Removes rlx and grad ops whose results are never used.

    IRDL ops have no side-effect traits, so upstream DCE keeps them.  Every
    rlx/grad op is pure; an op with no used result is erased, repeatedly,
    so whole dead chains go.

        %0 = "rlx.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>   // unused
        return %x : tensor<2xf32>
    becomes
        return %x : tensor<2xf32>
    """

    name = "rlx-dce"

    def apply(self, module: ir.Operation) -> None:
        for block in list(blocks_of(module)):
            erase_dead_ops(block)


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

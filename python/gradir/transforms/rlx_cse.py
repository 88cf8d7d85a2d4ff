"""rlx-cse: merges identical rlx ops (same operands, attributes, types)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..autodiff.cleanup import cse
from ..passes.base import ModulePass


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
    anchor = None

    def apply(self, module: ir.Operation) -> None:
        cse(module)

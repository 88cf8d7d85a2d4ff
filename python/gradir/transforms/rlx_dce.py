"""rlx-dce: removes rlx/grad ops (and constants) whose results are unused."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..autodiff.cleanup import dce
from ..passes.base import ModulePass


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
    anchor = None

    def apply(self, module: ir.Operation) -> None:
        dce(module)

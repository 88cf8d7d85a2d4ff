"""gpu-strip-compile-times: drops the compile timings that
gpu-module-to-binary records in each ``#gpu.object``, so that the same
input gives byte-identical IR."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu

from ...passes.base import ModulePass

__all__ = ["GpuStripCompileTimes", "TIMING_SUFFIX"]

TIMING_SUFFIX = "TimeInMs"


@dataclass(frozen=True)
class GpuStripCompileTimes(ModulePass):
    """Removes the ``*TimeInMs`` properties of every ``gpu.binary``'s objects.

    Upstream's NVVM serializer records how long LLVM and ptxas took
    (``LLVMIRToISATimeInMs``, ``ISAToBinaryTimeInMs``) in the object's
    properties: the printed module then differs from one compile to the
    next. Run after ``gpu-module-to-binary``; every other property, the
    target, the format, the kernels' metadata and the binary stay.

        gpu.binary @f_kernels [#gpu.object<#nvvm.target<chip = "sm_90">,
            properties = {ISAToBinaryTimeInMs = 41 : i64, LLVMIRToISATimeInMs = 7 : i64}, bin = "..">]
    becomes
        gpu.binary @f_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "..">]
    """

    name = "gpu-strip-compile-times"

    def apply(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name != "gpu.binary" or "objects" not in op.attributes:
                continue
            objects = [gpu.ObjectAttr(a) for a in ir.ArrayAttr(op.attributes["objects"])]
            if not any(_timed(o) for o in objects):
                continue
            op.attributes["objects"] = ir.ArrayAttr.get([_stripped(o) for o in objects])


def _timed(obj) -> bool:
    props = obj.properties
    return props is not None and any(
        ir.DictAttr(props)[i].name.endswith(TIMING_SUFFIX) for i in range(len(props)))


def _stripped(obj):
    if not _timed(obj):
        return obj
    props = ir.DictAttr(obj.properties)
    kept = {props[i].name: props[i].attr for i in range(len(props))
            if not props[i].name.endswith(TIMING_SUFFIX)}
    return gpu.ObjectAttr.get(obj.target, obj.format, obj.object,
                              ir.DictAttr.get(kept) if kept else None, obj.kernels)

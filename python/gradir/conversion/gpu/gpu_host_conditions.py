"""gpu-host-conditions: a loop's or branch's condition read from the device."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu, memref

from ...ir import walk
from ...passes.base import ModulePass
from .common import HOST_MEMORY, host_functions

__all__ = ["GpuHostConditions", "HOST_SCALAR"]

# Marks the host buffer a condition is copied into (gpu-check-host allows it).
HOST_SCALAR = "gradir.host_scalar"


@dataclass(frozen=True)
class GpuHostConditions(ModulePass):
    """Copies each 0-d device value the host reads to a host buffer first.

    ``scf.if`` and ``scf.while`` stay on the host (they launch the kernels of
    their bodies); their ``i1`` comes from ``tensor.extract`` of a 0-d bool
    tensor a kernel computed, i.e. a host ``memref.load`` of a device buffer.
    Each such load reads a host copy instead (``memref.alloca`` marked
    ``gradir.host_scalar``, ``gpu.memcpy``).  Runs after
    gpu-linalg-to-kernels, before gpu-check-host; loads of larger device
    buffers are left to gpu-check-host's refusal, loads of host memory
    (marked ``gradir.host_memory`` by gpu-device-buffers) stay as they are.

        %b = memref.load %dev[] : memref<i8>            // host code
    becomes
        %h = memref.alloca() {gradir.host_scalar} : memref<i8>
        gpu.memcpy %h, %dev : memref<i8>, memref<i8>
        %b = memref.load %h[] : memref<i8>
    """

    name = "gpu-host-conditions"

    def apply(self, module: ir.Operation) -> None:
        for fn in host_functions(module):
            for op in list(walk(fn, descend=lambda o: o.name != "gpu.launch")):
                if op.name != "memref.load" or len(op.operands) != 1 or \
                        HOST_MEMORY in op.attributes:
                    continue
                src = op.operands[0]
                owner = getattr(src.owner, "operation", src.owner)
                if isinstance(owner, ir.Operation) and HOST_SCALAR in owner.attributes:
                    continue
                t = ir.MemRefType(src.type)
                if t.rank != 0:
                    continue
                with ir.InsertionPoint(op), op.location:
                    host = memref.AllocaOp(ir.MemRefType.get([], t.element_type), [], [])
                    host.operation.attributes[HOST_SCALAR] = ir.UnitAttr.get()
                    gpu.MemcpyOp(None, [], host.result, src)
                op.operands[0] = host.result

"""Helpers shared by the GPU passes (gpu-device-buffers, gpu-linalg-to-kernels,
gpu-check-host): walking host code, memref aliases, index constants."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ...ir import functions

from ..memref_views import (VIEW_OPS, aliases_of, ancestor_in_block,  # noqa: F401
                            walk)  # re-exported

__all__ = ["VIEW_OPS", "ALLOC_OPS", "host_functions", "walk", "aliases_of",
           "ancestor_in_block", "index", "index_type", "inside_kernel", "memref_operands",
           "is_memref", "n_inputs", "flat_count", "HOST_MEMORY"]

# Marks a host ``memref.load`` of host memory (gpu-device-buffers: a buffer
# of ``gpu_check_host.host_buffers``, such as a checkpointed loop's
# trip-count stack): its scalar is a host value that kernels take as an
# argument; gpu-linalg-to-kernels never clones such a load into a kernel,
# gpu-host-conditions never copies its buffer from the device.
HOST_MEMORY = "gradir.host_memory"

ALLOC_OPS = frozenset({"memref.alloc", "memref.alloca"})


def index_type() -> ir.Type:
    return ir.IndexType.get()


def index(value: int) -> ir.Value:
    """An ``arith.constant`` of type index at the current insertion point."""
    return arith.ConstantOp(ir.IndexType.get(), int(value)).result


def is_memref(value: ir.Value) -> bool:
    return isinstance(value.type, ir.MemRefType)


def host_functions(module: ir.Operation) -> list[ir.Operation]:
    """``func.func`` ops with a body at the top level of ``module``."""
    return [fn for fn in functions(module) if len(fn.regions[0].blocks) > 0]


def inside_kernel(op: ir.Operation) -> bool:
    """Whether ``op`` is nested in a ``gpu.launch`` or a ``gpu.func``."""
    parent = op.parent
    while parent is not None:
        if parent.name in ("gpu.launch", "gpu.func", "gpu.module"):
            return True
        parent = parent.parent
    return False


def memref_operands(op: ir.Operation) -> list[ir.Value]:
    return [v for v in op.operands if is_memref(v)]


def flat_count(t: ir.Type) -> int:
    if isinstance(t, ir.TupleType):
        return sum(flat_count(t.get_type(i)) for i in range(t.num_types))
    return 1


def n_inputs(fn: ir.Operation) -> int | None:
    """How many of ``fn``'s (bufferized) arguments are inputs: the flattened
    inputs of ``gradir.original_type``, or None when the attribute is absent."""
    if "gradir.original_type" not in fn.attributes:
        return None
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["gradir.original_type"]).value)
    return sum(flat_count(t) for t in ftype.inputs)

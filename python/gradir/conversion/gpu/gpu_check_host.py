"""gpu-check-host: fails when host code computes or touches device memory."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...passes.base import ModulePass
from .common import VIEW_OPS, host_functions, is_memref

__all__ = ["GpuCheckHost", "host_problem"]

# Host ops that may take device buffers: allocation, copies, launches, views.
_BUFFER_OPS = frozenset({
    "gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.memset", "gpu.launch", "gpu.launch_func",
    "gpu.wait", "func.return", "scf.yield", "scf.if", "scf.for", "scf.while", "scf.condition",
    "memref.extract_aligned_pointer_as_index", "memref.extract_strided_metadata",
    "builtin.unrealized_conversion_cast", *VIEW_OPS,
})
# Dialects whose ops are computation and belong in kernels.
_COMPUTE_DIALECTS = ("linalg.", "math.", "tensor.", "vector.", "bufferization.", "affine.for",
                     "affine.parallel", "scf.parallel", "scf.forall")
_FLOAT_ARITH = frozenset({
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf",
    "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.cmpf",
    "arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi",
    "arith.fptoui",
})


def host_problem(op: ir.Operation) -> str | None:
    """Why ``op`` (in host code) cannot stay on the host, or None."""
    name = op.name
    if name == "memref.get_global":
        users = [u.owner for u in op.results[0].uses]
        if all(getattr(u, "name", None) == "gpu.memcpy" for u in users):
            return None
        return "a host constant is used by something other than a copy to the device"
    if name.startswith(_COMPUTE_DIALECTS) or name in _FLOAT_ARITH:
        return (f"'{name}' computes on the host; every computation must be inside a GPU "
                "kernel")
    if name in _BUFFER_OPS:
        return None
    if name in ("memref.alloca", "memref.load") and _host_scalar(op):
        return None     # a condition copied to the host (gpu-host-conditions)
    if any(is_memref(v) for v in list(op.operands) + list(op.results)):
        return (f"'{name}' touches a device buffer on the host; only gpu.alloc, "
                "gpu.dealloc, gpu.memcpy and kernel launches may")
    return None


def _host_scalar(op: ir.Operation) -> bool:
    buf = op.results[0] if op.name == "memref.alloca" else op.operands[0]
    owner = getattr(buf.owner, "operation", buf.owner)
    return isinstance(owner, ir.Operation) and "gradir.host_scalar" in owner.attributes


@dataclass(frozen=True)
class GpuCheckHost(ModulePass):
    """Checks that host code only allocates, copies and launches.

    After gpu-linalg-to-kernels (or kernel outlining), the code of every
    function outside ``gpu.launch`` bodies may allocate and free device
    buffers, copy between host and device, take views of buffers, compute
    integer/index scalars and launch kernels.  Anything else (a linalg op
    left over, ``memref.load``/``store`` on a buffer, floating-point or
    ``math`` computation) is an error at that op: there is no silent
    fallback to host execution.

        %v = memref.load %dev[%c0] : memref<4xf32>    // in host code
    fails with
        error: 'memref.load' touches a device buffer on the host; ...
    """

    name = "gpu-check-host"

    def apply(self, module: ir.Operation) -> None:
        failed = False
        for fn in host_functions(module):
            failed |= self._check(fn)
        if failed:
            raise self.failure()

    def _check(self, op: ir.Operation) -> bool:
        """Checks the ops nested in ``op`` (not inside kernels, not inside an
        op already refused)."""
        failed = False
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    problem = host_problem(inner)
                    if problem:
                        self.error(inner, problem)
                        failed = True
                    elif inner.name != "gpu.launch":
                        failed |= self._check(inner)
        return failed

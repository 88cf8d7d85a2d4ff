"""gpu-device-buffers: moves the data of bufferized functions to the GPU."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu, linalg

from ...passes.base import ModulePass, option
from .resident import resident_buffer, upload_function
from .common import (ALLOC_OPS, aliases_of, ancestor_in_block, host_functions, is_memref,
                         n_inputs, walk)

__all__ = ["GpuDeviceBuffers", "written_values"]

# Operand positions an op writes through (besides linalg outs).
_WRITES = {"memref.store": (1,), "memref.copy": (1,), "gpu.memcpy": (0,), "memref.copy_to": (1,)}
# Uses through which a buffer escapes the function (no dealloc can be placed).
_ESCAPES = frozenset({"func.return", "scf.yield", "scf.condition", "func.call", "memref.store",
                      "cf.br", "cf.cond_br"})


def _linalg_inits(op: ir.Operation) -> list[ir.Value]:
    """The ``outs`` operands of a linalg structured op (DPS inits)."""
    if "operandSegmentSizes" in op.attributes:
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        return list(op.operands)[sizes[0]:sizes[0] + sizes[1]]
    return list(op.operands)[-1:] if len(op.operands) else []


def written_values(op: ir.Operation) -> list[ir.Value]:
    """Memrefs ``op`` writes (linalg outs, store/copy/memcpy targets)."""
    if op.name.startswith("linalg.") and op.name not in ("linalg.yield", "linalg.index"):
        return [v for v in _linalg_inits(op) if is_memref(v)]
    return [op.operands[i] for i in _WRITES.get(op.name, ())]


def _is_written(value: ir.Value, fn: ir.Operation) -> bool:
    views = aliases_of(value)
    for op in walk(fn):
        for w in written_values(op):
            if any(w == v for v in views):
                return True
    return False


@dataclass(frozen=True)
class GpuDeviceBuffers(ModulePass):
    """Moves every buffer of bufferized functions to GPU memory.

    Runs after one-shot-bufferize and buffer-results-to-out-params (host
    memref arguments: inputs, then outputs).  Each input argument is copied
    to a ``gpu.alloc`` buffer once at entry, each output is computed in a
    device buffer and copied back once before ``return``; ``memref.alloc``
    becomes ``gpu.alloc`` with a ``gpu.dealloc`` after its last use (through
    views); ``memref.get_global`` constants are copied to the device where
    they are used; ``memref.copy`` becomes ``linalg.copy`` (a kernel later).
    Inputs and outputs are told apart by ``gradir.original_type``; without
    it every argument is copied in and the written ones are copied back.
    Arguments whose index is in ``keep-resident`` are uploaded by the first
    call only and stay on the device (see gradir.conversion.gpu.nvvm).

        func.func @f(%a: memref<4xf32>, %out: memref<4xf32>) {
          linalg.generic ... ins(%a) outs(%out)
    becomes
        func.func @f(%a: memref<4xf32>, %out: memref<4xf32>) {
          %0 = gpu.alloc() : memref<4xf32>
          gpu.memcpy %0, %a : memref<4xf32>, memref<4xf32>
          %1 = gpu.alloc() : memref<4xf32>
          linalg.generic ... ins(%0) outs(%1)
          gpu.memcpy %out, %1 : memref<4xf32>, memref<4xf32>
          gpu.dealloc %0 : memref<4xf32>
          gpu.dealloc %1 : memref<4xf32>
    """

    name = "gpu-device-buffers"
    keep_resident: tuple[int, ...] = option((), "argument indices uploaded once and kept "
                                                "on the device across calls")

    def apply(self, module: ir.Operation) -> None:
        failed = False
        for fn in host_functions(module):
            if len(fn.regions[0].blocks) != 1:
                self.error(fn, "gpu-device-buffers expects functions with a single block")
                failed = True
                continue
            for op in walk(fn, into_kernels=False):
                if op.name in ("func.call", "call"):
                    self.error(op, "calls are not supported on the GPU path (inline them "
                                   "first)")
                    failed = True
        if failed:
            raise self.failure()
        body = module.regions[0].blocks[0]
        for fn in host_functions(module):
            globals_, indices = self._function(fn)
            if not globals_:
                continue
            with ir.InsertionPoint(body.operations[0]):
                for g in globals_:
                    ir.InsertionPoint.current.insert(g)
            with ir.InsertionPoint(body), fn.location:
                upload_function(fn, indices)

    # -- one function --------------------------------------------------------
    def _function(self, fn: ir.Operation):
        entry = fn.regions[0].blocks[0]
        returns = [op.operation for op in entry.operations if op.operation.name == "func.return"]
        n_in = n_inputs(fn)
        args = [a for a in entry.arguments]
        head = entry.operations[0]
        new_globals = []
        resident_indices = []
        device_args = []
        for i, arg in enumerate(args):
            if not is_memref(arg) or not list(arg.uses):
                continue
            is_input = n_in is None or i < n_in
            is_output = _is_written(arg, fn) if n_in is None else i >= n_in
            resident = is_input and i in self.keep_resident
            if resident and _is_written(arg, fn):
                self.warning(fn, f"argument #{i} is written by the function; it is copied "
                                 "to the device on every call instead of staying resident")
                resident = False
            with ir.InsertionPoint(head), fn.location:
                if resident:
                    dev, glob = resident_buffer(fn, i, arg)
                    new_globals.append(glob)
                    resident_indices.append(i)
                    keep = list(_ops_using(arg))
                else:
                    dev = gpu.AllocOp(arg.type, None, [], [], []).result
                    keep = []
                    if is_input:
                        keep.append(gpu.MemcpyOp(None, [], dev, arg).operation)
            if keep:
                arg.replace_all_uses_except(dev, keep)
            else:
                arg.replace_all_uses_with(dev)
            device_args.append((arg, dev, is_output, resident))
        for ret in returns:
            with ir.InsertionPoint(ret), ret.location:
                for arg, dev, is_output, _ in device_args:
                    if is_output:
                        gpu.MemcpyOp(None, [], arg, dev)
                for _, dev, _, resident in device_args:
                    if not resident:
                        gpu.DeallocOp(None, [], dev)
        for op in list(walk(fn, into_kernels=False)):
            if op.name in ALLOC_OPS:
                self._alloc(op)
            elif op.name == "memref.dealloc":
                with ir.InsertionPoint(op), op.location:
                    gpu.DeallocOp(None, [], op.operands[0])
                op.erase()
            elif op.name == "memref.get_global":
                self._global(op)
            elif op.name == "memref.copy":
                with ir.InsertionPoint(op), op.location:
                    linalg.copy(op.operands[0], outs=[op.operands[1]])
                op.erase()
        return new_globals, resident_indices

    def _alloc(self, op: ir.Operation) -> None:
        with ir.InsertionPoint(op), op.location:
            dev = gpu.AllocOp(op.results[0].type, None, [], list(op.operands), []).result
        op.results[0].replace_all_uses_with(dev)
        op.erase()
        self._place_dealloc(dev)

    def _global(self, op: ir.Operation) -> None:
        host = op.results[0]
        with ir.InsertionPoint.after(op), op.location:
            dev = gpu.AllocOp(host.type, None, [], [], []).result
            copy = gpu.MemcpyOp(None, [], dev, host).operation
        host.replace_all_uses_except(dev, [copy])
        self._place_dealloc(dev)

    def _place_dealloc(self, dev: ir.Value) -> None:
        """A gpu.dealloc after the last use of ``dev`` (or of a view of it)
        in its block."""
        owner = dev.owner
        owner = owner.operation if hasattr(owner, "operation") else owner
        block = owner.block
        order = {}
        for i, o in enumerate(block.operations):
            order[o.operation] = i
        last = owner
        for v in aliases_of(dev):
            for use in v.uses:
                user = use.owner
                user = user.operation if hasattr(user, "operation") else user
                if user.name in _ESCAPES:
                    self.warning(user, "a device buffer escapes through "
                                       f"'{user.name}'; it is not freed")
                    return
                anc = ancestor_in_block(user, block)
                if anc is None:
                    continue
                if order[anc] > order[last]:
                    last = anc
        if last.name == "func.return":  # pragma: no cover - returns use no buffers here
            return
        with ir.InsertionPoint.after(last), owner.location:
            gpu.DeallocOp(None, [], dev)


def _ops_using(arg: ir.Value):
    """Uses of ``arg`` by the upload code (gpu.memcpy)."""
    for use in arg.uses:
        user = use.owner
        user = user.operation if hasattr(user, "operation") else user
        if user.name == "gpu.memcpy":
            yield user

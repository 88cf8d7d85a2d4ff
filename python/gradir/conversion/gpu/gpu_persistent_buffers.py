"""gpu-persistent-buffers: a function's device buffers become views of one
device arena allocated by its first call (no cuMemAlloc/cuMemFree per call)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from ... import _compat
from ...ir import symbol_name
from ...passes.base import ModulePass, option
from .common import VIEW_OPS, aliases_of, host_functions, index
from .resident import persistent_buffer

__all__ = ["GpuPersistentBuffers", "arena_global_name", "plan_offsets"]

# Uses that hand a buffer to a loop (or out of a region): the loop frees it
# with gpu.dealloc when it is done with it (gpu-device-buffers), so it cannot
# be a view of the arena.
_HANDED_ON = frozenset({"scf.for", "scf.while", "scf.yield", "scf.condition"})

_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4,
          "f64": 8, "index": 8}


def arena_global_name(fn_name: str) -> str:
    return f"__gradir_arena_{fn_name}"


def _nbytes(t: ir.MemRefType) -> int | None:
    elt = str(t.element_type)
    if elt not in _BYTES or not t.has_static_shape:
        return None
    n = _BYTES[elt]
    for d in t.shape:
        n *= d
    return n


def plan_offsets(intervals: list[tuple[int, int, int]], align: int) -> tuple[list[int], int]:
    """First-fit offsets for buffers ``(start, end, size)`` (positions in
    program order, inclusive) so that buffers live at the same time do not
    overlap; returns ``(offsets, arena size)``."""
    offsets = [0] * len(intervals)
    live: list[tuple[int, int, int]] = []       # (offset, size, end)
    total = 0
    for k in sorted(range(len(intervals)), key=lambda k: intervals[k][0]):
        start, end, size = intervals[k]
        size = max(align, -(-size // align) * align)
        live = [b for b in live if b[2] >= start]
        off = 0
        for b_off, b_size, _ in sorted(live):
            if off + size <= b_off:
                break
            off = max(off, b_off + b_size)
        offsets[k] = off
        live.append((off, size, end))
        total = max(total, off + size)
    return offsets, total


@dataclass(frozen=True)
class GpuPersistentBuffers(ModulePass):
    """Carves the device buffers of each host function out of one arena.

    Every ``gpu.alloc`` with a static shape in a function's top-level block
    (inputs, outputs and intermediates; not resident arguments, nor buffers
    handed to a loop, which frees them itself once the next iteration's
    buffer is made: they stay ``gpu.alloc``) becomes a
    ``memref.view`` of a per-function arena at an offset planned from the
    buffers' live ranges (a buffer lives from its alloc to its
    ``gpu.dealloc``; buffers whose ranges do not overlap share bytes); the
    deallocs disappear.  The arena is allocated by the first call and kept
    (its address is in the global ``@__gradir_arena_<f>``), so a call costs
    no cuMemAlloc/cuMemFree (cuMemFree synchronises the whole device).  Calls
    of one function must not overlap (no concurrent calls from several
    threads).  Run after gpu-linalg-to-kernels, before kernel outlining.

        %0 = gpu.alloc () : memref<4xf32>
        ... gpu.dealloc %0 : memref<4xf32>
    becomes
        %arena = ... (the arena of @f, memref<256xi8>)
        %0 = memref.view %arena[%c0][] : memref<256xi8> to memref<4xf32>
    """

    name = "gpu-persistent-buffers"
    alignment: int = option(256, "byte alignment of every buffer in the arena")

    def check_options(self):
        if self.alignment < 16 or self.alignment & (self.alignment - 1):
            raise self.bad_option("alignment", "be a power of two of at least 16",
                                  self.alignment)

    def apply(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        new_globals = []
        for fn in host_functions(module):
            g = self._function(fn)
            if g is not None:
                new_globals.append(g)
        if new_globals:
            with ir.InsertionPoint(body.operations[0]):
                for g in new_globals:
                    ir.InsertionPoint.current.insert(g)

    def _function(self, fn: ir.Operation):
        block = fn.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        position = {op: i for i, op in enumerate(ops)}
        allocs, intervals, deallocs = [], [], []
        for i, op in enumerate(ops):
            if op.name != "gpu.alloc" or len(op.operands):
                continue
            size = _nbytes(op.results[0].type)
            if size is None or _handed_on(op.results[0]):
                continue
            frees = [u.owner for u in op.results[0].uses
                     if getattr(u.owner, "name", None) == "gpu.dealloc"]
            frees = [f.operation if hasattr(f, "operation") else f for f in frees]
            end = max([position.get(f, len(ops)) for f in frees], default=len(ops))
            allocs.append(op)
            intervals.append((i, end, size))
            deallocs.append(frees)
        if not allocs:
            return None
        offsets, total = plan_offsets(intervals, self.alignment)
        fn_name = symbol_name(fn)
        arena_t = ir.MemRefType.get([total], ir.IntegerType.get_signless(8))
        with ir.InsertionPoint(ops[0]), fn.location:
            arena, glob = persistent_buffer(arena_global_name(fn_name), arena_t)
        for op, off, frees in zip(allocs, offsets, deallocs):
            with ir.InsertionPoint(op), op.location:
                view = memref.ViewOp(op.results[0].type, arena, index(off), []).result
            op.results[0].replace_all_uses_with(view)
            for f in frees:
                f.erase()
            op.erase()
        return glob


def _handed_on(value: ir.Value) -> bool:
    """Whether ``value`` (or a view of it) is an init operand of a loop or
    yielded: its owner then frees it elsewhere than in its own block."""
    for v in aliases_of(value):
        for user, number in _compat.uses_of(v):
            if user.name in _HANDED_ON and not (user.name in VIEW_OPS and number == 0):
                return True
    return False

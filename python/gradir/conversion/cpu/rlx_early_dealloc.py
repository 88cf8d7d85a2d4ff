"""rlx-early-dealloc: frees each intermediate buffer right after its last use."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass
from ..memref_views import aliases_of, ancestor_in_block

@dataclass(frozen=True)
class RlxEarlyDealloc(ModulePass):
    """Frees each block-local buffer right after its last use.

    Moves ``memref.dealloc`` of a ``memref.alloc`` of the same block up to
    just after the last op of that block that uses the buffer or a view of
    it (uses inside nested regions count as uses by the enclosing op).

    MLIR's ownership-based ``buffer-deallocation-pipeline`` frees buffers at
    the end of the block that allocates them, so a straight-line function
    holds every intermediate until it returns: peak memory is the sum of all
    intermediates.  Run after ``buffer-deallocation-pipeline`` and
    ``convert-bufferization-to-memref``; the peak then follows liveness, which
    is what ``rlx-memory-report`` and ``remat=auto`` plan for.

        %a = memref.alloc() : memref<4xf32>
        "use"(%a)
        %b = memref.alloc() : memref<4xf32>
        "use"(%b)
        memref.dealloc %a : memref<4xf32>
        memref.dealloc %b : memref<4xf32>
    becomes
        %a = memref.alloc() : memref<4xf32>
        "use"(%a)
        memref.dealloc %a : memref<4xf32>
        %b = memref.alloc() : memref<4xf32>
        ...
    """

    name = "rlx-early-dealloc"

    def apply(self, module: ir.Operation) -> None:
        # the blocks holding deallocs, in walk order (MLIR's walk: no op of
        # the module is wrapped for Python but the deallocs)
        blocks = {}
        for dealloc in _compat.collect_ops(module, lambda o: o.name == "memref.dealloc"):
            blocks.setdefault(dealloc.block, None)
        for block in blocks:
            _hoist_deallocs(block)


def _hoist_deallocs(block: ir.Block) -> None:
    # Plain ir.Operations from MLIR's C API throughout (_compat.block_ops,
    # defining_op, uses_of): no op is wrapped in an OpView, which would import
    # the Python module of its dialect (linalg: 28 ms; issue 14, compile time).
    ops = _compat.block_ops(block)
    if not any(op.name == "memref.dealloc" for op in ops):
        return
    index = {op: i for i, op in enumerate(ops)}
    moves = []
    for op in ops:
        if op.name != "memref.dealloc":
            continue
        buf = op.operands[0]
        owner = _compat.defining_op(buf)
        if owner is None:
            continue                         # a block argument: not ours to move
        if owner.name != "memref.alloc" or owner not in index:
            continue
        last = owner
        for alias in aliases_of(buf):
            for user, _ in _compat.uses_of(alias):
                if user == op:
                    continue
                anc = ancestor_in_block(user, block)
                if anc is None:
                    last = None              # used outside this block: leave it
                    break
                if index[anc] > index[last]:
                    last = anc
            if last is None:
                break
        if last is not None and index[last] + 1 < index[op]:
            moves.append((op, last))
    for op, last in moves:
        op.move_after(last)

"""Which memref values share a buffer (views), for buffer-level passes."""

from __future__ import annotations

from mlir import ir

__all__ = ["VIEW_OPS", "aliases_of"]

# Ops whose result views (aliases) the buffer of their first operand.
VIEW_OPS = frozenset({"memref.subview", "memref.expand_shape", "memref.collapse_shape",
                      "memref.cast", "memref.reinterpret_cast", "memref.view",
                      "memref.reshape", "memref.transpose", "memref.memory_space_cast",
                      "memref.assume_alignment"})


def aliases_of(value: ir.Value) -> list[ir.Value]:
    """``value`` and every view derived from it (transitively)."""
    out, todo = [], [value]
    while todo:
        v = todo.pop()
        out.append(v)
        for use in v.uses:
            user = use.owner
            user = user.operation if hasattr(user, "operation") else user
            if user.name in VIEW_OPS and use.operand_number == 0:
                todo.extend(user.results)
    return out

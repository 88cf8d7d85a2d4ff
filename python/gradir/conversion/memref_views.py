"""Buffer-level helpers shared by the CPU and GPU passes: which memref values
share a buffer (views), walking nested ops, the ancestor of an op in a block."""

from __future__ import annotations

from mlir import ir

from .. import _compat
from ..ir import walk as ir_walk

__all__ = ["VIEW_OPS", "aliases_of", "walk", "ancestor_in_block"]

# Ops whose result views (aliases) the buffer of their first operand.
VIEW_OPS = frozenset({"memref.subview", "memref.expand_shape", "memref.collapse_shape",
                      "memref.cast", "memref.reinterpret_cast", "memref.view",
                      "memref.reshape", "memref.transpose", "memref.memory_space_cast",
                      "memref.assume_alignment"})


def aliases_of(value: ir.Value) -> list[ir.Value]:
    """``value`` and every view derived from it (transitively; through
    ``scf.execute_region`` results too).  The users
    are looked at as plain ``ir.Operation``s (``_compat.uses_of``: no
    ``OpView``, no import of their dialects' Python modules)."""
    out, todo = [], [value]
    while todo:
        v = todo.pop()
        out.append(v)
        for user, operand_number in _compat.uses_of(v):
            if user.name in VIEW_OPS and operand_number == 0:
                todo.extend(user.results)
            elif user.name == "scf.yield":
                # yielded out of an scf.execute_region (rlx-to-linalg's
                # regions around kernel matmuls): its result is the view
                region = _compat.parent_op(user)
                if region is not None and region.name == "scf.execute_region":
                    todo.append(region.results[operand_number])
    return out


def _outside_kernels(op: ir.Operation) -> bool:
    return op.name != "gpu.launch"


def walk(op: ir.Operation, *, into_kernels: bool = True):
    """Every op nested in ``op`` (pre-order, ``op`` excluded); with
    ``into_kernels=False`` the bodies of ``gpu.launch`` are skipped."""
    return ir_walk(op, descend=None if into_kernels else _outside_kernels)


def ancestor_in_block(op: ir.Operation, block: ir.Block):
    """The ancestor of ``op`` (possibly ``op``) whose block is ``block``, or
    None; a plain ``ir.Operation`` (``_compat.parent_op``)."""
    op = op.operation
    while op is not None:
        parent = _compat.parent_op(op)
        if parent is None:
            return None     # a top-level op: no block (asking its block aborts)
        if op.block == block:
            return op
        op = parent
    return None

"""Simplification of generated gradients (rlx-simplify-gradient's engine)."""

from __future__ import annotations

from mlir import ir

from ..transforms.rlx_cse import RlxCse
from ..transforms.rlx_dce import erase_dead_ops

__all__ = ["simplify_function"]


def simplify_function(fn: ir.Operation) -> None:
    """Simplifies one func.func in place: merges duplicates, removes dead ops."""
    RlxCse().apply(fn)
    for block in fn.regions[0].blocks:
        erase_dead_ops(block)

"""Scalars entering tensors inside control flow: ``tensor.from_elements`` of
one element (a loop's induction variable made a 0-d index tensor for
``rlx.take``) becomes ``linalg.fill``, so it is an op the CPU schedule fuses
and the GPU pipeline turns into a kernel (host code never writes a device
buffer)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...ir import walk

__all__ = ["fill_from_elements"]


def fill_from_elements(module: ir.Operation) -> None:
    for op in list(walk(module)):
        if op.name != "tensor.from_elements" or len(op.operands) != 1:
            continue
        t = ir.RankedTensorType(op.results[0].type)
        with ir.InsertionPoint(op), op.location:
            empty = tensor.EmptyOp(list(t.shape), t.element_type).result
            filled = linalg.fill(op.operands[0], outs=[empty])
        op.results[0].replace_all_uses_with(filled)
        op.erase()

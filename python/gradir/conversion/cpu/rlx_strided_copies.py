"""rlx-strided-copies: copies between non-contiguous buffers as loops, not
MLIR's element-by-element runtime call."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass

__all__ = ["RlxStridedCopies", "is_contiguous"]


def is_contiguous(t: ir.Type) -> bool:
    """Whether MLIR's ``memref.copy`` lowering copies a buffer of type ``t``
    with one ``memcpy``: a static shape whose strides are row-major
    contiguous (identity layout, or a strided layout with those strides and
    any offset)."""
    mt = ir.MemRefType(t)
    if not mt.has_static_shape:
        return False
    strides, _ = mt.get_strides_and_offset()
    expect = 1
    for size, stride in zip(reversed(mt.shape), reversed(strides)):
        if size != 1 and stride != expect:
            return False
        expect *= size
    return True


@dataclass(frozen=True)
class RlxStridedCopies(ModulePass):
    """Makes each copy between non-contiguous buffers a linalg.copy (loops, not memrefCopy).

    Each ``memref.copy`` whose source or target is not a contiguous buffer
    becomes a ``linalg.copy``, which the CPU pipeline lowers to loops
    (parallel loops at threads > 1) that LLVM vectorizes or turns into
    ``memcpy`` calls per row.

    MLIR lowers such a copy to a call of ``memrefCopy`` (CRunnerUtils; the
    exported libraries' copy of it), which copies one element at a time
    through ``memcpy`` of the element's size.  Bufferization makes these
    copies wherever a tensor is written into part of a larger one: the
    zero-padded input of every convolution with padding, concatenations,
    slices written back.  A CIFAR-sized ResNet step (3x3 convolutions with
    padding 1, batch 32; bench/cnn.py) spent 16% of its time in them.
    Copies between contiguous buffers stay ``memref.copy`` (one ``memcpy``).
    Run after bufferization, before the linalg ops are lowered to loops.

        memref.copy %a, %s : memref<2x3xf32> to memref<2x3xf32, strided<[5, 1], offset: 6>>
    becomes
        linalg.copy ins(%a : memref<2x3xf32>)
                    outs(%s : memref<2x3xf32, strided<[5, 1], offset: 6>>)
    """

    name = "rlx-strided-copies"

    def apply(self, module: ir.Operation) -> None:
        copies = _compat.collect_ops(module, lambda o: o.name == "memref.copy")
        for op in copies:
            src, dst = op.operands[0], op.operands[1]
            if not isinstance(src.type, ir.MemRefType) or not isinstance(dst.type, ir.MemRefType):
                continue            # unranked buffers: left to the runtime's copy
            if is_contiguous(src.type) and is_contiguous(dst.type):
                continue                    # (rank 0 included)
            with ir.InsertionPoint(op), op.location:
                _compat.linalg.copy(src, outs=[dst])
            op.erase()

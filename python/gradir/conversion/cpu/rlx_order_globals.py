"""rlx-order-globals: a module's memref.globals in the order of their first use."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass

__all__ = ["RlxOrderGlobals"]


@dataclass(frozen=True)
class RlxOrderGlobals(ModulePass):
    """Puts the module's ``memref.global`` ops first, in the order in which
    a walk of the module first reads them (``memref.get_global``); globals
    no op reads follow in name order.

    ``one-shot-bufferize`` makes a ``memref.global`` of each constant
    tensor, and the order in which it inserts them follows pointer-keyed
    maps: the same input gives a different order from one process to the
    next (a program with several small constants, such as the 2-element
    tensors left after ``rlx-scalarize``).  The CPU and GPU pipelines run
    this pass right after bufferization, so that their output is
    byte-identical run to run, as every gradir pass's is.

        memref.global "private" constant @b : memref<2xf32> = dense<0.0>
        memref.global "private" constant @a : memref<f32> = dense<1.0>
        func.func @f() { %0 = memref.get_global @a ... %1 = memref.get_global @b ... }
    becomes
        memref.global "private" constant @a : memref<f32> = dense<1.0>
        memref.global "private" constant @b : memref<2xf32> = dense<0.0>
        func.func @f() { ... }
    """

    name = "rlx-order-globals"

    def apply(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        ops = _compat.block_ops(body)
        globals_ = {}
        for op in ops:
            if op.name == "memref.global":
                globals_[ir.StringAttr(op.attributes["sym_name"]).value] = op
        if len(globals_) < 2:
            return
        order: dict[str, int] = {}
        for read in _compat.collect_ops(module, lambda o: o.name == "memref.get_global"):
            name = ir.FlatSymbolRefAttr(read.attributes["name"]).value
            if name in globals_ and name not in order:
                order[name] = len(order)
        ranked = sorted(globals_, key=lambda n: (n not in order, order.get(n, 0), n))
        # from the last to the first, each moved to the top of the module
        for name in reversed(ranked):
            first = body.operations[0]
            if first != globals_[name]:
                globals_[name].move_before(first)

"""rlx-widen-bool-memrefs: stores i1 memrefs as i8, so MemRefToLLVM accepts them."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from ... import _compat
from ...passes.base import ModulePass


def _is_i1(t) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def _is_i1_memref(t: ir.Type) -> bool:
    return isinstance(t, ir.MemRefType) and _is_i1(t.element_type)


def _widen(t: ir.Type) -> ir.Type:
    if isinstance(t, ir.MemRefType) and _is_i1(t.element_type):
        mt = ir.MemRefType(t)
        return ir.MemRefType.get(list(mt.shape), ir.IntegerType.get_signless(8),
                                 mt.layout, mt.memory_space)
    return t


# Dialects whose ops neither yield a memref of i1 nor hold regions with one
# (vector.type_cast yields memrefs of vectors; of arith only select may yield a
# memref): most ops of a vectorized module, whose result types need not be
# looked at (issue 14, compile time: 6.5 -> 3 ms on the LeNet step).
_NO_MEMREF_RESULTS = ("vector.", "arith.", "math.")


def _has_i1(op) -> bool:
    """Whether ``op`` has an i1 memref (result, region argument, or
    signature), stores an i1 or loads one (plain loops: this runs on every
    op of the module)."""
    name = op.name
    if name == "func.func":
        return True
    if name.startswith(_NO_MEMREF_RESULTS) and name != "arith.select":
        return False
    if name == "memref.store":
        return _is_i1(op.operands[0].type)
    if name == "memref.load":
        return _is_i1(op.results[0].type)
    for r in op.results:
        if _is_i1_memref(r.type):
            return True
    if len(op.regions):
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    if _is_i1_memref(a.type):
                        return True
    return False


@dataclass(frozen=True)
class RlxWidenBoolMemrefs(ModulePass):
    """Retypes every ``memref<...xi1>`` to ``memref<...xi8>``.

    MLIR 22's MemRefToLLVM asserts on loads and stores of sub-byte elements;
    the ownership-based deallocation of buffers that loops return
    (``bufferization.dealloc`` lowered by ``convert-bufferization-to-memref``)
    keeps its ownership flags in i1 memrefs.  Stores widen their value with
    ``arith.extui``; loads read the byte and compare it with 0.  Run after
    ``convert-bufferization-to-memref``.

        %m = memref.alloc() : memref<2xi1>
        memref.store %f, %m[%c0] : memref<2xi1>
        %v = memref.load %m[%c0] : memref<2xi1>
    becomes
        %m = memref.alloc() : memref<2xi8>
        %e = arith.extui %f : i1 to i8
        memref.store %e, %m[%c0] : memref<2xi8>
        %b = memref.load %m[%c0] : memref<2xi8>
        %v = arith.cmpi ne, %b, %c0_i8 : i8
    """

    name = "rlx-widen-bool-memrefs"

    def apply(self, module: ir.Operation) -> None:
        for op in _compat.collect_ops(module, _has_i1):
            if op.name == "func.func":
                self._retype_signature(op)
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.arguments:
                        if _widen(arg.type) != arg.type:
                            arg.set_type(_widen(arg.type))
            if op.name == "memref.store" and _is_i1(op.operands[0].type):
                with ir.InsertionPoint(op), op.location:
                    wide = arith.ExtUIOp(ir.IntegerType.get_signless(8), op.operands[0]).result
                op.operands[0] = wide
            if op.name == "memref.load" and _is_i1(op.results[0].type):
                self._widen_load(op)
                continue
            for r in op.results:
                if _widen(r.type) != r.type:
                    r.set_type(_widen(r.type))

    @staticmethod
    def _widen_load(op) -> None:
        old = op.results[0]
        byte = ir.IntegerType.get_signless(8)
        old.set_type(byte)
        ops = [o.operation for o in op.block.operations]
        after = next(ops[i + 1] for i, o in enumerate(ops) if o == op)  # a terminator follows
        with ir.InsertionPoint(after), op.location:
            zero = arith.ConstantOp(byte, 0).result
            flag = arith.CmpIOp(arith.CmpIPredicate.ne, old, zero)
        uses = [u for u in old.uses if u.owner != flag.operation]
        for use in uses:
            use.owner.operands[use.operand_number] = flag.result

    @staticmethod
    def _retype_signature(fn) -> None:
        ft = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        ins = [_widen(t) for t in ft.inputs]
        outs = [_widen(t) for t in ft.results]
        if ins != list(ft.inputs) or outs != list(ft.results):
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ins, outs))

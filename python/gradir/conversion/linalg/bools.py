"""Boolean tensors are stored as i8 (0 or 1), one byte per element as numpy
stores ``bool``.  MLIR 22 cannot lower ``memref<...xi1>`` loads and stores
(MemRefToLLVM asserts on sub-byte element types), so before the patterns run,
every ``tensor<...xi1>`` of a function (signature, block arguments, op
results, constants) is retyped to ``tensor<...xi8>``.  rlx/grad ops accept
the new type (their IRDL constraints only ask for a tensor); the lowerings
read an i8 tensor as booleans: gradir has no other i8 tensors (the verifier
rejects them).
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ...ir import function_type, functions

__all__ = ["BOOL_STORAGE_WIDTH", "storage_type", "retype_bools"]

BOOL_STORAGE_WIDTH = 8


def _is_i1(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.width == 1


def storage_type(t: ir.Type) -> ir.Type:
    """``t`` with an i1 element type replaced by i8 (other types unchanged)."""
    if isinstance(t, ir.RankedTensorType) and _is_i1(t.element_type):
        return ir.RankedTensorType.get(list(t.shape),
                                       ir.IntegerType.get_signless(BOOL_STORAGE_WIDTH))
    return t


def _retype(v: ir.Value) -> None:
    new = storage_type(v.type)
    if new != v.type:
        v.set_type(new)


def _bool_constant(op) -> None:
    """Replaces a ``tensor<...xi1>`` ``arith.constant`` by its i8 twin."""
    t = op.results[0].type
    attr = ir.DenseElementsAttr(op.attributes["value"])
    shape = [int(d) for d in t.shape]
    if attr.is_splat:
        values = np.full(shape, bool(ir.BoolAttr(attr.get_splat_value()).value))
    else:
        values = np.array(attr, dtype=np.bool_).reshape(shape)
    new_t = storage_type(t)
    data = np.ascontiguousarray(values.astype(np.int8))
    with ir.InsertionPoint(op), op.location:
        new = arith.constant(new_t, ir.DenseElementsAttr.get(data, type=new_t))
    op.results[0].replace_all_uses_with(new)
    op.erase()


def retype_bools(module: ir.Operation) -> None:
    """Retypes every i1 tensor of every ``func.func`` in ``module`` to i8."""
    for fn in functions(module):
        _retype_function(fn)


def _retype_function(fn) -> None:
    ftype = function_type(fn)
    inputs = [storage_type(t) for t in ftype.inputs]
    results = [storage_type(t) for t in ftype.results]
    if inputs != list(ftype.inputs) or results != list(ftype.results):
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    _retype_region(fn.regions[0])


def _retype_region(region) -> None:
    """Retypes a region's block arguments and op results, loop and branch
    bodies included; ``tensor.extract`` of a bool tensor reads the i8 and
    compares it with 0 (scf.if / scf.condition take an i1)."""
    for block in region.blocks:
        for arg in block.arguments:
            _retype(arg)
        for op in list(block.operations):
            op = op.operation
            if (op.name == "arith.constant" and isinstance(op.results[0].type, ir.RankedTensorType)
                    and _is_i1(op.results[0].type.element_type)):
                _bool_constant(op)
                continue
            if op.name == "tensor.extract" and _is_i1(op.results[0].type):
                _bool_extract(op)
                continue
            for r in op.results:
                _retype(r)
            for inner in op.regions:
                _retype_region(inner)


def _bool_extract(op) -> None:
    src = op.operands[0]
    _retype(src)
    old = op.results[0]
    with ir.InsertionPoint(op), op.location:
        byte = ir.IntegerType.get_signless(BOOL_STORAGE_WIDTH)
        from mlir.dialects import tensor
        read = tensor.ExtractOp(src, list(op.operands)[1:]).result
        zero = arith.ConstantOp(byte, 0).result
        flag = arith.CmpIOp(arith.CmpIPredicate.ne, read, zero).result
    old.replace_all_uses_with(flag)
    op.erase()

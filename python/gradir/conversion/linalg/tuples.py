"""Flattening of builtin ``tuple<...>`` values: function signatures, calls
and returns take and give the tuple's tensors (depth-first, in order);
``rlx.tuple``, ``rlx.tuple_get_item`` and grad markers on tuples vanish.

Every function keeps its original type in the discardable attribute
``gradir.original_type``, from which the runtime re-nests the results:

    func.func @f(%t: tuple<tensor<2xf32>, tuple<tensor<f32>>>) -> tuple<tensor<2xf32>, tensor<f32>>
becomes
    func.func @f(%a: tensor<2xf32>, %b: tensor<f32>) -> (tensor<2xf32>, tensor<f32>)
        attributes {gradir.original_type = (tuple<...>) -> tuple<...>}
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from ...dialects.infer import raw_attributes
from ...ir import function_type, functions

__all__ = ["flatten_type", "flatten_tuples", "ORIGINAL_TYPE_ATTR", "TupleError"]

ORIGINAL_TYPE_ATTR = "gradir.original_type"
_MARKERS = ("grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad")


class TupleError(Exception):
    """A tuple value used by an op that cannot take one."""

    def __init__(self, op, message):
        super().__init__(message)
        self.op = op


def flatten_type(t: ir.Type) -> list[ir.Type]:
    """The leaf types of ``t`` (depth-first); a non-tuple is its own leaf."""
    if isinstance(t, ir.TupleType):
        out = []
        for i in range(t.num_types):
            out += flatten_type(t.get_type(i))
        return out
    return [t]


def _has_tuple(types) -> bool:
    return any(isinstance(t, ir.TupleType) for t in types)


def flatten_tuples(module: ir.Operation) -> None:
    """Flattens the tuples of every ``func.func`` directly in ``module``."""
    for fn in functions(module):
        _flatten_function(fn)


def _flatten_function(fn: ir.Operation) -> None:
    ftype = function_type(fn)
    inputs, results = list(ftype.inputs), list(ftype.results)
    fn.attributes[ORIGINAL_TYPE_ATTR] = ir.TypeAttr.get(ftype)
    flat_inputs = [leaf for t in inputs for leaf in flatten_type(t)]
    flat_results = [leaf for t in results for leaf in flatten_type(t)]
    if flat_inputs != inputs or flat_results != results:
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(flat_inputs, flat_results))
    if not fn.regions[0].blocks:
        return
    block = fn.regions[0].blocks[0]
    leaves: dict = {}
    if flat_inputs != inputs:
        old = list(block.arguments)
        for arg in old:
            new = [block.add_argument(t, arg.location) for t in flatten_type(arg.type)]
            if isinstance(arg.type, ir.TupleType):
                leaves[arg] = new
            else:
                arg.replace_all_uses_with(new[0])
        _rewrite_body(block, leaves)
        for _ in old:
            block.erase_argument(0)
    else:
        _rewrite_body(block, leaves)


def _leaves_of(v: ir.Value, leaves: dict, op) -> list[ir.Value]:
    if v in leaves:
        return leaves[v]
    if isinstance(v.type, ir.TupleType):
        raise TupleError(op, f"tuple value of type {v.type} has no known elements")
    return [v]


def _rewrite_body(block: ir.Block, leaves: dict) -> None:
    dead = []
    for op in list(block.operations):
        op = op.operation
        name = op.name
        if name == "rlx.tuple":
            leaves[op.results[0]] = [x for v in op.operands for x in _leaves_of(v, leaves, op)]
            dead.append(op)
        elif name == "rlx.tuple_get_item":
            _get_item(op, leaves)
            dead.append(op)
        elif name in _MARKERS and isinstance(op.operands[0].type, ir.TupleType):
            leaves[op.results[0]] = _leaves_of(op.operands[0], leaves, op)
            dead.append(op)
        elif name == "func.call" and _has_tuple([v.type for v in op.operands] +
                                                 [r.type for r in op.results]):
            _call(op, leaves)
            dead.append(op)
        elif name == "func.return" and _has_tuple([v.type for v in op.operands]):
            with ir.InsertionPoint(op), op.location:
                func.ReturnOp([x for v in op.operands for x in _leaves_of(v, leaves, op)])
            dead.append(op)
        elif _has_tuple([v.type for v in op.operands]):
            raise TupleError(op, f"'{name}' takes a tuple operand, which rlx-to-linalg "
                                 "cannot lower")
    for op in reversed(dead):
        op.erase()


def _get_item(op, leaves):
    t = op.operands[0].type
    index = ir.IntegerAttr(op.attributes["index"]).value
    lv = _leaves_of(op.operands[0], leaves, op)
    offset = sum(len(flatten_type(t.get_type(i))) for i in range(index))
    count = len(flatten_type(t.get_type(index)))
    part = lv[offset:offset + count]
    result = op.results[0]
    if isinstance(result.type, ir.TupleType):
        leaves[result] = part
    else:
        result.replace_all_uses_with(part[0])


def _call(op, leaves):
    operands = [x for v in op.operands for x in _leaves_of(v, leaves, op)]
    result_types = [leaf for r in op.results for leaf in flatten_type(r.type)]
    attrs = raw_attributes(op)
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("func.call", results=result_types, operands=operands,
                                  attributes=attrs)
    i = 0
    for r in op.results:
        n = len(flatten_type(r.type))
        part = list(new.results)[i:i + n]
        i += n
        if isinstance(r.type, ir.TupleType):
            leaves[r] = part
        else:
            r.replace_all_uses_with(part[0])

"""Sizes and FLOP counts of rlx ops: the cost model behind rlx-memory-report
and automatic rematerialization.

``type_bytes(t)`` is the storage of a value of type ``t`` (a tuple holds its
fields).  ``op_flops(op)`` counts floating-point operations, one per
multiply or add:

- elementwise ops, ``where``, comparisons: one per result element;
- ``matmul``: ``2 * M * N * K`` (times the batch);
- reductions, ``cumsum``, ``collapse_sum_to``: one per input element
  (``variance`` three);
- ``softmax``/``log_softmax`` five, ``layer_norm`` eight, ``rms_norm`` five,
  ``cross_entropy_with_logits`` five per input element, ``nll_loss`` one;
- ``conv2d``: ``2 * out elements * in channels per group * KH * KW``;
  ``conv2d_transpose`` the same from the input side; pooling and its
  backward: one per window element;
- data movement and creation (``reshape``, ``permute_dims``,
  ``broadcast_to``, slices, ``concat``, tuples, ``zeros``, constants,
  ``astype``) and the grad markers: zero;
- ``func.call``: the callee's body, when the module has it.
"""

from __future__ import annotations

import math

from mlir import ir

from ..dialects.ops import BINARY, COMPARE, UNARY
from ..dialects.util import numel, shape_of
from ..ir import find_function

__all__ = ["type_bytes", "element_bytes", "numel", "op_flops", "block_flops",
           "function_flops", "COSTED_OPS"]


def element_bytes(t: ir.Type) -> int:
    """Bytes of one element of type ``t`` (an integer of width 1 takes one)."""
    if isinstance(t, ir.FloatType):
        return max(1, ir.FloatType(t).width // 8)
    if isinstance(t, ir.IntegerType):
        return max(1, (ir.IntegerType(t).width + 7) // 8)
    if isinstance(t, ir.IndexType):
        return 8
    if isinstance(t, ir.ComplexType):
        return 2 * element_bytes(ir.ComplexType(t).element_type)
    return 8


def type_bytes(t: ir.Type) -> int:
    """The bytes a value of type ``t`` occupies (tuples: their fields)."""
    if isinstance(t, ir.TupleType):
        tt = ir.TupleType(t)
        return sum(type_bytes(tt.get_type(i)) for i in range(tt.num_types))
    if isinstance(t, ir.ShapedType):
        return numel(t) * element_bytes(ir.ShapedType(t).element_type)
    return element_bytes(t)


_ZERO = frozenset({
    "rlx.permute_dims", "rlx.reshape", "rlx.broadcast_to", "rlx.expand_dims", "rlx.squeeze",
    "rlx.flatten", "rlx.concat", "rlx.split", "rlx.strided_slice", "rlx.take", "rlx.triu",
    "rlx.zeros", "rlx.ones", "rlx.full", "rlx.zeros_like", "rlx.ones_like", "rlx.astype",
    "rlx.tuple", "rlx.tuple_get_item", "arith.constant", "func.return",
    "grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad",
})

# One FLOP per result element.
_PER_OUTPUT = frozenset({f"rlx.{n}" for n in UNARY + BINARY + COMPARE} | {"rlx.where"})

_PER_INPUT = {"rlx.sum": 1, "rlx.mean": 1, "rlx.max": 1, "rlx.min": 1, "rlx.prod": 1,
              "rlx.variance": 3, "rlx.cumsum": 1, "rlx.collapse_sum_to": 1,
              "rlx.softmax": 5, "rlx.log_softmax": 5, "rlx.layer_norm": 8,
              "rlx.rms_norm": 5, "rlx.cross_entropy_with_logits": 5, "rlx.nll_loss": 1}


# Counted by their own formula in ``op_flops``.
_FORMULA = frozenset({"rlx.matmul", "rlx.conv2d", "rlx.conv2d_transpose", "rlx.max_pool2d",
                      "rlx.avg_pool2d", "rlx.max_pool2d_backward", "rlx.avg_pool2d_backward",
                      "rlx.max_pool2d_with_indices", "rlx.max_pool2d_indices_backward",
                      "func.call"})

# Every op the model knows (test/layout/op_tables.py checks it covers the dialects).
COSTED_OPS = _ZERO | _PER_OUTPUT | set(_PER_INPUT) | _FORMULA


def _shape(v) -> list[int]:
    """The shape of a tensor value; [] for anything else."""
    return shape_of(v) if isinstance(v.type, ir.ShapedType) else []


def _window(op) -> int:
    attr = op.attributes["pool_size"] if "pool_size" in op.attributes else None
    if attr is None:
        return 1
    return int(math.prod(int(v) for v in ir.DenseI64ArrayAttr(attr)))


def op_flops(op, module: ir.Operation | None = None, _depth: int = 0) -> int:
    """Floating-point operations of one op (see the module docstring)."""
    op = op.operation
    name = op.name
    if name in _ZERO:
        return 0
    if name in _PER_INPUT:
        return _PER_INPUT[name] * numel(op.operands[0].type)
    if name == "rlx.matmul":
        a = _shape(op.operands[0])
        k = a[-1] if a else 1
        return 2 * numel(op.results[0].type) * k
    if name == "rlx.conv2d":
        w = _shape(op.operands[1])           # O, I/groups, KH, KW
        per_out = int(math.prod(w[1:])) if len(w) == 4 else 1
        return 2 * numel(op.results[0].type) * per_out
    if name == "rlx.conv2d_transpose":
        w = _shape(op.operands[1])           # I, O/groups, KH, KW
        per_in = int(math.prod(w[1:])) if len(w) == 4 else 1
        return 2 * numel(op.operands[0].type) * per_in
    if name in ("rlx.max_pool2d", "rlx.avg_pool2d", "rlx.max_pool2d_with_indices"):
        return numel(op.results[0].type) * _window(op)
    if name in ("rlx.max_pool2d_backward", "rlx.avg_pool2d_backward",
                "rlx.max_pool2d_indices_backward"):
        return numel(op.operands[0].type) * _window(op)
    if name == "func.call":
        return _call_flops(op, module, _depth)
    if op.regions:
        return region_flops(op, module, _depth)
    if name in _PER_OUTPUT or name.startswith("rlx."):
        # Elementwise arithmetic, comparisons, where (and an rlx op the model
        # does not know yet): one per result element.
        return sum(numel(r.type) for r in op.results)
    return 0


def static_trips(op) -> int | None:
    """The trip count of an ``scf.for`` with constant bounds, else None."""
    if op.name != "scf.for":
        return None
    vals = [_index_value(v) for v in list(op.operands)[:3]]
    if None in vals:
        return None
    lb, ub, step = vals
    return max(0, -((lb - ub) // step)) if step > 0 else None


_INDEX_ARITH = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b, "arith.maxsi": max, "arith.minsi": min,
    "arith.ceildivsi": lambda a, b: -(-a // b) if b else None,
    "arith.divsi": lambda a, b: int(a / b) if b else None,
}


def _index_value(v, depth: int = 0):
    """An index computed from constants by arith ops, else None."""
    owner = getattr(v.owner, "operation", v.owner)
    if not isinstance(owner, ir.Operation) or depth > 16:
        return None
    if owner.name == "arith.constant":
        attr = owner.attributes["value"]
        return int(ir.IntegerAttr(attr).value) if isinstance(attr, ir.IntegerAttr) else None
    fn = _INDEX_ARITH.get(owner.name)
    if fn is None:
        return None
    a, b = (_index_value(x, depth + 1) for x in owner.operands)
    return None if a is None or b is None else fn(a, b)


def region_flops(op, module, depth: int) -> int:
    """``scf.for``: trips x its body (one trip when the count is not static);
    ``scf.if``: the costlier branch; ``scf.while``: one trip."""
    per_region = [sum(block_flops(b, module, depth) for b in r.blocks) for r in op.regions]
    if op.name == "scf.if":
        return max(per_region, default=0)
    trips = static_trips(op)
    return sum(per_region) * (1 if trips is None else trips)


def _call_flops(op, module, depth: int) -> int:
    if module is None or depth > 16:
        return 0
    f = find_function(module, ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
    if f is None or not f.regions[0].blocks:
        return 0
    return block_flops(f.regions[0].blocks[0], module, depth + 1)


def block_flops(block: ir.Block, module: ir.Operation | None = None, _depth: int = 0) -> int:
    return sum(op_flops(op, module, _depth) for op in block.operations)


def function_flops(fn: ir.Operation, module: ir.Operation | None = None) -> int:
    """FLOPs of one execution of ``fn``'s body (straight-line code)."""
    fn = fn.operation
    if module is None:
        parent = fn.parent
        module = parent.operation if parent is not None else None
    return sum(block_flops(b, module) for b in fn.regions[0].blocks)

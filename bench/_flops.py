"""A FLOP count per rlx op, for bench/simplify.py (not a gradir module).

One FLOP per multiply or add:
- elementwise ops, comparisons, ``where``: one per result element;
- ``matmul``: ``2 * M * N * K`` per batch element;
- ``conv2d``: ``2 * output elements * (C / groups) * KH * KW``;
  ``conv2d_transpose``: the same counted from its input;
- reductions, ``collapse_sum_to``, ``cumsum``: one per input element
  (``variance`` three); ``softmax``/``log_softmax`` five, ``layer_norm``
  eight, ``rms_norm`` five, ``cross_entropy_with_logits`` five per input
  element, ``nll_loss`` one;
- pooling: one per window element of the output; pooling backward: one per
  window element of the incoming gradient;
- data movement and creation (reshape, permute_dims, broadcast_to, slices,
  concat, split, take, zeros/ones/full, constants, astype, tuples, grad
  markers): zero.
"""

from __future__ import annotations

import math

from mlir import ir

__all__ = ["op_flops", "function_flops"]

_FREE = frozenset({
    "rlx.permute_dims", "rlx.reshape", "rlx.broadcast_to", "rlx.expand_dims", "rlx.squeeze",
    "rlx.flatten", "rlx.concat", "rlx.split", "rlx.strided_slice", "rlx.take", "rlx.zeros",
    "rlx.ones", "rlx.full", "rlx.zeros_like", "rlx.ones_like", "rlx.astype", "rlx.tuple",
    "rlx.tuple_get_item", "arith.constant", "func.return", "grad.start_checkpoint",
    "grad.end_checkpoint", "grad.no_grad",
})

_PER_INPUT = {"rlx.sum": 1, "rlx.mean": 1, "rlx.max": 1, "rlx.min": 1, "rlx.prod": 1,
              "rlx.variance": 3, "rlx.cumsum": 1, "rlx.collapse_sum_to": 1, "rlx.softmax": 5,
              "rlx.log_softmax": 5, "rlx.layer_norm": 8, "rlx.rms_norm": 5,
              "rlx.cross_entropy_with_logits": 5, "rlx.nll_loss": 1}


def _numel(v: ir.Value) -> int:
    t = v.type
    return math.prod(ir.RankedTensorType(t).shape) if isinstance(t, ir.RankedTensorType) else 1


def _shape(v: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(v.type).shape)


def _window(op: ir.Operation) -> int:
    if "pool_size" not in op.attributes:
        return 1
    return math.prod(int(d) for d in ir.DenseI64ArrayAttr(op.attributes["pool_size"]))


def op_flops(op) -> int:
    op = op.operation
    name = op.name
    if name in _FREE:
        return 0
    if name in _PER_INPUT:
        return _PER_INPUT[name] * _numel(op.operands[0])
    if name == "rlx.matmul":
        a = _shape(op.operands[0])
        return 2 * _numel(op.results[0]) * (a[-1] if a else 1)
    if name == "rlx.conv2d":
        return 2 * _numel(op.results[0]) * math.prod(_shape(op.operands[1])[1:])
    if name == "rlx.conv2d_transpose":
        return 2 * _numel(op.operands[0]) * math.prod(_shape(op.operands[1])[1:])
    if name in ("rlx.max_pool2d", "rlx.avg_pool2d"):
        return _numel(op.results[0]) * _window(op)
    if name in ("rlx.max_pool2d_backward", "rlx.avg_pool2d_backward"):
        return _numel(op.operands[0]) * _window(op)
    if name.startswith("rlx."):
        return sum(_numel(r) for r in op.results)
    raise ValueError(f"no FLOP count for {name}")


def function_flops(fn) -> int:
    fn = fn.operation
    return sum(op_flops(op) for region in fn.regions for block in region.blocks
               for op in block.operations)

"""rlx-distinct-results: every value a function returns gets its own fresh buffer."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...ir import functions
from ...passes.base import ModulePass

__all__ = ["RlxDistinctResults"]

# Ops whose result may share its operand's buffer after bufferization (the
# rlx ones lower to such views).
_TENSOR_VIEWS = frozenset({"tensor.collapse_shape", "tensor.expand_shape", "tensor.cast",
                           "tensor.extract_slice", "tensor.reshape", "tensor.bitcast",
                           "rlx.reshape", "rlx.flatten", "rlx.squeeze", "rlx.expand_dims",
                           "grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad"})


@dataclass(frozen=True)
class RlxDistinctResults(ModulePass):
    """Copies returned tensors that would not be a buffer of their own.

    ``buffer-results-to-out-params{hoist-static-allocs}`` turns results into
    caller-allocated out-params; upstream it crashes (SIGSEGV) on a function
    that returns one value twice (``return %1, %2, %2``: the gradient of
    ``sum(x + y)``), and a result that is an argument or a constant is no
    buffer the function owns.  This pass, run on linalg-on-tensors right
    before bufferization, makes each such result a copy into a fresh tensor:
    a returned value (seen through reshapes, casts and slices) that is a block
    argument, a constant, or the same buffer as an earlier result.

        return %a, %a, %arg0 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    becomes
        %0 = bufferization.alloc_tensor() : tensor<3xf32>
        %1 = linalg.copy ins(%a : tensor<3xf32>) outs(%0 : tensor<3xf32>) -> tensor<3xf32>
        %2 = bufferization.alloc_tensor() : tensor<3xf32>
        %3 = linalg.copy ins(%arg0 : tensor<3xf32>) outs(%2 : tensor<3xf32>) -> tensor<3xf32>
        return %a, %1, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    """

    name = "rlx-distinct-results"

    def apply(self, module: ir.Operation) -> None:
        # MLIR's walk and C API: no op is wrapped for Python (issue 14,
        # compile time: wrapping every op of the function cost 3 ms on the
        # LeNet step, and a linalg op imports mlir.dialects.linalg)
        for fn in functions(module, nested=True):
            for block in fn.regions[0].blocks:
                ret = _compat.terminator(block)
                if ret is not None and ret.name == "func.return":
                    _distinct(ret)


def _root(value: ir.Value) -> tuple[ir.Value, bool]:
    """The value whose buffer ``value`` is, and whether that buffer is not
    the function's own (an argument or a constant)."""
    while True:
        owner = _compat.defining_op(value)
        if owner is None:
            return value, True
        if owner.name in ("arith.constant", "bufferization.to_tensor", "memref.get_global"):
            return value, True
        if owner.name in _TENSOR_VIEWS:
            value = owner.operands[0]
            continue
        return value, False


def _distinct(ret: ir.Operation) -> None:
    seen: list[ir.Value] = []
    for i, value in enumerate(list(ret.operands)):
        if not isinstance(value.type, ir.RankedTensorType):
            continue
        root, foreign = _root(value)
        shared = any(root == other for other in seen)
        seen.append(root)
        if not (foreign or shared):
            continue
        if not ir.RankedTensorType(value.type).has_static_shape:
            continue
        # imported here: most programs need no copy (issue 14, compile time)
        from mlir.dialects import bufferization
        with ir.InsertionPoint(ret), ret.location:
            fresh = bufferization.alloc_tensor(value.type, [])
            copy = linalg.copy(value, outs=[fresh])
        ret.operands[i] = copy

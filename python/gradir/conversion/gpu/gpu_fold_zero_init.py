"""gpu-fold-zero-init: sums into a zero-filled tensor start from zero in
the kernel instead (no fill kernel, no copy, no read of the init)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import tensor

from ...passes.base import ModulePass
from .common import walk

__all__ = ["GpuFoldZeroInit", "ZERO_INIT"]

ZERO_INIT = "gradir.zero_init"
# Combiners whose identity is zero.
_ZERO_IDENTITY = frozenset({"arith.addf", "arith.addi", "arith.ori", "arith.xori"})


def _defining(v: ir.Value):
    owner = v.owner
    if isinstance(owner, (ir.Operation, ir.OpView)):
        return owner.operation if hasattr(owner, "operation") else owner
    return None


def _is_zero_constant(v: ir.Value) -> bool:
    op = _defining(v)
    if op is None or op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return attr.value == 0.0 and str(attr).lstrip().startswith("0")
    if isinstance(attr, ir.IntegerAttr):
        return attr.value == 0
    if isinstance(attr, ir.DenseElementsAttr) and attr.is_splat:
        return _is_zero_attr(attr.get_splat_value())
    return False


def _is_zero_attr(attr) -> bool:
    if isinstance(attr, ir.FloatAttr):
        return attr.value == 0.0 and not str(attr).lstrip().startswith("-")
    if isinstance(attr, ir.IntegerAttr):
        return attr.value == 0
    return False


def _segments(op: ir.Operation):
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    ops = list(op.operands)
    return ops[:sizes[0]], ops[sizes[0]:sizes[0] + sizes[1]], sizes[0]


def is_zero_fill(v: ir.Value) -> bool:
    """``v`` is a tensor filled with zero (linalg.fill, its generic form, or
    a splat constant)."""
    if _is_zero_constant(v):
        return True
    op = _defining(v)
    if op is None:
        return False
    if op.name == "linalg.fill":
        return _is_zero_constant(op.operands[0])
    if op.name != "linalg.generic":
        return False
    ins, outs, _ = _segments(op)
    if len(ins) != 1 or len(outs) != 1 or isinstance(ins[0].type, ir.ShapedType):
        return False
    if any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return False
    body = op.regions[0].blocks[0]
    ops = [o.operation for o in body.operations]
    return (len(ops) == 1 and ops[0].name == "linalg.yield"
            and ops[0].operands[0] == body.arguments[0] and _is_zero_constant(ins[0]))


def _accumulates_from_zero_identity(op: ir.Operation, j: int, n_in: int) -> bool:
    """Output ``j``'s block argument is used once, by a zero-identity
    combiner whose result is what the body yields for output ``j``."""
    body = op.regions[0].blocks[0]
    arg = body.arguments[n_in + j]
    uses = list(arg.uses)
    if len(uses) != 1:
        return False
    user = uses[0].owner
    user = user.operation if hasattr(user, "operation") else user
    if user.name not in _ZERO_IDENTITY:
        return False
    yield_op = [o.operation for o in body.operations][-1]
    return yield_op.operands[j] == user.results[0]


@dataclass(frozen=True)
class GpuFoldZeroInit(ModulePass):
    """Lets reductions into a zero fill start from zero in their kernels.

    A ``linalg.generic`` (on tensors) with reduction iterators whose every
    ``outs`` is a zero fill and whose every output accumulates with a
    combiner of identity zero (add, or, xor) gets the unit attribute
    ``gradir.zero_init`` and ``tensor.empty`` outs; gpu-linalg-to-kernels
    then never reads the output before writing it.  This saves the fill
    kernel, the copy bufferization inserts when one fill feeds several
    matmuls, and the read of C in the GEMM epilogue.  Run after
    ``linalg-generalize-named-ops`` (which drops discardable attributes) and
    before bufferization; only gpu-linalg-to-kernels understands the
    attribute (on the CPU pipeline it would be wrong).

        %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x5xf32>)
        %m = linalg.generic {... "reduction"} ins(%a, %b) outs(%z) {... arith.addf %out, %p ...}
    becomes
        %e2 = tensor.empty() : tensor<4x5xf32>
        %m = linalg.generic {... "reduction"} ins(%a, %b) outs(%e2) {...} {gradir.zero_init}
    """

    name = "gpu-fold-zero-init"

    def apply(self, module: ir.Operation) -> None:
        for op in list(walk(module)):
            if op.name != "linalg.generic" or ZERO_INIT in op.attributes:
                continue
            if not any("reduction" in str(a)
                       for a in ir.ArrayAttr(op.attributes["iterator_types"])):
                continue
            ins, outs, n_in = _segments(op)
            if not outs or not all(isinstance(o.type, ir.RankedTensorType) for o in outs):
                continue
            if not all(is_zero_fill(o) and _accumulates_from_zero_identity(op, j, n_in)
                       for j, o in enumerate(outs)):
                continue
            with ir.InsertionPoint(op), op.location:
                for j, o in enumerate(outs):
                    t = o.type
                    empty = tensor.EmptyOp(list(t.shape), t.element_type).result
                    op.operands[n_in + j] = empty
            op.attributes[ZERO_INIT] = ir.UnitAttr.get()

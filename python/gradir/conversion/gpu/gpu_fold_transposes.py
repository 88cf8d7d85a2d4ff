"""gpu-fold-transposes: transposes and broadcasts feeding a linalg.generic
become the consumer's indexing map (no kernel, no intermediate buffer);
casts (``arith.extf``) feeding a multiplication of a contraction move into
its body (a bf16 matmul reads its bf16 operands: tensor-core GEMMs)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from ...passes.base import ModulePass
from .common import walk

__all__ = ["GpuFoldTransposes", "copy_source"]


def _op(x):
    return x.operation if hasattr(x, "operation") else x


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _segments(op: ir.Operation):
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    ops = list(op.operands)
    return ops[:sizes[0]], ops[sizes[0]:sizes[0] + sizes[1]]


def copy_source(v: ir.Value):
    """``(x, in_map)`` when ``v`` is a tensor computed by a pure copy
    ``linalg.generic`` (transpose, broadcast or plain copy: one input read
    through a projected permutation, identity output map, all loops
    parallel, body ``yield %in``); else None."""
    owner = v.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)):
        return None
    op = _op(owner)
    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    ins, outs = _segments(op)
    if len(ins) != 1 or len(outs) != 1 or not isinstance(ins[0].type, ir.RankedTensorType):
        return None
    if any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    in_map, out_map = _maps(op)
    if out_map != ir.AffineMap.get_identity(out_map.n_dims) or in_map.n_symbols:
        return None
    if not all(isinstance(e, ir.AffineDimExpr) for e in in_map.results):
        return None
    body = op.regions[0].blocks[0]
    ops = [_op(o) for o in body.operations]
    if len(ops) != 1 or ops[0].operands[0] != body.arguments[0]:
        return None
    return ins[0], in_map


def cast_source(v: ir.Value):
    """``(x, in_map, cast)`` when ``v`` is a tensor computed by an
    elementwise cast generic (like ``copy_source``, the body ``yield
    arith.extf(%in)``); else None."""
    owner = v.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)):
        return None
    op = _op(owner)
    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    ins, outs = _segments(op)
    if len(ins) != 1 or len(outs) != 1 or not isinstance(ins[0].type, ir.RankedTensorType):
        return None
    if any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    in_map, out_map = _maps(op)
    if out_map != ir.AffineMap.get_identity(out_map.n_dims) or in_map.n_symbols:
        return None
    if not all(isinstance(e, ir.AffineDimExpr) for e in in_map.results):
        return None
    body = op.regions[0].blocks[0]
    ops = [_op(o) for o in body.operations]
    if len(ops) != 2 or ops[0].name != "arith.extf" or ops[0].operands[0] != body.arguments[0]:
        return None
    if ops[1].operands[0] != ops[0].results[0]:
        return None
    return ins[0], in_map, ops[0]


def _multiplied(op: ir.Operation, k: int) -> bool:
    """Whether input ``k`` of the contraction ``op`` (2 inputs, one output,
    a reduction loop) is read once, by an ``arith.mulf``."""
    ins, outs = _segments(op)
    if len(ins) != 2 or len(outs) != 1:
        return False
    if not any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return False
    uses = list(op.regions[0].blocks[0].arguments[k].uses)
    return len(uses) == 1 and _op(uses[0].owner).name == "arith.mulf"


def _loops_determined(maps: list[ir.AffineMap]) -> bool:
    """Whether every loop dimension is still some operand's dimension (what
    linalg.generic's verifier needs: the concatenated maps invertible).
    Folding a broadcast along a dimension no other operand has, e.g. the
    reduced one of ``sum(broadcast(x))``, would leave that loop's extent
    unknown."""
    seen = {ir.AffineDimExpr(e).position for m in maps for e in m.results
            if isinstance(e, ir.AffineDimExpr)}
    return all(d in seen for d in range(maps[0].n_dims))


@dataclass(frozen=True)
class GpuFoldTransposes(ModulePass):
    """Reads transposed or broadcast tensors through the consumer's indexing map.

    A ``linalg.generic`` input computed by a pure copy generic (what
    ``linalg.transpose``, ``linalg.broadcast`` and ``linalg.copy`` become
    after ``linalg-generalize-named-ops``) is replaced by the copy's own
    input, with the consumer's indexing map composed with the copy's: the
    copy's kernel and its buffer go (canonicalize removes dead copies), and
    the GEMM kernels of gpu-linalg-to-kernels read transposed operands in
    place (coalesced either way).  Likewise an ``arith.extf`` generic
    (a cast, possibly transposed) feeding the multiplication of a
    contraction (two inputs, a reduction loop): the contraction reads the
    narrow tensor and casts in its body, which is how the GEMM kernels see
    bf16/f16 operands (tensor cores) and read half the bytes.  On tensors, after generalization.  A
    broadcast along a loop dimension that no other operand of the consumer
    has (the reduced dimension of a sum of a broadcast) stays: folding it
    would leave that loop without an extent.

        %t = linalg.generic {maps = [(i, j) -> (j, i), (i, j) -> (i, j)]} ins(%w) outs(%e)
        %m = linalg.generic {maps = [(m, n, k) -> (m, k), (m, n, k) -> (k, n), ...]} ins(%a, %t)
    becomes
        %m = linalg.generic {maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k), ...]} ins(%a, %w)
    """

    name = "gpu-fold-transposes"

    def apply(self, module: ir.Operation) -> None:
        changed = True
        while changed:
            changed = False
            for op in list(walk(module)):
                if op.name == "linalg.generic" and self._fold(op):
                    changed = True

    def _fold(self, op: ir.Operation) -> bool:
        ins, _ = _segments(op)
        maps = _maps(op)
        folded = False
        casts = []
        for k, v in enumerate(ins):
            src = copy_source(v)
            cast = None
            if src is None:
                src = cast_source(v) if _multiplied(op, k) else None
                if src is None:
                    continue
                x, in_map, cast = src
            else:
                x, in_map = src
            consumer = maps[k]
            results = [consumer.results[e.position] for e in in_map.results]
            candidate = maps[:k] + [ir.AffineMap.get(consumer.n_dims, consumer.n_symbols,
                                                     results)] + maps[k + 1:]
            if not _loops_determined(candidate):
                continue
            maps = candidate
            op.operands[k] = x
            if cast is not None:
                casts.append((k, cast))
            folded = True
        for k, cast in casts:
            _cast_in_body(op, k, cast)
        if folded:
            op.attributes["indexing_maps"] = ir.ArrayAttr.get(
                [ir.AffineMapAttr.get(m) for m in maps])
        return folded


def _cast_in_body(op: ir.Operation, k: int, cast: ir.Operation) -> None:
    """Block argument ``k`` of ``op`` takes its (narrow) operand's element
    type, cast as ``cast`` did at the start of the body."""
    block = op.regions[0].blocks[0]
    arg = block.arguments[k]
    wide = arg.type
    arg.set_type(cast.operands[0].type)
    with ir.InsertionPoint.at_block_begin(block), cast.location:
        new = arith.ExtFOp(wide, arg)
    arg.replace_all_uses_except(new.result, new.operation)

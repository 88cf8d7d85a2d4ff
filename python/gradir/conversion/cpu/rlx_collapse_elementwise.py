"""rlx-collapse-elementwise: the trailing loops of an elementwise generic on
short rows merged into one, so the CPU schedule's elementwise vectorization
(rows of at least two vectors) takes it.

Batch norm's loops over 32x64x8x8 NCHW tensors read per-channel operands
through ``(d0, d1, d2, d3) -> (0, d1, 0, 0)``: rows of 8 elements, and a map
the schedule's matcher (projected permutations only) refuses, so they ran as
scalar loops.  Every operand either spans the trailing loops contiguously
(identity-like) or ignores them all, so the loops collapse:

    linalg.generic {maps = [(d0,d1,d2,d3), (0,d1,0,0), (d0,d1,d2,d3)]}
        ins(%x, %c : tensor<32x64x8x8xf32>, tensor<1x64x1x1xf32>) ...
becomes
    %xc = tensor.collapse_shape %x [[0], [1], [2, 3]] : ... into tensor<32x64x64xf32>
    %cc = tensor.collapse_shape %c [[0, 1, 2, 3]] : ... into tensor<64xf32>
    linalg.generic {maps = [(d0,d1,d2), (d1), (d0,d1,d2)]} ins(%xc, %cc ...)
    tensor.expand_shape ... into tensor<32x64x8x8xf32>

Run after elementwise fusion, before the elementwise schedule."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor

from ... import _compat
from ...passes.base import ModulePass

__all__ = ["RlxCollapseElementwise", "MIN_ROW"]

# Generics whose innermost loop is shorter than this are collapsed (the
# elementwise schedule vectorizes rows of two vectors; rows of 16, one
# AVX-512 vector, LLVM vectorized alone: 32x32x16x16 batch norm 0.334 ms
# before, 0.344 collapsed).
MIN_ROW = 16

_ELIDED = ("indexing_maps", "iterator_types", "operandSegmentSizes")


def _dims(m: ir.AffineMap, shape) -> list | None:
    """The loop dims of ``m``'s results, None for a constant 0 on a unit
    dim; None overall when a result is anything else."""
    out = []
    for e, n in zip(m.results, shape):
        if isinstance(e, ir.AffineDimExpr):
            out.append(ir.AffineDimExpr(e).position)
        elif isinstance(e, ir.AffineConstantExpr) and ir.AffineConstantExpr(e).value == 0 \
                and n == 1:
            out.append(None)
        else:
            return None
    kept = [d for d in out if d is not None]
    if len(set(kept)) != len(kept):
        return None
    return out


def _plan(op):
    """(k, per-operand dims) for ``op``: its last k >= 2 loops collapse."""
    if op.name != "linalg.generic" or not op.results:
        return None
    its = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    n = len(its)
    if n < 2 or any("parallel" not in a for a in its):
        return None
    # (a body reading its loop indices would need them re-expanded)
    if _compat.collect_ops(op, lambda o: o.name == "linalg.index"):
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape
               for t in types):
        return None
    shapes = [list(ir.RankedTensorType(t).shape) for t in types]
    # (several results: rlx-merge-elementwise's merged loops)
    for init in maps[len(maps) - len(op.results):]:
        if not init.is_permutation or [ir.AffineDimExpr(e).position for e in init.results] \
                != list(range(n)):
            return None
    loop = shapes[-1]
    if loop[-1] >= MIN_ROW or 0 in loop:
        return None
    dims = [_dims(m, s) for m, s in zip(maps, shapes)]
    if any(d is None for d in dims):
        return None
    best = 0
    for k in range(2, n + 1):
        trail = list(range(n - k, n))
        ok = True
        for d in dims:
            kept = [x for x in d if x is not None]
            inside = [x for x in kept if x >= n - k]
            if inside and kept[-k:] != trail:
                ok = False
                break
        if ok:
            best = k
    if best < 2:
        return None
    return best, dims, shapes, maps


def _reassociation(d: list, n: int, k: int) -> tuple[list, list]:
    """Groups of ``d``'s results (unit dims join their neighbour) and the
    new map's loop dims."""
    groups, loops = [], []
    pending = []
    for i, x in enumerate(d):
        if x is None:
            pending.append(i)
            continue
        if x >= n - k and loops and loops[-1] == n - k:
            groups[-1] += pending + [i]
        else:
            groups.append(pending + [i])
            loops.append(min(x, n - k))
        pending = []
    if pending:
        if groups:
            groups[-1] += pending
        # all unit dims: a rank-0 operand (no groups)
    return groups, loops


class RlxCollapseElementwise(ModulePass):
    """Collapses the trailing parallel loops of elementwise generics with
    rows shorter than ``MIN_ROW`` where every operand reads them as one
    contiguous span or not at all (module docstring)."""

    name = "rlx-collapse-elementwise"

    def apply(self, module: ir.Operation) -> None:
        for op in _compat.collect_ops(module, lambda o: o.name == "linalg.generic"):
            plan = _plan(op)
            if plan is not None:
                _collapse(op, *plan)


def _collapse(op, k, dims, shapes, maps) -> None:
    n = len(shapes[-1])
    nd = n - k + 1
    iterator = ir.ArrayAttr(op.attributes["iterator_types"])[0]
    new_vals, new_maps = [], []
    with ir.InsertionPoint(op), op.location:
        for v, d, s in zip(op.operands, dims, shapes):
            groups, loops = _reassociation(d, n, k)
            shape = [_prod(s[i] for i in g) for g in groups]
            et = ir.RankedTensorType(v.type).element_type
            if [list(g) for g in groups] == [[i] for i in range(len(s))]:
                nv = v
            else:
                nv = tensor.CollapseShapeOp(ir.RankedTensorType.get(shape, et), v,
                                            _reassoc_attr(groups)).result
            new_vals.append(nv)
            new_maps.append(ir.AffineMapAttr.get(ir.AffineMap.get(
                nd, 0, [ir.AffineDimExpr.get(x) for x in loops])))
        n_in = len(op.operands) - len(op.results)
        new = linalg.GenericOp([v.type for v in new_vals[n_in:]], new_vals[:n_in],
                               new_vals[n_in:],
                               ir.ArrayAttr.get(new_maps), ir.ArrayAttr.get([iterator] * nd))
        for a in op.attributes:
            name = a if isinstance(a, str) else a.name
            if name not in _ELIDED:
                new.attributes[name] = op.attributes[name]
        old = op.regions[0].blocks[0]
        block = new.regions[0].blocks.append(*[a.type for a in old.arguments])
        for a, b in zip(old.arguments, block.arguments):
            a.replace_all_uses_with(b)
        ip = ir.InsertionPoint(block)
        for o in list(old.operations):
            o.detach_from_parent()
            ip.insert(o)
        groups, _ = _reassociation(dims[-1], n, k)
        expanded = [tensor.ExpandShapeOp(r.type, nr, _reassoc_attr(groups), [],
                                         ir.DenseI64ArrayAttr.get(shapes[-1])).result
                    for r, nr in zip(op.results, new.results)]
    for r, e in zip(op.results, expanded):
        r.replace_all_uses_with(e)
    op.erase()


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _reassoc_attr(groups) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in g])
                             for g in groups])

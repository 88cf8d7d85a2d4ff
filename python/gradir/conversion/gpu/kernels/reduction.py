"""Block reductions: a generic whose every output is ``combine(out, e)`` with a
known combiner (add, mul, max, min, and, or, xor; several outputs allowed).

A block handles a group of outputs; its threads stride over the reduction
space (along the innermost dimension, or along the outer one when the
innermost loop is parallel, so loads stay coalesced), then combine their
partial results in a tree in workgroup memory.  When the outputs alone do not
fill the GPU and the combiners have atomics, the reduction space is split
over more blocks that accumulate atomically (after a zero-fill kernel)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from ..common import index
from .common import (REDUCTION, Cloner, Generic, KernelContext, apply_map, binary, const,
                     defining, delinearize, if_, launch, load_operand, pow2_ceil, ult,
                     workgroup_type)

__all__ = ["COMBINERS", "ATOMIC", "atomic_type", "match_reduction", "build_reduction",
           "reduction_splits"]

# Reduction combiners the block reductions know, with their identity.
_INF = float("inf")
COMBINERS = {
    "arith.addf": 0.0, "arith.mulf": 1.0, "arith.maximumf": -_INF, "arith.minimumf": _INF,
    "arith.maxnumf": -_INF, "arith.minnumf": _INF, "arith.addi": 0, "arith.muli": 1,
    "arith.ori": 0, "arith.xori": 0, "arith.andi": -1, "arith.maxsi": "smin",
    "arith.minsi": "smax", "arith.maxui": 0, "arith.minui": -1,
}
# Combiners with an atomic read-modify-write (for split reductions).
ATOMIC = {"arith.addf": arith.AtomicRMWKind.addf, "arith.addi": arith.AtomicRMWKind.addi,
          "arith.maximumf": arith.AtomicRMWKind.maximumf,
          "arith.minimumf": arith.AtomicRMWKind.minimumf,
          "arith.maxsi": arith.AtomicRMWKind.maxs, "arith.minsi": arith.AtomicRMWKind.mins,
          "arith.maxui": arith.AtomicRMWKind.maxu, "arith.minui": arith.AtomicRMWKind.minu,
          "arith.ori": arith.AtomicRMWKind.ori, "arith.andi": arith.AtomicRMWKind.andi}


def atomic_type(t: ir.Type) -> bool:
    """Element types with hardware atomics."""
    return str(t) in ("f32", "f64", "i32", "i64")


# --- matching ---------------------------------------------------------------------

def match_reduction(gen: Generic):
    """Combiner op names, one per output, when every yielded value is
    ``combine(out_arg, e)`` with ``e`` independent of the output args and
    the output arg used only there; else None."""
    n_in = len(gen.inputs)
    out_args = gen.body_args[n_in:]
    yielded = list(gen.terminator().operands)
    if len(yielded) != len(out_args):
        return None
    names = []
    for j, (y, arg) in enumerate(zip(yielded, out_args)):
        op = defining(y)
        if op is None or op.name not in COMBINERS or op.block != gen.block:
            return None
        ops = list(op.operands)
        if ops[0] == arg:
            other = ops[1]
        elif ops[1] == arg:
            other = ops[0]
        else:
            return None
        uses = [u for u in arg.uses]
        if len(uses) != 1:
            return None
        if _depends_on(other, set(out_args)):
            return None
        if not gen.outputs[j].type.element_type == y.type:
            return None
        names.append(op.name)
    return names


def _depends_on(v: ir.Value, args: set, seen=None) -> bool:
    if v in args:
        return True
    op = defining(v)
    if op is None:
        return False
    seen = set() if seen is None else seen
    if op in seen:
        return False
    seen.add(op)
    if any(_depends_on(o, args, seen) for o in op.operands):
        return True
    for region in op.regions:
        for b in region.blocks:
            for inner in b.operations:
                if any(_depends_on(o, args, seen) for o in inner.operation.operands):
                    return True
    return False


# --- the kernel -------------------------------------------------------------------

@dataclass(frozen=True)
class ReductionLayout:
    """How a block reduction maps onto blocks and threads.

    ``inner``: the innermost loop reduces, so thread x strides over the
    reduction (``tree`` = bx threads per output, ``lanes`` = by outputs per
    block); otherwise thread x walks the outputs and thread y the reduction.
    ``splits`` blocks share one output's reduction space, ``chunk`` units each."""
    prange: list
    rrange: list
    ptot: int
    rtot: int
    inner: bool
    bx: int
    by: int
    grid: int
    tree: int
    lanes: int
    splits: int
    chunk: int
    out_types: list


@dataclass(frozen=True)
class _Thread:
    """One thread's place: its output ``p`` (clamped: ``pvals``), its ``lane``
    in the tree, and ``valid`` (None when every thread has an output)."""
    tx: ir.Value
    ty: ir.Value
    lane: ir.Value
    valid: ir.Value | None
    pvals: list


def _layout(ctx: KernelContext, gen: Generic, combiners: list) -> ReductionLayout:
    prange = [gen.ranges[d] for d in gen.parallel]
    rrange = [gen.ranges[d] for d in gen.reduction]
    ptot, rtot = math.prod(prange), math.prod(rrange)
    inner = gen.iterators[-1] == REDUCTION
    bs = ctx.options.block_size
    if inner:
        bx = min(bs, pow2_ceil(max(rtot, 1)))
        by = max(1, min(bs // bx, ptot))
        grid = -(-ptot // by)
        tree, lanes = bx, by
    else:
        bx = min(32, pow2_ceil(ptot))
        by = min(max(1, bs // bx), pow2_ceil(max(rtot, 1)))
        grid = -(-ptot // bx)
        tree, lanes = by, bx
    out_types = [o.type.element_type for o in gen.outputs]
    splits = 1
    if all(c in ATOMIC for c in combiners) and all(atomic_type(t) for t in out_types):
        splits = ctx.split_count(grid, rtot, tree * 16)
    return ReductionLayout(prange=prange, rrange=rrange, ptot=ptot, rtot=rtot, inner=inner,
                           bx=bx, by=by, grid=grid, tree=tree, lanes=lanes, splits=splits,
                           chunk=-(-rtot // splits), out_types=out_types)


def reduction_splits(ctx: KernelContext, gen: Generic, combiners: list) -> int:
    """How many blocks share each output's reduction space (1: not split)."""
    return _layout(ctx, gen, combiners).splits


def build_reduction(ctx: KernelContext, gen: Generic, combiners: list) -> None:
    """A block-reduction ``gpu.launch`` (after a zero-fill kernel when split)."""
    if math.prod(gen.ranges[d] for d in gen.parallel) == 0:
        return
    lay = _layout(ctx, gen, combiners)
    if lay.splits > 1 and gen.zero_init:
        if len(gen.outputs) > 1 and all(_covers_parallel(gen, gen.maps[len(gen.inputs) + j])
                                        for j in range(len(gen.outputs))):
            _zero_fill_all(ctx, gen, lay)
        else:
            for out in gen.outputs:
                ctx.zero_fill(out)
    wg = [workgroup_type([lay.by, lay.bx], t) for t in lay.out_types]
    kind = "reduce_split" if lay.splits > 1 else "reduce"
    _, body, ids, smem = launch([lay.grid, lay.splits], [lay.bx, lay.by], wg,
                                name=ctx.namer(kind))
    with ir.InsertionPoint(body):
        thread = _thread(lay, ids)
        partials = _accumulate(gen, lay, combiners, thread, ids[1])
        _tree(lay, combiners, smem, thread, partials)
        _write(gen, lay, combiners, smem, thread)
        gpu.TerminatorOp()


def _covers_parallel(gen: Generic, amap: ir.AffineMap) -> bool:
    """Each output element belongs to one point of the parallel space."""
    dims = {ir.AffineDimExpr(e).position for e in amap.results
            if isinstance(e, ir.AffineDimExpr)}
    return all(d in dims or gen.ranges[d] == 1 for d in gen.parallel)


def _zero_fill_all(ctx: KernelContext, gen: Generic, lay: ReductionLayout) -> None:
    """One kernel storing zero in every output (a thread per point of the
    parallel space), before the split kernels accumulate atomically."""
    threads = min(ctx.options.block_size, max(lay.ptot, 1))
    blocks = -(-lay.ptot // threads)
    _, body, ids, _ = launch([blocks], [threads], name=ctx.namer("zero"))
    with ir.InsertionPoint(body):
        gid = arith.addi(arith.muli(ids[0], index(threads)), ids[3])
        guard = if_(ult(gid, lay.ptot))
        with ir.InsertionPoint(guard.then_block):
            dims = [d if d is not None else index(0)
                    for d in gen.dims(parallel=delinearize(gid, lay.prange))]
            n_in = len(gen.inputs)
            for j, out in enumerate(gen.outputs):
                memref.StoreOp(const(out.type.element_type, 0), out,
                               apply_map(gen.maps[n_in + j], dims))
            scf.YieldOp([])
        gpu.TerminatorOp()


def _thread(lay: ReductionLayout, ids: list) -> _Thread:
    bid, tx, ty = ids[0], ids[3], ids[4]
    if lay.inner:
        p = ty if lay.grid == 1 else arith.addi(arith.muli(bid, index(lay.by)), ty)
        lane = tx
    else:
        p = tx if lay.grid == 1 else arith.addi(arith.muli(bid, index(lay.bx)), tx)
        lane = ty
    valid = ult(p, lay.ptot) if lay.grid * lay.lanes != lay.ptot else None
    pc = p if valid is None else arith.minui(p, index(lay.ptot - 1))
    return _Thread(tx=tx, ty=ty, lane=lane, valid=valid, pvals=delinearize(pc, lay.prange))


def _accumulate(gen: Generic, lay: ReductionLayout, combiners: list, thread: _Thread,
                split_id: ir.Value) -> list:
    """The thread's strided loop over its share of the reduction space;
    returns its partial results (identities for threads without an output)."""
    lo, hi = thread.lane, index(lay.rtot)
    if lay.splits > 1:
        start = arith.muli(split_id, index(lay.chunk))
        lo = arith.addi(start, thread.lane)
        hi = arith.minui(arith.addi(start, index(lay.chunk)), index(lay.rtot))
    ub = hi if thread.valid is None else arith.select(thread.valid, hi, index(0))
    idents = [const(t, COMBINERS[c]) for c, t in zip(combiners, lay.out_types)]
    loop = scf.ForOp(lo, ub, index(lay.tree), idents)
    with ir.InsertionPoint(loop.body):
        dims = gen.dims(parallel=thread.pvals,
                        reduction=delinearize(loop.induction_variable, lay.rrange))
        ins = [load_operand(gen, k, dims) if gen.used(k) else None
               for k in range(len(gen.inputs))]
        scf.YieldOp(Cloner.body(gen, ins + list(loop.inner_iter_args), dims))
    return list(loop.results)


def _tree(lay: ReductionLayout, combiners: list, smem: list, thread: _Thread,
          partials: list) -> None:
    """The partials to workgroup memory, then a tree of halving steps that
    leaves each output's total at lane 0."""
    tx, ty = thread.tx, thread.ty
    for buf, v in zip(smem, partials):
        memref.StoreOp(v, buf, [ty, tx])
    gpu.BarrierOp()
    s = lay.tree // 2
    while s >= 1:
        active = if_(ult(thread.lane, s))
        with ir.InsertionPoint(active.then_block):
            other = [ty, arith.addi(tx, index(s))] if lay.inner else \
                [arith.addi(ty, index(s)), tx]
            for buf, c in zip(smem, combiners):
                a = memref.LoadOp(buf, [ty, tx]).result
                b = memref.LoadOp(buf, other).result
                memref.StoreOp(binary(c, a, b), buf, [ty, tx])
            scf.YieldOp([])
        gpu.BarrierOp()
        s //= 2


def _write(gen: Generic, lay: ReductionLayout, combiners: list, smem: list,
           thread: _Thread) -> None:
    """Lane 0 of each valid output combines the total into it (atomically
    when split)."""
    first = arith.cmpi(arith.CmpIPredicate.eq, thread.lane, index(0))
    if thread.valid is not None:
        first = arith.andi(first, thread.valid)
    write = if_(first)
    with ir.InsertionPoint(write.then_block):
        dims = gen.dims(parallel=thread.pvals)
        n_in = len(gen.inputs)
        for j, (out, buf, c) in enumerate(zip(gen.outputs, smem, combiners)):
            idx = apply_map(gen.maps[n_in + j], dims)
            total = memref.LoadOp(buf, [thread.ty, thread.tx]).result
            if lay.splits > 1:
                memref.AtomicRMWOp(ATOMIC[c], total, out, idx)
                continue
            if not gen.zero_init:
                init = memref.LoadOp(out, idx).result
                total = binary(c, init, total)
            memref.StoreOp(total, out, idx)
        scf.YieldOp([])

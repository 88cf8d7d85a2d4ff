"""Tiled GEMM: contractions ``C[b,m,n] += A[b,m,k] * B[b,k,n]`` (matmul,
batch_matmul, transposed operands, optional casts of A and B).

A 16x16-thread block computes a BMxBN tile of C, staging BKxBM and BKxBN tiles
of A and B in workgroup memory (coalesced loads, padded against bank
conflicts), each thread accumulating TMxTN outputs in registers.  The tile
size is chosen so the grid fills the GPU; when even the smallest tiles do
not, the K loop is split over more blocks that accumulate atomically."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf
from mlir.dialects import math as math_d

from ..common import index
from .common import (Generic, KernelContext, apply_map, as_op, binary, clone_unary, const,
                     defining, delinearize, if_, launch, ult, workgroup_type)
from .reduction import ATOMIC, atomic_type

__all__ = ["GEMM_CONFIGS", "GemmMatch", "GemmTiling", "match_gemm", "gemm_worthwhile",
           "build_gemm"]

# GEMM tile configurations: (BM, BN, BK, TM, TN) for 16x16 threads; the
# first whose grid fills the GPU wins (see GemmTiling.plan).
GEMM_CONFIGS = ((128, 128, 8, 8, 8), (64, 64, 16, 4, 4), (32, 32, 16, 2, 2),
                (16, 16, 16, 1, 1))
THREADS = 16          # threads per block along x and y
_CASTS = frozenset({"arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp",
                    "arith.extsi", "arith.extui"})


@dataclass(frozen=True)
class GemmMatch:
    """The loop dims of a contraction generic and its body's ops."""
    m: int
    n: int
    k: int
    batch: list
    mul: str                  # "arith.mulf" or "arith.muli"
    add: str                  # "arith.addf" or "arith.addi"
    a_cast: ir.Operation | None
    b_cast: ir.Operation | None


# --- matching ---------------------------------------------------------------------

def match_gemm(gen: Generic) -> GemmMatch | None:
    """``C[b,m,n] += A[b,m,k] * B[b,k,n]`` (any operand layouts, optional
    casts of A and B), or None."""
    if len(gen.inputs) != 2 or len(gen.outputs) != 1 or len(gen.reduction) != 1:
        return None
    if not all(isinstance(v.type, ir.MemRefType) for v in gen.operands):
        return None
    dims_of = []
    for amap in gen.maps:
        if amap.n_symbols or not all(isinstance(e, ir.AffineDimExpr) for e in amap.results):
            return None
        dims_of.append({ir.AffineDimExpr(e).position for e in amap.results})
    sa, sb, sc = dims_of
    k = gen.reduction[0]
    if k not in sa or k not in sb or k in sc:
        return None
    batch = sorted(sa & sb & sc)
    ms = sorted((sa & sc) - sb)
    ns = sorted((sb & sc) - sa)
    if len(ms) != 1 or len(ns) != 1 or set(batch + ms + ns) != set(gen.parallel):
        return None
    if len(gen.maps[2].results) != len(sc):
        return None
    ops = _match_body(gen)
    if ops is None:
        return None
    mul, add, casts = ops
    return GemmMatch(m=ms[0], n=ns[0], k=k, batch=batch, mul=mul, add=add,
                     a_cast=casts["a"], b_cast=casts["b"])


def _match_body(gen: Generic):
    """``yield add(c, mul(cast?(a), cast?(b)))``: (mul name, add name, casts)."""
    ops = [as_op(o) for o in gen.block.operations]
    a_arg, b_arg, c_arg = gen.body_args
    y = list(gen.terminator().operands)
    if len(y) != 1:
        return None
    add = defining(y[0])
    if add is None or add.name not in ("arith.addf", "arith.addi"):
        return None
    x, z = list(add.operands)
    if z == c_arg:
        x, z = z, x
    if x != c_arg:
        return None
    mul = defining(z)
    if mul is None or mul.name != ("arith.mulf" if add.name == "arith.addf" else "arith.muli"):
        return None
    casts = {}
    for v in mul.operands:
        src, cast = v, None
        op = defining(v)
        if op is not None and op.name in _CASTS:
            src, cast = op.operands[0], op
        if src == a_arg and "a" not in casts:
            casts["a"] = cast
        elif src == b_arg and "b" not in casts:
            casts["b"] = cast
        else:
            return None
    if len(ops) - 1 != 2 + sum(c is not None for c in casts.values()):
        return None
    return mul.name, add.name, casts


def gemm_worthwhile(gen: Generic, g: GemmMatch) -> bool:
    """Tiles pay off from 8x8 outputs per batch element."""
    return gen.ranges[g.m] >= 8 and gen.ranges[g.n] >= 8


# --- planning ---------------------------------------------------------------------

@dataclass(frozen=True)
class GemmTiling:
    """Sizes, tiles and the grid of one GEMM kernel."""
    M: int
    N: int
    K: int
    brange: list              # batch extents
    bm: int                   # block tile (BM x BN outputs, BK deep)
    bn: int
    bk: int
    tm: int                   # outputs per thread (TM x TN)
    tn: int
    a_kinner: bool            # A's innermost memory dim is K
    b_kinner: bool
    ktiles: int
    splits: int               # blocks sharing one output tile's K range
    per: int                  # K tiles per split
    grid: list

    @classmethod
    def plan(cls, ctx: KernelContext, gen: Generic, g: GemmMatch) -> "GemmTiling":
        r = gen.ranges
        M, N, K = r[g.m], r[g.n], r[g.k]
        brange = [r[d] for d in g.batch]
        bm, bn, bk, tm, tn = _config(ctx, gen, g)
        ktiles = -(-K // bk)
        blocks = -(-N // bn) * -(-M // bm) * math.prod(brange)
        acc_t = gen.outputs[0].type.element_type
        splits = ctx.split_count(blocks, ktiles, 8) if atomic_type(acc_t) else 1
        per = -(-ktiles // splits)
        splits = -(-ktiles // per)
        return cls(M=M, N=N, K=K, brange=brange, bm=bm, bn=bn, bk=bk, tm=tm, tn=tn,
                   a_kinner=_innermost_dim(gen.maps[0]) == g.k,
                   b_kinner=_innermost_dim(gen.maps[1]) == g.k,
                   ktiles=ktiles, splits=splits, per=per,
                   grid=[-(-N // bn), -(-M // bm), math.prod(brange) * splits])

    def workgroup_types(self, gen: Generic, g: GemmMatch) -> list:
        """The A and B tiles in workgroup memory (``[BK][BM + pad]``): padded
        when consecutive threads write along K, against bank conflicts."""
        a, b = gen.inputs
        pad_a = 32 // self.bk if self.a_kinner else 0
        pad_b = 32 // self.bk if self.b_kinner else 0
        a_t = g.a_cast.results[0].type if g.a_cast is not None else a.type.element_type
        b_t = g.b_cast.results[0].type if g.b_cast is not None else b.type.element_type
        return [workgroup_type([self.bk, self.bm + pad_a], a_t),
                workgroup_type([self.bk, self.bn + pad_b], b_t)]


def _config(ctx: KernelContext, gen: Generic, g: GemmMatch):
    r = gen.ranges
    batch = math.prod(r[d] for d in g.batch)
    for cfg in GEMM_CONFIGS:
        bm, bn = cfg[0], cfg[1]
        if -(-r[g.m] // bm) * -(-r[g.n] // bn) * batch >= ctx.options.sm_count:
            return cfg
    return GEMM_CONFIGS[-1]


def _innermost_dim(amap: ir.AffineMap):
    results = list(amap.results)
    if not results or not isinstance(results[-1], ir.AffineDimExpr):
        return None
    return ir.AffineDimExpr(results[-1]).position


# --- the kernel -------------------------------------------------------------------

@dataclass(frozen=True)
class _Block:
    """Index values of one block: its thread id, tile origin and batch."""
    tid: ir.Value
    m0: ir.Value
    n0: ir.Value
    bvals: list
    rows: list                # the thread's TM rows within the tile
    cols: list                # its TN columns


@dataclass(frozen=True)
class _TileLoad:
    """The cooperative load of one operand's (BK x tile) slab into ``smem``."""
    operand: int              # 0: A, 1: B
    smem: ir.Value
    base: ir.Value            # first M (or N) index of the tile
    tile: int                 # BM (or BN)
    extent: int               # M (or N)
    k_inner: bool
    mn_dim: int
    cast: ir.Operation | None


def build_gemm(ctx: KernelContext, gen: Generic, g: GemmMatch) -> None:
    """A tiled GEMM ``gpu.launch`` (after a zero-fill kernel when split)."""
    t = GemmTiling.plan(ctx, gen, g)
    wg = t.workgroup_types(gen, g)
    c = gen.outputs[0]
    if t.splits > 1 and gen.zero_init:
        ctx.zero_fill(c)
    name = ctx.namer("gemm_splitk" if t.splits > 1 else "gemm")
    if ctx.options.gemm_min_blocks > 0:
        ctx.namer.attrs[name[1]] = {"nvvm.minctasm": ctx.options.gemm_min_blocks}
    _, body, ids, (As, Bs) = launch(t.grid, [THREADS, THREADS], wg, name=name)
    with ir.InsertionPoint(body):
        blk, zero = _block(t, ids, c.type.element_type)
        loads = (_TileLoad(0, As, blk.m0, t.bm, t.M, t.a_kinner, g.m, g.a_cast),
                 _TileLoad(1, Bs, blk.n0, t.bn, t.N, t.b_kinner, g.n, g.b_cast))
        accs = _k_loop(gen, g, t, blk, ids[2], zero, loads)
        _store(gen, g, t, blk, accs)
        gpu.TerminatorOp()


def _block(t: GemmTiling, ids: list, acc_t: ir.Type):
    """The block's index values, and the accumulators' zero."""
    bx, by, bz, tx, ty = ids[0], ids[1], ids[2], ids[3], ids[4]
    tid = arith.addi(arith.muli(ty, index(THREADS)), tx)
    m0 = arith.muli(by, index(t.bm))
    n0 = arith.muli(bx, index(t.bn))
    batch_id = bz if t.splits == 1 else arith.divui(bz, index(t.splits))
    bvals = delinearize(batch_id, t.brange) if t.brange else []
    zero = const(acc_t, 0)
    rows = [arith.addi(ty, index(THREADS * i)) if i else ty for i in range(t.tm)]
    cols = [arith.addi(tx, index(THREADS * j)) if j else tx for j in range(t.tn)]
    return _Block(tid=tid, m0=m0, n0=n0, bvals=bvals, rows=rows, cols=cols), zero


def _k_loop(gen: Generic, g: GemmMatch, t: GemmTiling, blk: _Block, bz: ir.Value,
            zero: ir.Value, loads) -> list:
    """The loop over the block's K tiles: stage A and B, then every thread
    multiplies-accumulates its TMxTN outputs; returns the accumulators."""
    k_lo, k_hi = index(0), index(t.ktiles)
    if t.splits > 1:
        k_lo = arith.muli(arith.remui(bz, index(t.splits)), index(t.per))
        k_hi = arith.minui(arith.addi(k_lo, index(t.per)), index(t.ktiles))
    loop = scf.ForOp(k_lo, k_hi, index(1), [zero] * (t.tm * t.tn))
    with ir.InsertionPoint(loop.body):
        k0 = arith.muli(loop.induction_variable, index(t.bk))
        for load in loads:
            _load_tile(gen, g, t, blk, load, k0)
        gpu.BarrierOp()
        accs = _multiply_accumulate(g, t, blk, loads[0].smem, loads[1].smem,
                                    list(loop.inner_iter_args))
        gpu.BarrierOp()
        scf.YieldOp(accs)
    return list(loop.results)


def _multiply_accumulate(g: GemmMatch, t: GemmTiling, blk: _Block, As, Bs,
                         accs: list) -> list:
    for kk in range(t.bk):
        kkv = index(kk)
        av = [memref.LoadOp(As, [kkv, blk.rows[i]]).result for i in range(t.tm)]
        bv = [memref.LoadOp(Bs, [kkv, blk.cols[j]]).result for j in range(t.tn)]
        for i in range(t.tm):
            for j in range(t.tn):
                acc = accs[i * t.tn + j]
                if g.mul == "arith.mulf" and av[i].type == acc.type:
                    # one rounding, as cuBLAS: NVPTX keeps mul.rn/add.rn apart
                    accs[i * t.tn + j] = math_d.fma(av[i], bv[j], acc)
                else:
                    prod = binary(g.mul, av[i], bv[j])
                    accs[i * t.tn + j] = binary(g.add, acc, prod)
    return accs


def _load_tile(gen: Generic, g: GemmMatch, t: GemmTiling, blk: _Block, load: _TileLoad,
               k0: ir.Value) -> None:
    """Cooperative load of the (bk x tile) slab of one operand into
    ``smem[kk][mn]``; consecutive threads read consecutive addresses."""
    operand = gen.inputs[load.operand]
    bk, bmn, K, extent = t.bk, load.tile, t.K, load.extent
    per_thread = bmn * bk // (THREADS * THREADS)
    for step in range(per_thread):
        e = arith.addi(blk.tid, index(THREADS * THREADS * step)) if step else blk.tid
        if load.k_inner:
            kk, mn = arith.remui(e, index(bk)), arith.divui(e, index(bk))
        else:
            mn, kk = arith.remui(e, index(bmn)), arith.divui(e, index(bmn))
        gk = arith.addi(k0, kk)
        gmn = arith.addi(load.base, mn)
        conds = []
        if K % bk:
            conds.append(ult(gk, K))
            gk = arith.minui(gk, index(K - 1))
        if extent % bmn:
            conds.append(ult(gmn, extent))
            gmn = arith.minui(gmn, index(extent - 1))
        dims: list = [index(0)] * len(gen.ranges)
        dims[g.k] = gk
        dims[load.mn_dim] = gmn
        for d, v in zip(g.batch, blk.bvals):
            dims[d] = v
        v = memref.LoadOp(operand, apply_map(gen.maps[load.operand], dims)).result
        if load.cast is not None:
            v = clone_unary(load.cast, v)
        if conds:
            ok = conds[0] if len(conds) == 1 else arith.andi(conds[0], conds[1])
            v = arith.select(ok, v, const(v.type, 0))
        memref.StoreOp(v, load.smem, [kk, mn])


def _store(gen: Generic, g: GemmMatch, t: GemmTiling, blk: _Block, accs: list) -> None:
    """Each thread's TMxTN results into C (bounds checked at ragged edges;
    atomically when split; added to C unless it was zero-initialized)."""
    c = gen.outputs[0]
    for i in range(t.tm):
        gm = arith.addi(blk.m0, blk.rows[i])
        for j in range(t.tn):
            gn = arith.addi(blk.n0, blk.cols[j])
            conds = []
            if t.M % t.bm:
                conds.append(ult(gm, t.M))
            if t.N % t.bn:
                conds.append(ult(gn, t.N))
            dims: list = [None] * len(gen.ranges)
            dims[g.m], dims[g.n] = gm, gn
            for d, v in zip(g.batch, blk.bvals):
                dims[d] = v
            dims[g.k] = index(0)
            value = accs[i * t.tn + j]
            if conds:
                cond = conds[0] if len(conds) == 1 else arith.andi(conds[0], conds[1])
                guard = if_(cond)
                with ir.InsertionPoint(guard.then_block):
                    _store_one(gen, g, t, c, dims, value)
                    scf.YieldOp([])
            else:
                _store_one(gen, g, t, c, dims, value)


def _store_one(gen: Generic, g: GemmMatch, t: GemmTiling, c: ir.Value, dims: list,
               value: ir.Value) -> None:
    idx = apply_map(gen.maps[2], dims)
    if t.splits > 1:
        memref.AtomicRMWOp(ATOMIC[g.add], value, c, idx)
        return
    if not gen.zero_init:
        old = memref.LoadOp(c, idx).result
        value = binary(g.add, old, value)
    memref.StoreOp(value, c, idx)

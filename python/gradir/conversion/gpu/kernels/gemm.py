"""Tiled GEMM: contractions ``C[b,m,n] += A[b,m,k] * B[b,k,n]`` (matmul,
batch_matmul, transposed operands, optional casts of A and B), and implicit
GEMMs: M, N, K and the batch may each be a group of loop dims, and A's and
B's indexing maps affine expressions of them (a convolution's
``x[n, c, y*s + ky*d, x*s + kx*d]``, ``rlx-to-linalg{direct-convolutions}``),
so a convolution's GEMM reads its input in place (no im2col matrix).

M is the loop dims of A and C not in B, N those of B and C not in A, the
batch those in all three, K every reduction dim; C's map is a projection.
Each group is linearized (its dims ordered like the operand that reads it,
so its fastest-varying dim is that operand's innermost memory dim); the tile
loads delinearize their coordinates (constant divisors) and apply the
operand's map.  A is the input whose dims give C's rows: the inputs swap
roles when C's innermost dim is one of the other input's (stores along C's
rows, coalesced).

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
from ...memref_views import VIEW_OPS
from .common import (Cloner, Generic, KernelContext, all_of, apply_map, as_op, binary,
                     clone_unary, const, defining, delinearize, if_, launch, load_operand,
                     read_input, ult, workgroup_type)
from .reduction import ATOMIC, atomic_type

__all__ = ["GEMM_CONFIGS", "GemmMatch", "GemmTiling", "match_gemm", "gemm_worthwhile",
           "build_gemm", "Epilogue", "match_epilogue"]

# GEMM tile configurations: (BM, BN, BK, TM, TN) for 16x16 threads; the
# first whose grid fills the GPU wins (see GemmTiling.plan).
GEMM_CONFIGS = ((128, 128, 8, 8, 8), (64, 64, 16, 4, 4), (32, 32, 16, 2, 2),
                (16, 16, 16, 1, 1))
THREADS = 16          # threads per block along x and y
_CASTS = frozenset({"arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp",
                    "arith.extsi", "arith.extui"})


@dataclass(frozen=True)
class GemmMatch:
    """The loop dims of a contraction generic, by group (each ordered slowest
    to fastest-varying, as linearized), and its body's ops.  ``a``/``b``:
    the inputs (0 or 1) read as the rows (M) and the columns (N)."""
    ms: list
    ns: list
    ks: list
    batch: list
    mul: str                  # "arith.mulf" or "arith.muli"
    add: str                  # "arith.addf" or "arith.addi"
    a_cast: ir.Operation | None
    b_cast: ir.Operation | None
    a: int = 0
    b: int = 1


# --- matching ---------------------------------------------------------------------

def _linear(expr):
    """``{dim: coefficient}`` of a linear affine expression (constants
    dropped), or None for mod, floordiv, ceildiv and products of dims."""
    if isinstance(expr, ir.AffineDimExpr):
        return {ir.AffineDimExpr(expr).position: 1}
    if isinstance(expr, (ir.AffineConstantExpr, ir.AffineSymbolExpr)):
        return {}
    if isinstance(expr, ir.AffineAddExpr):
        e = expr
        lhs, rhs = _linear(e.lhs), _linear(e.rhs)
        if lhs is None or rhs is None:
            return None
        out = dict(lhs)
        for d, c in rhs.items():
            out[d] = out.get(d, 0) + c
        return out
    if isinstance(expr, ir.AffineMulExpr):
        e = expr
        lhs, rhs = e.lhs, e.rhs
        if isinstance(lhs, ir.AffineConstantExpr):
            lhs, rhs = rhs, lhs
        if not isinstance(rhs, ir.AffineConstantExpr):
            return None
        inner = _linear(lhs)
        k = rhs.value
        return None if inner is None else {d: c * k for d, c in inner.items()}
    return None


def _dims_in(expr) -> set:
    """The loop dims an affine expression reads."""
    if isinstance(expr, ir.AffineDimExpr):
        return {ir.AffineDimExpr(expr).position}
    for kind in (ir.AffineAddExpr, ir.AffineMulExpr, ir.AffineModExpr,
                 ir.AffineFloorDivExpr, ir.AffineCeilDivExpr):
        if isinstance(expr, kind):
            return _dims_in(expr.lhs) | _dims_in(expr.rhs)
    return set()


def _map_dims(amap: ir.AffineMap) -> set:
    out = set()
    for e in amap.results:
        out |= _dims_in(e)
    return out


def _ordered(amap: ir.AffineMap, dims) -> list:
    """``dims`` slowest to fastest-varying in ``amap``'s operand: by the last
    result reading each (later: faster), then by decreasing coefficient;
    dims the map does not read first."""
    def key(d):
        pos, coef = -1, 0
        for i, e in enumerate(amap.results):
            if d in _dims_in(e):
                lin = _linear(e)
                pos, coef = i, abs(lin.get(d, 0)) if lin is not None else 1 << 30
        return (pos, -coef, d)
    return sorted(dims, key=key)


def match_gemm(gen: Generic) -> GemmMatch | None:
    """``C[b,m,n] += A[b,m,k] * B[b,k,n]`` with groups of dims for b, m, n
    and k (any operand layouts, affine expressions in A's and B's maps,
    optional casts of A and B), or None."""
    if len(gen.inputs) != 2 or len(gen.outputs) != 1 or not gen.reduction:
        return None
    if not all(isinstance(v.type, ir.MemRefType) for v in gen.operands):
        return None
    if any(m.n_symbols for m in gen.maps):
        return None
    cmap = gen.maps[2]
    if not all(isinstance(e, ir.AffineDimExpr) for e in cmap.results):
        return None
    cdims = [ir.AffineDimExpr(e).position for e in cmap.results]
    if len(set(cdims)) != len(cdims) or set(cdims) != set(gen.parallel):
        return None
    sa, sb = _map_dims(gen.maps[0]), _map_dims(gen.maps[1])
    if any(k not in sa | sb for k in gen.reduction):
        return None
    batch = [d for d in cdims if d in sa and d in sb]
    ms = [d for d in cdims if d in sa and d not in sb]
    ns = [d for d in cdims if d in sb and d not in sa]
    if len(batch) + len(ms) + len(ns) != len(cdims) or not ms or not ns:
        return None
    ops = _match_body(gen)
    if ops is None:
        return None
    mul, add, casts = ops
    a, b = 0, 1
    if cdims[-1] in ms:
        # C's rows would be the other input's: swap, so stores run along them
        a, b, ms, ns = 1, 0, ns, ms
        casts = {"a": casts["b"], "b": casts["a"]}
    ms = _ordered(gen.maps[a], ms)
    ns = _ordered(gen.maps[b], ns)
    ks = _ordered(gen.maps[a], gen.reduction)
    if not _k_inner(gen, gen.maps[a], ks, ms):
        ks_b = _ordered(gen.maps[b], gen.reduction)
        if _k_inner(gen, gen.maps[b], ks_b, ns):
            ks = ks_b
    return GemmMatch(ms=ms, ns=ns, ks=ks, batch=batch, mul=mul, add=add,
                     a_cast=casts["a"], b_cast=casts["b"], a=a, b=b)


def _run(gen: Generic, amap: ir.AffineMap, group: list):
    """How well consecutive indices of ``group`` (linearized) walk the
    operand's innermost memory dim: elements per address step, up to a warp
    (0: its fastest dim is not in that dim's expression)."""
    if not group or not len(amap.results):
        return 0
    inner = amap.results[len(amap.results) - 1]
    d = group[-1]
    if d not in _dims_in(inner):
        return 0
    lin = _linear(inner)
    coef = abs(lin.get(d, 0)) if lin is not None else 0
    if coef == 0:
        return 0
    return min(gen.ranges[d], 32) / coef


def _k_inner(gen: Generic, amap: ir.AffineMap, ks: list, mns: list) -> bool:
    """Whether the operand's tile loads run along K (consecutive threads,
    consecutive K indices) rather than along its M (or N) dims."""
    rk, rmn = _run(gen, amap, ks), _run(gen, amap, mns)
    return rk > rmn


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


def _extent(gen: Generic, dims) -> int:
    return math.prod(gen.ranges[d] for d in dims)


def gemm_worthwhile(gen: Generic, g: GemmMatch) -> bool:
    """Tiles pay off from 8x8 outputs per batch element."""
    return _extent(gen, g.ms) >= 8 and _extent(gen, g.ns) >= 8


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
        M, N, K = _extent(gen, g.ms), _extent(gen, g.ns), _extent(gen, g.ks)
        brange = [r[d] for d in g.batch]
        bm, bn, bk, tm, tn = _config(ctx, gen, g)
        ktiles = -(-K // bk)
        blocks = -(-N // bn) * -(-M // bm) * math.prod(brange)
        acc_t = gen.outputs[0].type.element_type
        splits = ctx.split_count(blocks, ktiles, 8) if atomic_type(acc_t) else 1
        per = -(-ktiles // splits)
        splits = -(-ktiles // per)
        return cls(M=M, N=N, K=K, brange=brange, bm=bm, bn=bn, bk=bk, tm=tm, tn=tn,
                   a_kinner=_k_inner(gen, gen.maps[g.a], g.ks, g.ms),
                   b_kinner=_k_inner(gen, gen.maps[g.b], g.ks, g.ns),
                   ktiles=ktiles, splits=splits, per=per,
                   grid=[-(-N // bn), -(-M // bm), math.prod(brange) * splits])

    def workgroup_types(self, gen: Generic, g: GemmMatch) -> list:
        """The A and B tiles in workgroup memory (``[BK][BM + pad]``): padded
        when consecutive threads write along K, against bank conflicts."""
        a, b = gen.inputs[g.a], gen.inputs[g.b]
        pad_a = 32 // self.bk if self.a_kinner else 0
        pad_b = 32 // self.bk if self.b_kinner else 0
        a_t = g.a_cast.results[0].type if g.a_cast is not None else a.type.element_type
        b_t = g.b_cast.results[0].type if g.b_cast is not None else b.type.element_type
        return [workgroup_type([self.bk, self.bm + pad_a], a_t),
                workgroup_type([self.bk, self.bn + pad_b], b_t)]


def _config(ctx: KernelContext, gen: Generic, g: GemmMatch):
    M, N, batch = _extent(gen, g.ms), _extent(gen, g.ns), _extent(gen, g.batch)
    for cfg in GEMM_CONFIGS:
        bm, bn = cfg[0], cfg[1]
        if -(-M // bm) * -(-N // bn) * batch >= ctx.options.sm_count:
            return cfg
    return GEMM_CONFIGS[-1]


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
    operand: int              # the input (0 or 1)
    smem: ir.Value
    base: ir.Value            # first M (or N) index of the tile
    tile: int                 # BM (or BN)
    extent: int               # M (or N)
    k_inner: bool
    mn_dims: list             # the M (or N) group
    cast: ir.Operation | None
    convert: object = None    # value -> value stored (tensor-core operand formats)


def build_gemm(ctx: KernelContext, gen: Generic, g: GemmMatch) -> None:
    """A tiled GEMM ``gpu.launch`` (after a zero-fill kernel when split),
    with the elementwise generic after it as its epilogue when it can be
    (``match_epilogue``).  The tensor-core variant is ``mma.build_mma``
    (gpu-linalg-to-kernels picks it by ``mma.mma_kind``)."""
    t = GemmTiling.plan(ctx, gen, g)
    wg = t.workgroup_types(gen, g)
    c = gen.outputs[0]
    epi = match_epilogue(gen) if t.splits == 1 else None
    if epi is not None:
        # the views, constants and allocations between the two (what the
        # epilogue reads may be one) go before the kernel
        for op in epi.between:
            if op.name not in _RELEASES:
                op.move_before(gen.op)
    if t.splits > 1 and gen.zero_init:
        ctx.zero_fill(c)
    name = ctx.namer("gemm_splitk" if t.splits > 1 else "gemm")
    if ctx.options.gemm_min_blocks > 0:
        ctx.namer.attrs[name[1]] = {"nvvm.minctasm": ctx.options.gemm_min_blocks}
    _, body, ids, (As, Bs) = launch(t.grid, [THREADS, THREADS], wg, name=name)
    with ir.InsertionPoint(body):
        blk, zero = _block(t, ids, c.type.element_type)
        loads = (_TileLoad(g.a, As, blk.m0, t.bm, t.M, t.a_kinner, g.ms, g.a_cast),
                 _TileLoad(g.b, Bs, blk.n0, t.bn, t.N, t.b_kinner, g.ns, g.b_cast))
        accs = _k_loop(gen, g, t, blk, ids[2], zero, loads)
        _store(gen, g, t, blk, accs, epi)
        gpu.TerminatorOp()
    if epi is not None:
        _retire(epi.gen.op)


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
            zero: ir.Value, loads, compute=None, n_acc: int | None = None) -> list:
    """The loop over the block's K tiles: stage A and B, then every thread
    multiplies-accumulates its TMxTN outputs (``compute(As, Bs, accs)``
    instead when given, with ``n_acc`` accumulators); returns the
    accumulators."""
    k_lo, k_hi = index(0), index(t.ktiles)
    if t.splits > 1:
        k_lo = arith.muli(arith.remui(bz, index(t.splits)), index(t.per))
        k_hi = arith.minui(arith.addi(k_lo, index(t.per)), index(t.ktiles))
    loop = scf.ForOp(k_lo, k_hi, index(1), [zero] * (n_acc or t.tm * t.tn))
    with ir.InsertionPoint(loop.body):
        k0 = arith.muli(loop.induction_variable, index(t.bk))
        for load in loads:
            _load_tile(gen, g, t, blk, load, k0)
        gpu.BarrierOp()
        if compute is not None:
            accs = compute(loads[0].smem, loads[1].smem, list(loop.inner_iter_args))
        else:
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
    ``smem[kk][mn]``; consecutive threads read consecutive addresses.  Zero
    past ragged M/N/K edges and in a padded input's padding (``read_input``:
    its source read in place)."""
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
        _place(gen, dims, g.ks, gk)
        _place(gen, dims, load.mn_dims, gmn)
        for d, v in zip(g.batch, blk.bvals):
            dims[d] = v
        v, inside = read_input(gen, load.operand, dims)
        if inside is not None:
            conds.append(inside)
        if load.cast is not None:
            v = clone_unary(load.cast, v)
        if conds:
            v = arith.select(all_of(conds), v, const(v.type, 0))
        if load.convert is not None:
            v = load.convert(v)
        memref.StoreOp(v, load.smem, [kk, mn])


def _place(gen: Generic, dims: list, group: list, linear: ir.Value) -> None:
    """``dims[group] =`` the coordinates of the group's linear index."""
    for d, v in zip(group, delinearize(linear, [gen.ranges[d] for d in group])):
        dims[d] = v


def _store(gen: Generic, g: GemmMatch, t: GemmTiling, blk: _Block, accs: list,
           epi: "Epilogue | None" = None) -> None:
    """Each thread's TMxTN results into C (bounds checked at ragged edges;
    atomically when split; added to C unless it was zero-initialized)."""
    c = gen.outputs[0]
    gms = [arith.addi(blk.m0, blk.rows[i]) for i in range(t.tm)]
    gns = [arith.addi(blk.n0, blk.cols[j]) for j in range(t.tn)]
    rows, cols = [], []
    for gm in gms:
        dims: list = [None] * len(gen.ranges)
        _place(gen, dims, g.ms, gm)
        rows.append(dims)
    for gn in gns:
        dims = [None] * len(gen.ranges)
        _place(gen, dims, g.ns, gn)
        cols.append(dims)
    for i in range(t.tm):
        gm = gms[i]
        for j in range(t.tn):
            gn = gns[j]
            conds = []
            if t.M % t.bm:
                conds.append(ult(gm, t.M))
            if t.N % t.bn:
                conds.append(ult(gn, t.N))
            dims: list = [index(0)] * len(gen.ranges)
            for d in g.ms:
                dims[d] = rows[i][d]
            for d in g.ns:
                dims[d] = cols[j][d]
            for d, v in zip(g.batch, blk.bvals):
                dims[d] = v
            value = accs[i * t.tn + j]
            if conds:
                cond = conds[0] if len(conds) == 1 else arith.andi(conds[0], conds[1])
                guard = if_(cond)
                with ir.InsertionPoint(guard.then_block):
                    _store_one(gen, g, t, c, dims, value, epi)
                    scf.YieldOp([])
            else:
                _store_one(gen, g, t, c, dims, value, epi)


def _store_one(gen: Generic, g: GemmMatch, t: GemmTiling, c: ir.Value, dims: list,
               value: ir.Value, epi: "Epilogue | None" = None) -> None:
    idx = apply_map(gen.maps[2], dims)
    if t.splits > 1:
        memref.AtomicRMWOp(ATOMIC[g.add], value, c, idx)
        return
    if not gen.zero_init:
        old = memref.LoadOp(c, idx).result
        value = binary(g.add, old, value)
    if epi is None:
        memref.StoreOp(value, c, idx)
        return
    # the epilogue's point is C's element: its loop dim i is C's axis i
    e = epi.gen
    edims = list(idx)
    n_in = len(e.inputs)
    ins = []
    for k in range(n_in):
        if k in epi.c_inputs:
            ins.append(value)
        else:
            ins.append(load_operand(e, k, edims) if e.used(k) else None)
    out = e.outputs[0]
    oidx = apply_map(e.maps[n_in], edims)
    old_out = memref.LoadOp(out, oidx).result if e.used(n_in) else None
    (result,) = Cloner.body(e, ins + [old_out], edims)
    memref.StoreOp(result, out, oidx)


# --- epilogue fusion ----------------------------------------------------------------

@dataclass(frozen=True)
class Epilogue:
    """An all-parallel generic applied to the GEMM's results in its stores
    (a bias, an activation, a residual): one launch less, and C is never
    written unless it is the epilogue's output."""
    gen: Generic
    c_inputs: list            # the epilogue's inputs that are C
    between: list             # the ops between the GEMM and it (_BETWEEN)


# Ops that may sit between a GEMM and its epilogue: they read and write no
# element (a deallocation there frees a buffer neither reads).
_RELEASES = frozenset({"gpu.dealloc", "memref.dealloc"})
_BETWEEN = frozenset({"arith.constant", "gpu.alloc", "memref.alloc", "memref.alloca"}) \
    | VIEW_OPS | _RELEASES


def _root(v: ir.Value) -> ir.Value:
    """The buffer ``v`` is a view of (``v`` itself when it is none)."""
    while True:
        op = defining(v)
        if op is None or op.name not in VIEW_OPS:
            return v
        v = op.operands[0]


def match_epilogue(gen: Generic) -> Epilogue | None:
    """The generic right after the GEMM ``gen`` in its block (allocations,
    constants and views aside) when the GEMM's stores can apply it instead:
    all-parallel with one output, its loop space C's (it reads C at the
    same element: an identity map), every other operand indexed by C's dims
    (any map: a bias broadcast, a residual), and C not read afterwards
    unless the epilogue writes its result into C itself.  Nothing it reads
    but C may be its output's buffer (at another element) or C's."""
    c = gen.outputs[0]
    op, between = _next_op(gen.op), []
    while op is not None and op.name in _BETWEEN:
        between.append(op)
        op = _next_op(op)
    if op is None or op.name != "linalg.generic":
        return None
    try:
        e = Generic(op)
    except Exception:       # GenericError: left to the pass, which reports it
        return None
    if e.reduction or len(e.outputs) != 1:
        return None
    if not all(isinstance(v.type, ir.MemRefType) for v in e.operands):
        return None
    rank = len(c.type.shape)
    ident = ir.AffineMap.get_identity(rank)
    if len(e.ranges) != rank or e.ranges != list(c.type.shape):
        return None
    c_inputs = [k for k, v in enumerate(e.inputs) if v == c]
    if not c_inputs or any(e.maps[k] != ident for k in c_inputs):
        return None
    n_in = len(e.inputs)
    out = e.outputs[0]
    out_root, c_root = _root(out), _root(c)
    in_place = out == c and e.maps[n_in] == ident
    if out_root == c_root and not in_place:
        return None
    read = gen.inputs + [p.source for p in gen.padded.values()]
    if any(_root(v) == out_root for v in read):
        return None
    for k, v in enumerate(e.inputs):
        if k in c_inputs:
            continue
        r = _root(v)
        if r == c_root:
            return None
        if r == out_root and not (v == out and e.maps[k] == e.maps[n_in]):
            return None
    if out.type.element_type != e.body_args[n_in].type:
        return None
    if not in_place and _read_after(c_root, op):
        return None
    if not _body_ok(e):
        return None
    return Epilogue(gen=e, c_inputs=c_inputs, between=between)


def _body_ok(e: Generic) -> bool:
    """The body yields one value and holds no region (cloned as is)."""
    term = e.terminator()
    if len(term.operands) != 1:
        return False
    return all(len(as_op(o).regions) == 0 for o in e.block.operations)


def _next_op(op: ir.Operation):
    """The op after ``op`` in its block, or None."""
    block = op.block
    seen = False
    for o in block.operations:
        o = as_op(o)
        if seen:
            return o
        if o == op:
            seen = True
    return None


def _read_after(root: ir.Value, after: ir.Operation) -> bool:
    """Whether an op after ``after`` in its block reads ``root`` (or a view
    of it) before a generic overwrites all of it (bufferization reuses
    dead buffers); deallocations aside."""
    block = after.block
    later, seen = [], False
    for o in block.operations:
        o = as_op(o)
        if seen:
            later.append(o)
        elif o == after:
            seen = True
    for o in later:
        if o.name in _RELEASES or not _uses_buffer(o, root):
            continue
        return not _overwrites(o, root)
    return False


def _overwrites(op: ir.Operation, root: ir.Value) -> bool:
    """Whether ``op`` is a generic that writes every element of the buffer
    ``root`` (its output, whole) without reading it."""
    if op.name != "linalg.generic":
        return False
    try:
        e = Generic(op)
    except Exception:       # GenericError
        return False
    n_in = len(e.inputs)
    if any(_root(v) == root for v in e.inputs):
        return False
    for j, out in enumerate(e.outputs):
        if out != root:
            if _root(out) == root:
                return False
            continue
        amap = e.maps[n_in + j]
        if not amap.is_projected_permutation or len(amap.results) != len(out.type.shape):
            return False
        if e.used(n_in + j) and not e.zero_init:
            return False
    return any(out == root for out in e.outputs)


def _uses_buffer(op: ir.Operation, root: ir.Value) -> bool:
    for v in op.operands:
        if isinstance(v.type, ir.MemRefType) and _root(v) == root:
            return True
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if _uses_buffer(as_op(inner), root):
                    return True
    return False


def _retire(op: ir.Operation) -> None:
    """Leaves the epilogue generic ``op`` with nothing to compute: its
    operands become empty buffers (0 elements), so gpu-linalg-to-kernels,
    reaching it later in the list of ops it walks (an op erased here would
    be a dangling entry there), lowers it to no kernel and erases it; the
    empty buffers go with canonicalize."""
    with ir.InsertionPoint(op), op.location:
        for i, v in enumerate(list(op.operands)):
            t = v.type
            empty = ir.MemRefType.get([0] * len(t.shape), t.element_type)
            op.operands[i] = memref.AllocOp(empty, [], []).result

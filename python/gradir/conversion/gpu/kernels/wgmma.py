"""Hopper tensor-core GEMMs: the contractions ``mma.py`` takes, on
``wgmma.mma_async`` (sm_90; PTX target sm_90a), with f32 accumulation.

Which contractions and operand formats: those of ``mma.mma_kind`` (bf16/f16
operands, f32 under ``precision=tf32`` or ``compute-dtype=bf16``); each
operand is converted as its tile is staged (TF32 bit patterns rounded to
nearest, ties away, or bf16 rounded to nearest even), as ``mma.py`` does.

The kernel: one warpgroup (128 threads, 4 warps) per 64 rows of the block
tile, BMxBN = 128x128 (two warpgroups), 64x64 or 64x32 (the largest whose
grid fills the GPU), K in slabs of BK = 32.  Per slab, every thread of the
block stages A's and B's tiles into workgroup memory with cooperative loads
(any operand layout, batches, implicit GEMMs: the loads of ``gemm.py``;
loads past the edges of A and B read zeros) in a K-major layout that
wgmma's matrix descriptors describe (``wgmma_layout.Layout``): by default
swizzled (rows of BK elements, the 128-byte swizzle for TF32's 128-byte
rows, the 64-byte one for bf16/f16's 64-byte rows), else (``SWIZZLE =
False``) the interleaved layout of 8x16-byte core matrices.

Then each thread makes its writes visible to the async proxy
(``fence.proxy.async.shared::cta``), the block synchronizes, and each
warpgroup issues ``wgmma.fence``, one ``wgmma.mma_async.m64nBNk{16,8}``
per K step (BK/16 for bf16/f16, BK/8 for TF32; the descriptors' start
addresses advanced by 32 bytes of K per step), ``wgmma.commit_group`` and
``wgmma.wait_group 0``, and the block synchronizes again before the next
slab overwrites the tiles.  The accumulators live in the f32 struct that
wgmma reads and writes (BN/2 per thread); between slabs they are plain f32
loop values.  Their layout (accumulator ``i`` of a thread with
``warp = tid % 128 / 32``, ``group = lane / 4``, ``pair = lane % 4``):
row ``16 warp + group + 8 (i / 2 % 2)``, column ``8 (i / 4) + 2 pair + i % 2``.
Stores past the edges of C are skipped (any M, N and K, no padded copies);
split-K (atomics) and the epilogue of the next elementwise generic work as
in the SIMT kernel (``gemm._store_one``).

Multi-stage pipeline (the loop actually built, ``wgmma_pipeline.py``):
when A or B is rows of 16-byte aligned K in memory, or (bf16/f16) of
16-byte aligned M (N) (``wgmma_pipeline.wgmma_async_operand``), its slabs
are copied with ``cp.async`` into 2 to 4 stages of tiles, S-1 slabs ahead
of the MMAs, each thread writing its 16-byte chunks at their swizzled
addresses (MN-major tiles for M- or N-innermost operands, read with
wgmma's transpose immediates: ``wgmma_layout.py``); the
other operands keep the cooperative loads, a slab ahead in registers,
into the same stages (two stages when no operand is copied); the loop
keeps one group of MMAs in flight (``wgmma.wait_group 1``).  The
one-stage loop above remains with ``ASYNC`` off.

TMA (``tma.py``, with ``TMA`` on): the copied operands are loaded instead
by one ``cp.async.bulk.tensor`` per slab from a tensor map the host
encodes before the launch, each stage completed on an mbarrier; the loop
is the same.

What it does not do yet: TMA by default (it runs in the emulator and, with
the runtime's ``mgpuGradirTensorMap``, on the fake driver; it is to be
measured on a GPU first, and MLIR's own runtime library, with
``GRADIR_CUDA_RUNTIME=mlir``, lacks that function), MN-major TF32 (wgmma
transposes only 16-bit types: a TF32 operand with M or N innermost, or
any operand whose rows are not 16-byte aligned, is transposed by the
cooperative loads), dynamic workgroup memory by default (``DYNAMIC_SMEM``:
the stages in up to 227 KiB where 48 KiB of static workgroup memory does
not hold them, 128x128 tiles only; not yet measured on a GPU)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvvm, scf

from ..common import index
from .common import (Generic, KernelContext, all_of, clone_unary, const, delinearize, if_,
                     launch, read_input, ult, workgroup_type)
from .gemm import (GemmMatch, GemmTiling, Epilogue, _extent, _k_inner, _place, _retire,
                   _RELEASES, match_epilogue)
from .mma import _operand_kind, store_element
from .mma_pipeline import SMEM_LIMIT, commit, global_base, wait
from .reduction import atomic_type
from . import tma as tma_mod
from . import wgmma_pipeline as wpipe
from .wgmma_layout import BYTES, Layout, descriptor_bits, element_type

__all__ = ["WGMMA_CONFIGS", "WGMMA_BK", "WGMMA_SUFFIX", "chip_has_wgmma", "build_wgmma",
           "descriptor_bits"]

# Block tiles (BM, BN): BM / 64 warpgroups; the first whose grid fills the GPU wins.
WGMMA_CONFIGS = ((128, 128), (64, 64), (64, 32))
WGMMA_BK = 32
WARPGROUP = 128
WGMMA_K = {"tf32": 8, "bf16": 16, "f16": 16}
# Swizzled staging (the 128-byte swizzle for TF32's 128-byte rows, 64-byte
# for bf16/f16's): read by wgmma without bank conflicts.  False: the
# interleaved layout (tests run both).
SWIZZLE = True
# The multi-stage pipeline (wgmma_pipeline.py), operands copied with
# cp.async where they can be; False: cooperative loads, one stage (tests).
ASYNC = True
# Operands copied with TMA (tma.py) instead of cp.async where they can be.
# Off by default (see the module docstring); the tests run both.
TMA = False
# Stages in dynamic workgroup memory (up to sm_90's 227 KiB per block) where
# they need more than the 48 KiB of static workgroup memory: TF32's 128x128
# tiles keep BK = 32 (4 stages, 128 KiB), bf16/f16's get 4 stages of BK =
# 32 (64 KiB).  Off by default (not yet measured on a GPU); the tests run it.
DYNAMIC_SMEM = False
DYNAMIC_LIMIT = 227 * 1024
DYNAMIC_ALIGN = 1024      # the tiles' alignment, rounded up from the window's 16
# The gpu.module of the wgmma kernels of host function @f is @f_kernels_sm90a:
# the NVVM stage gives it the sm_90a target that wgmma needs (nvvm.py).
WGMMA_SUFFIX = "_sm90a"


def chip_has_wgmma(chip: str) -> bool:
    """Whether ``chip`` runs wgmma: sm_90 and sm_90a (compiled for sm_90a).
    wgmma is an sm_90a feature, absent from later architectures, which keep
    mma.sync."""
    return chip in ("sm_90", "sm_90a")


@dataclass(frozen=True)
class _Block:
    tid: ir.Value
    m0: ir.Value
    n0: ir.Value
    bvals: list


def _stages(kind: str, bm: int, bn: int, bk: int, most: int, limit: int = SMEM_LIMIT) -> int:
    """The pipeline stages of (BM + BN) x BK tiles that fit in ``limit``
    bytes of workgroup memory (at most ``most``), with TMA beside the
    stages' mbarriers (8 bytes each)."""
    limit -= 8 * wpipe.MAX_STAGES if TMA else 0
    return min(most, limit // ((bm + bn) * bk * BYTES[kind]))


def _dynamic_bytes(types: list) -> int:
    """Dynamic workgroup memory for the buffers of ``types``, each at a
    1024-byte boundary, and the slack to align the first."""
    total = DYNAMIC_ALIGN
    for t in types:
        elt = t.element_type          # i32 (TF32), i64 (mbarriers), bf16, f16
        size = ir.IntegerType(elt).width // 8 if isinstance(elt, ir.IntegerType) else 2
        total += -(-math.prod(t.shape) * size // DYNAMIC_ALIGN) * DYNAMIC_ALIGN
    return total


def _dynamic_buffers(types: list) -> list:
    """Views of ``types`` in the block's dynamic workgroup memory
    (``gpu.dynamic_shared_memory``), the first at its first 1024-byte
    boundary (the window is aligned to 16 bytes only), each next at the
    next boundary after the previous."""
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    raw = gpu.DynamicSharedMemoryOp(ir.MemRefType.get(
        [ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(8),
        memory_space=space)).result
    addr = memref.ExtractAlignedPointerAsIndexOp(raw).result
    align = index(DYNAMIC_ALIGN)
    shift = arith.remui(arith.subi(align, arith.remui(addr, align)), align)
    out, at = [], 0
    for t in types:
        start = arith.addi(shift, index(at)) if at else shift
        out.append(memref.ViewOp(t, raw, start, []).result)
        at += _dynamic_bytes([t]) - DYNAMIC_ALIGN
    return out


def _plan(ctx: KernelContext, gen: Generic, g: GemmMatch, kind: str,
          pipelined: bool, copied: bool) -> tuple:
    """(the tiling, the stages: 1 unless ``pipelined``; else 2 to 4 when an
    operand is ``copied`` (cp.async or TMA), 2 when both are loaded by the
    threads (a slab ahead in registers: two stages hold it); BK 16 where
    two stages of BK = 32 do not fit)."""
    most = wpipe.MAX_STAGES if copied else 2
    M, N, K = _extent(gen, g.ms), _extent(gen, g.ns), _extent(gen, g.ks)
    brange = [gen.ranges[d] for d in g.batch]
    batch = math.prod(brange)
    bm, bn = WGMMA_CONFIGS[-1]
    for cfg in WGMMA_CONFIGS:
        if -(-M // cfg[0]) * -(-N // cfg[1]) * batch >= ctx.options.sm_count:
            bm, bn = cfg
            break
    bk, stages = WGMMA_BK, 1
    if pipelined:
        stages = _stages(kind, bm, bn, bk, most)
        if DYNAMIC_SMEM and stages < most:
            stages = _stages(kind, bm, bn, bk, most, DYNAMIC_LIMIT - DYNAMIC_ALIGN)
        if stages < 2:
            bk = WGMMA_BK // 2
            stages = _stages(kind, bm, bn, bk, most)
    ktiles = -(-K // bk)
    blocks = -(-N // bn) * -(-M // bm) * batch
    acc_t = gen.outputs[0].type.element_type
    splits = ctx.split_count(blocks, ktiles, 4) if atomic_type(acc_t) else 1
    per = -(-ktiles // splits)
    splits = -(-ktiles // per)
    return GemmTiling(M=M, N=N, K=K, brange=brange, bm=bm, bn=bn, bk=bk, tm=0, tn=0,
                      a_kinner=_k_inner(gen, gen.maps[g.a], g.ks, g.ms),
                      b_kinner=_k_inner(gen, gen.maps[g.b], g.ks, g.ns),
                      ktiles=ktiles, splits=splits, per=per,
                      grid=[-(-N // bn), -(-M // bm), batch * splits]), stages


def _convert(kind: str, operand_kind: str):
    """The conversion of a loaded (f32, bf16 or f16) value to the staged
    format, or None."""
    if kind == "tf32":
        def to_tf32(v):
            rna = ir.Attribute.parse("#nvvm.fp_rnd_mode<rna>")
            return nvvm.ConvertFloatToTF32Op(element_type("tf32"), v, rnd=rna).result
        return to_tf32
    if operand_kind == "f32":
        return lambda v: arith.truncf(element_type(kind), v)
    return None


@dataclass(frozen=True)
class _Stage:
    """The cooperative load of one operand's (tile x BK) slab into ``smem``
    in the core-matrix layout."""
    operand: int
    smem: ir.Value
    base: ir.Value            # first M (or N) index of the tile
    tile: int
    extent: int
    k_inner: bool
    mn_dims: list
    cast: ir.Operation | None
    convert: object


def _position(t: GemmTiling, blk: _Block, s: _Stage, threads: int, step: int) -> tuple:
    """(mn, kk) of this thread's ``step``-th element of a slab: consecutive
    threads at consecutive addresses along K or along M/N, whichever is the
    operand's innermost dim."""
    e = arith.addi(blk.tid, index(threads * step)) if step else blk.tid
    if s.k_inner:
        return arith.divui(e, index(t.bk)), arith.remui(e, index(t.bk))
    return arith.remui(e, index(s.tile)), arith.divui(e, index(s.tile))


def _stage_load(gen: Generic, g: GemmMatch, t: GemmTiling, blk: _Block, s: _Stage,
                k0: ir.Value, threads: int, ragged_k: bool | None = None) -> list:
    """This thread's ``tile * BK / threads`` elements of the slab at K
    ``k0``, zero past the edges (K too with ``ragged_k``, by default when
    BK does not divide K), converted to the staged format."""
    if ragged_k is None:
        ragged_k = t.K % t.bk != 0
    out = []
    for step in range(s.tile * t.bk // threads):
        mn, kk = _position(t, blk, s, threads, step)
        gk, gmn = arith.addi(k0, kk), arith.addi(s.base, mn)
        conds = []
        if ragged_k:
            conds.append(ult(gk, t.K))
            gk = arith.minui(gk, index(t.K - 1))
        if s.extent % s.tile:
            conds.append(ult(gmn, s.extent))
            gmn = arith.minui(gmn, index(s.extent - 1))
        dims: list = [index(0)] * len(gen.ranges)
        _place(gen, dims, g.ks, gk)
        _place(gen, dims, s.mn_dims, gmn)
        for d, v in zip(g.batch, blk.bvals):
            dims[d] = v
        v, inside = read_input(gen, s.operand, dims)     # a padded input: its source
        if inside is not None:
            conds.append(inside)
        if s.cast is not None:
            v = clone_unary(s.cast, v)
        if conds:
            v = arith.select(all_of(conds), v, const(v.type, 0))
        if s.convert is not None:
            v = s.convert(v)
        out.append(v)
    return out


def _stage_store(values: list, t: GemmTiling, blk: _Block, s: _Stage, threads: int,
                 lay: Layout, stage: ir.Value | None = None) -> None:
    """Stores ``_stage_load``'s values where ``lay`` puts them (in stage
    ``stage`` of a pipelined kernel's tiles)."""
    lead = [stage] if stage is not None else []
    for step, v in enumerate(values):
        mn, kk = _position(t, blk, s, threads, step)
        memref.StoreOp(v, s.smem, lead + lay.index(mn, kk))


def _stage(gen: Generic, g: GemmMatch, t: GemmTiling, blk: _Block, s: _Stage, k0: ir.Value,
           threads: int, lay: Layout) -> None:
    """The cooperative load of one slab into the tile, every thread
    ``tile * BK / threads`` elements."""
    _stage_store(_stage_load(gen, g, t, blk, s, k0, threads), t, blk, s, threads, lay)


def _encoded_address(smem: ir.Value, offset: ir.Value | None) -> ir.Value:
    """``((address of smem + offset) & 0x3FFFF) >> 4`` as i64: a
    descriptor's start-address field."""
    i64 = ir.IntegerType.get_signless(64)
    addr = memref.ExtractAlignedPointerAsIndexOp(smem).result
    if offset is not None:
        addr = arith.addi(addr, offset)
    addr = arith.index_cast(i64, addr)
    return arith.shrui(arith.andi(addr, const(i64, 0x3FFFF)), const(i64, 4))


def _mma_async(kind: str, bn: int, acc: ir.Value, desc_a: ir.Value,
               desc_b: ir.Value, lays=None) -> ir.Value:
    """``wgmma.mma_async.sync.aligned.m64n<bn>k<k>.f32.<kind>.<kind>``, A
    and B from workgroup memory, D += A * B: K-major (A ``row``, B
    ``col``: imm-trans 0) unless ``lays`` has them MN-major (A ``col``, B
    ``row``: imm-trans-a / imm-trans-b 1)."""
    trans_a, trans_b = (lay.mn_major for lay in lays) if lays else (False, False)
    p = ir.Attribute.parse
    return nvvm.WgmmaMmaAsyncOp(
        acc.type, acc, desc_a, desc_b,
        p(f"#nvvm.shape<m = 64, n = {bn}, k = {WGMMA_K[kind]}>"),
        p(f"#nvvm.wgmma_type<{kind}>"), p(f"#nvvm.wgmma_type<{kind}>"),
        p("#nvvm.wgmma_type<f32>"), p("#nvvm.wgmma_scale_out<one>"),
        p("#nvvm.wgmma_scale_in<one>"), p("#nvvm.wgmma_scale_in<one>"),
        p(f"#nvvm.mma_layout<{'col' if trans_a else 'row'}>"),
        p(f"#nvvm.mma_layout<{'row' if trans_b else 'col'}>")).result


def _desc_bits(lay: Layout, kind: str, step: int) -> int:
    """A descriptor's constant fields plus the start-address advance of K
    step ``step`` (16-byte units)."""
    return lay.bits + (step * lay.step_bytes(WGMMA_K[kind]) >> 4)


def build_wgmma(ctx: KernelContext, gen: Generic, g: GemmMatch, kind: str) -> None:
    """The wgmma GEMM ``gpu.launch`` of ``gen`` (see the module docstring),
    with its epilogue and split-K as ``gemm.build_gemm``."""
    a_kind = _operand_kind(gen, g.a, g.a_cast)
    b_kind = _operand_kind(gen, g.b, g.b_cast)
    plans = [wpipe.wgmma_async_operand(gen, op, mn, g.ks, g.batch, kind, k) if ASYNC else None
             for op, mn, k in ((g.a, g.ms, a_kind), (g.b, g.ns, b_kind))]
    t, nstages = _plan(ctx, gen, g, kind, ASYNC, plans != [None, None])
    threads = WARPGROUP * (t.bm // 64)
    # K-major tiles, MN-major ones for the operands copied with M (N)
    # innermost (bf16/f16: wgmma_layout.py)
    lays = tuple(Layout.mn(kind, t.bk, tile, SWIZZLE) if p is not None and not p.k_inner
                 else Layout.of(kind, t.bk, SWIZZLE) for p, tile in zip(plans, (t.bm, t.bn)))
    wg = [lay.tile_type(tile, nstages) for lay, tile in zip(lays, (t.bm, t.bn))]
    tmas = [tma_mod.tma_operand(p, lay) if TMA and nstages > 1 and p is not None and
            p.k_inner else None for p, lay in zip(plans, lays)]
    maps = [None, None]
    if tmas != [None, None]:
        wg.append(workgroup_type([nstages], ir.IntegerType.get_signless(64)))     # mbarriers
        batch = dict(zip(g.batch, t.brange))
        for i, (op, tile, ext) in enumerate(zip(tmas, (t.bm, t.bn), (t.M, t.N))):
            if op is not None:
                maps[i] = tma_mod.encode(gen, op, lays[i], tile, ext, t.K,
                                         batch.get(op.batch_loop, 1))
    c = gen.outputs[0]
    epi = match_epilogue(gen) if t.splits == 1 else None
    if epi is not None:
        for op in epi.between:
            if op.name not in _RELEASES:
                op.move_before(gen.op)
    if t.splits > 1 and gen.zero_init:
        ctx.zero_fill(c)
    module, fn = ctx.namer("wgmma_splitk" if t.splits > 1 else "wgmma")
    # the tiles' start addresses: descriptors need 16-byte alignment, the
    # swizzles their repeat (the lowering aligns a workgroup buffer to its
    # element type by default)
    align = ir.DictAttr.get({"llvm.align": ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), max(lay.align for lay in lays))})
    aligns = [align, align] + [ir.DictAttr.get({})] * (len(wg) - 2)
    ctx.namer.attrs[fn] = {"workgroup_attrib_attrs": ir.ArrayAttr.get(aligns)}
    if ctx.options.gemm_min_blocks > 0:
        ctx.namer.attrs[fn]["nvvm.minctasm"] = 1 if t.bm == 128 else \
            ctx.options.gemm_min_blocks
    dynamic = _dynamic_bytes(wg) if sum(
        lay.tile_bytes(tile) * nstages for lay, tile in zip(lays, (t.bm, t.bn))) + \
        8 * (len(wg) - 2) * nstages > SMEM_LIMIT else 0
    _, body, ids, bufs = launch(t.grid, [threads], [] if dynamic else wg,
                                name=(module + WGMMA_SUFFIX, fn), dynamic_smem=dynamic)
    if dynamic:
        del ctx.namer.attrs[fn]["workgroup_attrib_attrs"]
        with ir.InsertionPoint(body):
            bufs = _dynamic_buffers(wg)
    As, Bs, *bars = bufs
    with ir.InsertionPoint(body):
        tid = ids[3]
        batch_id = ids[2] if t.splits == 1 else arith.divui(ids[2], index(t.splits))
        blk = _Block(tid=tid, m0=arith.muli(ids[1], index(t.bm)),
                     n0=arith.muli(ids[0], index(t.bn)),
                     bvals=delinearize(batch_id, t.brange) if t.brange else [])
        # bf16/f16 operands are staged as read (their extf to f32 dropped)
        a_cast, b_cast = (g.a_cast, g.b_cast) if kind == "tf32" else (None, None)
        stages = (_Stage(g.a, As, blk.m0, t.bm, t.M, t.a_kinner, g.ms, a_cast,
                         _convert(kind, a_kind)),
                  _Stage(g.b, Bs, blk.n0, t.bn, t.N, t.b_kinner, g.ns, b_cast,
                         _convert(kind, b_kind)))
        if nstages > 1:
            accs = _pipelined_k_loop(t, kind, gen, g, blk, ids[2], stages, threads, lays,
                                     plans, nstages, (tmas, maps, bars))
        else:
            accs = _k_loop(t, kind, gen, g, blk, ids[2], stages, threads, lays)
        _store_accumulators(gen, g, t, blk, accs, epi)
        gpu.TerminatorOp()
    if epi is not None:
        _retire(epi.gen.op)


def _k_loop(t: GemmTiling, kind: str, gen: Generic, g: GemmMatch, blk: _Block, bz: ir.Value,
            stages, threads: int, lays: tuple) -> list:
    """The loop over the block's K slabs (see the module docstring); returns
    each thread's BN/2 accumulators."""
    i64 = ir.IntegerType.get_signless(64)
    f32 = ir.F32Type.get()
    n_acc = t.bn // 2
    wg_rows = arith.muli(arith.divui(blk.tid, index(WARPGROUP)), index(lays[0].rows_bytes(64)))
    enc_a = _encoded_address(stages[0].smem, wg_rows)
    enc_b = _encoded_address(stages[1].smem, None)
    acc_t = ir.Type.parse("!llvm.struct<(" + ", ".join(["f32"] * n_acc) + ")>")
    k_lo, k_hi = index(0), index(t.ktiles)
    if t.splits > 1:
        k_lo = arith.muli(arith.remui(bz, index(t.splits)), index(t.per))
        k_hi = arith.minui(arith.addi(k_lo, index(t.per)), index(t.ktiles))
    zero = const(f32, 0)
    loop = scf.ForOp(k_lo, k_hi, index(1), [zero] * n_acc)
    with ir.InsertionPoint(loop.body):
        k0 = arith.muli(loop.induction_variable, index(t.bk))
        for s, lay in zip(stages, lays):
            _stage(gen, g, t, blk, s, k0, threads, lay)
        nvvm.FenceProxyOp(ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
                          space=ir.Attribute.parse("#nvvm.shared_space<cta>"))
        gpu.BarrierOp()
        acc = llvm.UndefOp(acc_t).result
        for i, v in enumerate(loop.inner_iter_args):
            acc = llvm.insertvalue(acc, v, [i])
        nvvm.WgmmaFenceAlignedOp()
        for s in range(t.bk // WGMMA_K[kind]):
            desc_a, desc_b = (arith.addi(e, const(i64, _desc_bits(lay, kind, s)))
                              for e, lay in zip((enc_a, enc_b), lays))
            acc = _mma_async(kind, t.bn, acc, desc_a, desc_b, lays)
        nvvm.WgmmaGroupSyncAlignedOp()
        nvvm.WgmmaWaitGroupSyncOp(0)
        out = [llvm.extractvalue(f32, acc, [i]) for i in range(n_acc)]
        gpu.BarrierOp()
        scf.YieldOp(out)
    return list(loop.results)


def _pipelined_k_loop(t: GemmTiling, kind: str, gen: Generic, g: GemmMatch, blk: _Block,
                      bz: ir.Value, stages, threads: int, lays: tuple, plans: list,
                      nstages: int, tma: tuple) -> list:
    """The K loop of ``wgmma_pipeline`` (its docstring): ``nstages`` stages,
    the operands with a plan in ``plans`` copied with cp.async (or TMA: ``tma``
    = (TMA plans, their maps, the mbarrier buffer), ``tma.py``), the others
    loaded cooperatively; returns each thread's BN/2 accumulators."""
    tmas, maps, bars = tma
    cp_plans = [p if op is None else None for p, op in zip(plans, tmas)]
    tma_bytes = sum(lay.tile_bytes(tile) for op, tile, lay in zip(tmas, (t.bm, t.bn), lays)
                    if op is not None)
    bars_addr = memref.ExtractAlignedPointerAsIndexOp(bars[0]).result if bars else None
    bdict = dict(zip(g.batch, blk.bvals))
    i64 = ir.IntegerType.get_signless(64)
    f32 = ir.F32Type.get()
    n_acc = t.bn // 2
    tiles = (t.bm, t.bn)
    extents = (t.M, t.N)
    wg_rows = arith.muli(arith.divui(blk.tid, index(WARPGROUP)), index(lays[0].rows_bytes(64)))
    enc = (_encoded_address(stages[0].smem, wg_rows), _encoded_address(stages[1].smem, None))
    bases = [memref.ExtractAlignedPointerAsIndexOp(s.smem).result for s in stages]
    srcs = [global_base(gen.inputs[p.operand]) if p is not None else None for p in cp_plans]
    # every block runs t.per slabs (the same loop in every block); the last
    # split's slabs past K read zeros
    k_lo = arith.muli(arith.remui(bz, index(t.splits)), index(t.per)) if t.splits > 1 \
        else None
    ragged_k = t.splits * t.per * t.bk != t.K
    to_tf32 = _convert("tf32", "f32") if kind == "tf32" else None

    def k_start(j: ir.Value) -> ir.Value:
        slab = arith.addi(k_lo, j) if k_lo is not None else j
        return arith.muli(slab, index(t.bk))

    def issue(j: ir.Value, stage: ir.Value) -> None:
        """cp.async (TMA) of the block's slab ``j`` into ``stage``; commit."""
        with ir.InsertionPoint(if_(ult(j, t.per)).then_block):
            k0 = k_start(j)
            if tma_bytes:
                first = arith.cmpi(arith.CmpIPredicate.eq, blk.tid, index(0))
                with ir.InsertionPoint(if_(first).then_block):
                    bar = tma_mod.barrier_ptr(bars_addr, stage)
                    tma_mod.expect_bytes(bar, tma_bytes)
                    for s, op, tmap, base, tile, lay in zip(stages, tmas, maps, bases, tiles,
                                                            lays):
                        if op is not None:
                            addr = arith.addi(base, arith.muli(stage,
                                                               index(lay.tile_bytes(tile))))
                            tma_mod.copy_slab(op, tmap, addr, bar, k0, s.base, bdict)
                    scf.YieldOp([])
            for s, plan, src, base, tile, ext, lay in zip(stages, cp_plans, srcs, bases, tiles,
                                                          extents, lays):
                if plan is None:
                    continue
                addr = arith.addi(base, arith.muli(stage, index(lay.tile_bytes(tile))))
                wpipe.issue_slab(gen, plan, lay, src, addr, tile, s.base, k0, ext, t.K,
                                 ragged_k, blk.tid, blk.bvals, g.batch, threads)
            scf.YieldOp([])
        if cp_plans != [None, None]:
            commit()

    if tma_bytes:
        tma_mod.init_barriers(bars_addr, nstages, blk.tid)
        gpu.BarrierOp()
    for j in range(nstages - 1):            # a group each, empty past the block's slabs
        issue(index(j), index(j))
    acc_t = ir.Type.parse("!llvm.struct<(" + ", ".join(["f32"] * n_acc) + ")>")
    acc0 = llvm.UndefOp(acc_t).result
    zero = const(f32, 0)
    for i in range(n_acc):
        acc0 = llvm.insertvalue(acc0, zero, [i])
    # the cooperatively loaded operands: slab j's values, loaded during
    # slab j-1's MMAs, carried into iteration j in registers
    coop = [(s, lay) for s, plan, lay in zip(stages, plans, lays) if plan is None]
    regs = [v for s, _ in coop for v in _stage_load(gen, g, t, blk, s, k_start(index(0)),
                                                 threads, ragged_k)]
    loop = scf.ForOp(index(0), index(t.per), index(1), [acc0] + regs)
    with ir.InsertionPoint(loop.body):
        j = loop.induction_variable
        stage = arith.remui(j, index(nstages))
        held = list(loop.inner_iter_args)[1:]
        for s, lay in coop:
            n = s.tile * t.bk // threads
            _stage_store(held[:n], t, blk, s, threads, lay, stage)
            held = held[n:]
        if cp_plans != [None, None]:
            wait(nstages - 2)
        if tma_bytes:
            tma_mod.wait_slab(tma_mod.barrier_ptr(bars_addr, stage), j, nstages)
        if to_tf32 is not None:
            for s, plan, tile, lay in zip(stages, plans, tiles, lays):
                if plan is not None:
                    wpipe.round_slab(s.smem, stage, lay, tile, blk.tid, threads, to_tf32)
        nvvm.FenceProxyOp(ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
                          space=ir.Attribute.parse("#nvvm.shared_space<cta>"))
        gpu.BarrierOp()
        # slab j+1's values (the last slab's again past the end: valid
        # addresses, never stored)
        ahead = arith.minui(arith.addi(j, index(1)), index(t.per - 1))
        nxt = [v for s, _ in coop for v in _stage_load(gen, g, t, blk, s, k_start(ahead),
                                                    threads, ragged_k)]
        acc = loop.inner_iter_args[0]
        nvvm.WgmmaFenceAlignedOp()
        stage64 = arith.index_cast(i64, stage)
        starts = [arith.addi(e, arith.muli(stage64, const(i64, lay.tile_bytes(tile) >> 4)))
                  for e, tile, lay in zip(enc, tiles, lays)]
        for s in range(t.bk // WGMMA_K[kind]):
            desc_a, desc_b = (arith.addi(e, const(i64, _desc_bits(lay, kind, s)))
                              for e, lay in zip(starts, lays))
            acc = _mma_async(kind, t.bn, acc, desc_a, desc_b, lays)
        nvvm.WgmmaGroupSyncAlignedOp()
        nvvm.WgmmaWaitGroupSyncOp(1)
        gpu.BarrierOp()
        ahead = arith.addi(j, index(nstages - 1))
        issue(ahead, arith.remui(ahead, index(nstages)))
        scf.YieldOp([acc] + nxt)
    nvvm.WgmmaWaitGroupSyncOp(0)
    return [llvm.extractvalue(f32, loop.results[0], [i]) for i in range(n_acc)]


def _store_accumulators(gen: Generic, g: GemmMatch, t: GemmTiling, blk: _Block, accs: list,
                        epi: Epilogue | None) -> None:
    """Each thread's accumulators into C (the layout of the module
    docstring; bounds checked at ragged edges)."""
    c = gen.outputs[0]
    lane = arith.remui(blk.tid, index(32))
    warp = arith.divui(blk.tid, index(32))          # 16 rows per warp, 4 per warpgroup
    base_m = arith.addi(arith.addi(blk.m0, arith.muli(warp, index(16))),
                        arith.divui(lane, index(4)))
    base_n = arith.addi(blk.n0, arith.muli(arith.remui(lane, index(4)), index(2)))
    rows, cols = {}, {}
    for h in range(2):
        gm = arith.addi(base_m, index(8)) if h else base_m
        dims: list = [None] * len(gen.ranges)
        _place(gen, dims, g.ms, gm)
        rows[h] = (gm, dims)
    for j in range(t.bn // 8):
        for e in range(2):
            gn = arith.addi(base_n, index(8 * j + e)) if 8 * j + e else base_n
            dims = [None] * len(gen.ranges)
            _place(gen, dims, g.ns, gn)
            cols[j, e] = (gn, dims)
    for i, value in enumerate(accs):
        store_element(gen, g, t, blk, c, rows[i // 2 % 2], cols[i // 4, i % 2], value, epi)

"""Tensor-core GEMMs: the contractions of ``gemm.py`` on ``mma.sync`` (sm_80
and later), with f32 accumulation.

Which contractions (``mma_kind``): ``C[f32] += A * B`` with f32 adds and
multiplies whose operands are

* bf16 or f16 (a bf16/f16 program's matmul: ``gpu-fold-transposes`` folds
  its ``extf`` casts into the contraction): ``mma.m16n8k16`` on bf16 (f16)
  operands;
* f32 with ``precision=tf32``: ``mma.m16n8k8`` on TF32 operands, each
  rounded from f32 to nearest (ties away from zero, ``cvt.rna.tf32.f32``:
  10 mantissa bits kept) as the tile is staged (as its fragments are read,
  when it is copied with cp.async);
* f32 (or bf16) with ``compute-dtype=bf16``: each operand rounded to bf16
  (``arith.truncf``: to nearest even) as the tile is staged, then
  ``m16n8k16`` on bf16.

Everything else (f64, integers, exact f32 by default) stays on the SIMT
kernel of ``gemm.py``.

The kernel: 256 threads (8 warps, 2 x 4) compute a BMxBN tile of C
(128x128, 64x64 or 32x32: the largest whose grid fills the GPU), staging
BKxBM and BKxBN tiles of A and B in workgroup memory.  An operand whose
tiles are aligned rows of memory is copied with ``cp.async`` two or three
K tiles ahead, its bf16/f16 fragments read with ``ldmatrix`` (TF32: f32
copied as is, rounded in the fragment reads; ``mma_pipeline.py``); any
other keeps the SIMT kernel's cooperative loads (``gemm._load_tile``: any
operand layout, batches, implicit GEMMs, converted to the MMA operand
format on the way) into one ``BK x (BM + 8)`` tile; when neither operand
is copied the loop has one stage (BK = 32).  Loads past the edges of A
and B read zeros (copies past them are zero-filled) and stores past the
edges of C are skipped, so any M, N and K work without padded copies.
Each warp owns a (BM/2)x(BN/4) tile of C as 16x8 MMA tiles, reading its A
and B fragments from workgroup memory in the ``mma.sync`` register layouts
(``row.col``: per lane, ``group = lane / 4``, ``pair = lane % 4``):

* A (16 x k): word ``r`` holds row ``group + 8 * (r % 2)`` and K
  ``pair + 4 * (r / 2)`` (tf32: one element), or K ``2 * pair + 8 * (r / 2)``
  and the next (bf16/f16: two elements, the lower K in the low half);
* B (k x 8): word ``r`` holds column ``group`` and K ``pair + 4 * r`` (tf32)
  or ``2 * pair + 8 * r`` and the next (bf16/f16);
* C (16 x 8): value ``r`` is row ``group + 8 * (r / 2)``, column
  ``2 * pair + r % 2``.

Split-K (atomic adds) and the epilogue of the next elementwise generic
work as in the SIMT kernel (``gemm._store_one``)."""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvvm, scf

from ..common import index
from .common import Generic, KernelContext, const, if_, launch, ult, workgroup_type
from .gemm import (THREADS, GemmMatch, GemmTiling, Epilogue, _block, _extent, _k_inner, _k_loop,
                   _load_tile, _place, _retire, _store_one, _TileLoad, _RELEASES, match_epilogue)
from . import mma_pipeline as pipe
from .reduction import atomic_type

__all__ = ["MMA_CONFIGS", "MMA_BK", "mma_kind", "build_mma", "chip_has_tensor_cores",
           "tensor_core_problem"]

# Block tiles (BM, BN); the first whose grid fills the GPU wins.
MMA_CONFIGS = ((128, 128), (64, 64), (32, 32))
MMA_BK = 32
WARPS_M, WARPS_N = 2, 4           # 8 warps of the 16x16 threads
PAD = 8                           # workgroup row padding (fragment reads: no bank conflict)
MMA_K = {"tf32": 8, "bf16": 16, "f16": 16}
_ACC4 = "!llvm.struct<(f32, f32, f32, f32)>"


def chip_has_tensor_cores(chip: str) -> bool:
    """Whether ``chip`` (sm_<N>) has the mma.sync shapes used here (sm_80+)."""
    digits = "".join(ch for ch in chip[3:] if ch.isdigit())
    return bool(digits) and int(digits) >= 80


def tensor_core_problem(chip: str, precision: str, compute_dtype) -> str | None:
    """Why ``precision`` ("fp32", "tf32") or ``compute_dtype`` ("none" or
    None, "bf16") cannot apply to ``chip`` (a valid chip name), or None."""
    if chip_has_tensor_cores(chip):
        return None
    if precision != "fp32":
        return (f"precision '{precision}' runs f32 contractions on TF32 tensor cores, "
                f"which need chip sm_80 or later, not {chip}")
    if compute_dtype not in ("none", None):
        return (f"compute_dtype '{compute_dtype}' runs contractions on bf16 tensor cores, "
                f"which need chip sm_80 or later, not {chip}")
    return None


def _operand_kind(gen: Generic, k: int, cast) -> str | None:
    """The element type an operand's values have before the contraction's
    f32 arithmetic: "f32", "bf16", "f16", or None for anything else."""
    raw = str(gen.inputs[k].type.element_type)
    if cast is None:
        return "f32" if raw == "f32" else None
    if cast.name == "arith.extf" and str(cast.results[0].type) == "f32" and raw in ("bf16",
                                                                                     "f16"):
        return raw
    return None


def mma_kind(ctx: KernelContext, gen: Generic, g: GemmMatch) -> str | None:
    """"tf32", "bf16" or "f16": the tensor-core kernel for this contraction
    under the options; None: the SIMT kernel."""
    opts = ctx.options
    if not opts.tensor_cores or g.mul != "arith.mulf" or g.add != "arith.addf":
        return None
    if str(gen.outputs[0].type.element_type) != "f32":
        return None
    kinds = {_operand_kind(gen, g.a, g.a_cast), _operand_kind(gen, g.b, g.b_cast)}
    if None in kinds:
        return None
    if kinds in ({"bf16"}, {"f16"}):
        return kinds.pop()
    if opts.compute_dtype == "bf16" and kinds <= {"bf16", "f32"}:
        return "bf16"
    if opts.precision == "tf32":
        return "tf32"
    return None


def _plan(ctx: KernelContext, gen: Generic, g: GemmMatch, bk: int = MMA_BK) -> GemmTiling:
    M, N, K = _extent(gen, g.ms), _extent(gen, g.ns), _extent(gen, g.ks)
    brange = [gen.ranges[d] for d in g.batch]
    batch = math.prod(brange)
    bm, bn = MMA_CONFIGS[-1]
    for cfg in MMA_CONFIGS:
        if -(-M // cfg[0]) * -(-N // cfg[1]) * batch >= ctx.options.sm_count:
            bm, bn = cfg
            break
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
                      grid=[-(-N // bn), -(-M // bm), batch * splits])


def _staged(kind: str, operand_kind: str, cast):
    """(workgroup element type, the cast applied by the tile load, the
    conversion to the stored format) for one operand."""
    if kind == "tf32":
        i32 = ir.IntegerType.get_signless(32)

        def to_tf32(v):
            rna = ir.Attribute.parse("#nvvm.fp_rnd_mode<rna>")
            return nvvm.ConvertFloatToTF32Op(i32, v, rnd=rna).result
        return i32, cast, to_tf32
    elt = ir.BF16Type.get() if kind == "bf16" else ir.F16Type.get()
    if operand_kind == "f32":
        return elt, None, lambda v: arith.truncf(elt, v)
    return elt, None, None


class _Warp:
    """One warp's place: its tile origin in the block tile and its lane's
    fragment coordinates."""

    def __init__(self, tid: ir.Value, wm: int, wn: int):
        warp = arith.divui(tid, index(32))
        lane = arith.remui(tid, index(32))
        self.lane = lane
        self.group = arith.divui(lane, index(4))
        self.pair = arith.remui(lane, index(4))
        self.m0 = arith.muli(arith.divui(warp, index(WARPS_N)), index(wm))
        self.n0 = arith.muli(arith.remui(warp, index(WARPS_N)), index(wn))


def _add(v: ir.Value, k: int) -> ir.Value:
    return arith.addi(v, index(k)) if k else v


def _pack(lo: ir.Value, hi: ir.Value, kind: str) -> ir.Value:
    """Two 16-bit values in one 32-bit register, ``lo`` in the low half
    (vector<2xf16> for f16 operands)."""
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    lo32 = arith.extui(i32, arith.bitcast(i16, lo))
    hi32 = arith.shli(arith.extui(i32, arith.bitcast(i16, hi)), const(i32, 16))
    word = arith.ori(lo32, hi32)
    if kind == "f16":
        word = llvm.bitcast(ir.VectorType.get([2], ir.F16Type.get()), word)
    return word


def _fragment(smem, kind: str, k0: int, mn0: ir.Value, w: _Warp, rows: int) -> list:
    """The registers of an A (``rows`` = 16) or B (8) fragment read from a
    ``[k][mn]`` workgroup tile at K offset ``k0`` and M (or N) offset ``mn0``."""
    words = 4 if rows == 16 else 2
    out = []
    for r in range(words):
        mn = _add(arith.addi(mn0, w.group), 8 * (r % 2)) if rows == 16 else \
            arith.addi(mn0, w.group)
        kr = r // 2 if rows == 16 else r
        if kind == "tf32":
            k = _add(w.pair, k0 + 4 * kr)
            out.append(memref.LoadOp(smem, [k, mn]).result)
        else:
            k = _add(arith.muli(w.pair, index(2)), k0 + 8 * kr)
            lo = memref.LoadOp(smem, [k, mn]).result
            hi = memref.LoadOp(smem, [_add(k, 1), mn]).result
            out.append(_pack(lo, hi, kind))
    return out


def _mma(kind: str, a: list, b: list, c: list) -> list:
    """One ``mma.sync.aligned.m16n8k{8,16}.row.col.f32.<kind>.<kind>.f32``."""
    k = MMA_K[kind]
    attrs = dict(multiplicandAPtxType=ir.Attribute.parse(f"#nvvm.mma_type<{kind}>"),
                 multiplicandBPtxType=ir.Attribute.parse(f"#nvvm.mma_type<{kind}>"))
    op = nvvm.MmaOp(ir.Type.parse(_ACC4),
                    ir.Attribute.parse(f"#nvvm.shape<m = 16, n = 8, k = {k}>"),
                    ir.Attribute.parse("#nvvm.mma_layout<row>"),
                    ir.Attribute.parse("#nvvm.mma_layout<col>"), a, b, c, **attrs)
    f32 = ir.F32Type.get()
    return [llvm.extractvalue(f32, op.result, [i]) for i in range(4)]


def _async_type(kind: str, operand_kind: str) -> str | None:
    """The element type an operand is copied with cp.async as: its own,
    when the MMA reads it so (TF32: f32, rounded in the fragment reads)."""
    if kind == "tf32":
        return "f32" if operand_kind == "f32" else None
    return kind if operand_kind == kind else None


def _pipeline(gen: Generic, g: GemmMatch, t: GemmTiling, kind: str, kinds) -> tuple | None:
    """(BK, stages, the cp.async plans of A and B) of the pipelined kernel,
    or None when no operand can be copied asynchronously."""
    plans = [pipe.async_operand(gen, op, mn, g.ks, g.batch, _async_type(kind, k))
             for op, mn, k in ((g.a, g.ms, kinds[0]), (g.b, g.ns, kinds[1]))]
    if plans == [None, None]:
        return None
    for bk, stages in ((MMA_BK, 3), (MMA_BK, 2), (16, 3), (16, 2)):
        total = 0
        for plan, tile in zip(plans, (t.bm, t.bn)):
            if plan is not None:
                total += pipe.Staging.of(plan, tile, bk, stages).bytes()
            else:
                esize = 2 if kind != "tf32" else 4
                total += bk * (tile + PAD) * esize
        if total <= pipe.SMEM_LIMIT:
            return bk, stages, plans
    return None


def build_mma(ctx: KernelContext, gen: Generic, g: GemmMatch, kind: str) -> None:
    """The tensor-core GEMM ``gpu.launch`` of ``gen`` (see the module
    docstring), with its epilogue and split-K as ``gemm.build_gemm``."""
    t = _plan(ctx, gen, g)
    a_kind = _operand_kind(gen, g.a, g.a_cast)
    b_kind = _operand_kind(gen, g.b, g.b_cast)
    piped = _pipeline(gen, g, t, kind, (a_kind, b_kind))
    plans = [None, None]
    if piped is not None:
        bk, stages, plans = piped
        t = _plan(ctx, gen, g, bk)
    a_t, a_cast, a_conv = _staged(kind, a_kind, g.a_cast)
    b_t, b_cast, b_conv = _staged(kind, b_kind, g.b_cast)
    stagings, wg = [], []
    for plan, tile, st_t, op in ((plans[0], t.bm, a_t, g.a), (plans[1], t.bn, b_t, g.b)):
        if plan is None:
            stagings.append(None)
            wg.append(workgroup_type([t.bk, tile + PAD], st_t))
        else:
            st = pipe.Staging.of(plan, tile, t.bk, stages)
            stagings.append(st)
            wg.append(workgroup_type([st.elems], gen.inputs[op].type.element_type))
    c = gen.outputs[0]
    epi = match_epilogue(gen) if t.splits == 1 else None
    if epi is not None:
        for op in epi.between:
            if op.name not in _RELEASES:
                op.move_before(gen.op)
    if t.splits > 1 and gen.zero_init:
        ctx.zero_fill(c)
    name = ctx.namer("mma_splitk" if t.splits > 1 else "mma")
    # both tiles 16-byte aligned (cp.async's 16-byte chunks, ldmatrix's rows):
    # the lowering aligns a workgroup buffer only to its element type
    align = ir.DictAttr.get({"llvm.align": ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), 16)})
    ctx.namer.attrs[name[1]] = {"workgroup_attrib_attrs": ir.ArrayAttr.get([align, align])}
    if ctx.options.gemm_min_blocks > 0:
        # 128x128 tiles hold 64 accumulators and 24 fragment registers per
        # thread: two blocks per multiprocessor (128 registers) would spill
        blocks = 1 if t.bm == 128 else ctx.options.gemm_min_blocks
        ctx.namer.attrs[name[1]]["nvvm.minctasm"] = blocks
    wm, wn = t.bm // WARPS_M, t.bn // WARPS_N
    mt, nt = wm // 16, wn // 8
    _, body, ids, (As, Bs) = launch(t.grid, [THREADS, THREADS], wg, name=name)
    with ir.InsertionPoint(body):
        blk, zero = _block(t, ids, c.type.element_type)
        w = _Warp(blk.tid, wm, wn)
        loads = (_TileLoad(g.a, As, blk.m0, t.bm, t.M, t.a_kinner, g.ms, a_cast, a_conv),
                 _TileLoad(g.b, Bs, blk.n0, t.bn, t.N, t.b_kinner, g.ns, b_cast, b_conv))
        if piped is None:
            def compute(As, Bs, accs):
                return _mma_steps(kind, t, w, mt, nt, accs,
                                  lambda k0, i: _fragment(As, kind, k0, _add(w.m0, 16 * i), w, 16),
                                  lambda k0, j: [_fragment(Bs, kind, k0, _add(w.n0, 8 * j), w,
                                                           8)])
            accs = _k_loop(gen, g, t, blk, ids[2], zero, loads, compute=compute,
                           n_acc=mt * nt * 4)
        else:
            accs = _pipelined_loop(gen, g, t, kind, blk, w, ids[2], zero, loads, plans,
                                   stagings, stages, mt, nt)
        _store_fragments(gen, g, t, blk, w, accs, mt, nt, epi)
        gpu.TerminatorOp()
    if epi is not None:
        _retire(epi.gen.op)


def _mma_steps(kind: str, t: GemmTiling, w: "_Warp", mt: int, nt: int, accs, a_frag,
               b_frags) -> list:
    """The MMAs of one staged K tile: ``a_frag(k0, i)`` gives A's fragment
    ``i``, ``b_frags(k0, j)`` B's fragment ``j`` (and ``j + 1`` when it
    reads two at once)."""
    accs = list(accs)
    for k0 in range(0, t.bk, MMA_K[kind]):
        afr = [a_frag(k0, i) for i in range(mt)]
        bfr: list = []
        while len(bfr) < nt:
            bfr += b_frags(k0, len(bfr))
        for i in range(mt):
            for j in range(nt):
                at = (i * nt + j) * 4
                accs[at:at + 4] = _mma(kind, afr[i], bfr[j], accs[at:at + 4])
    return accs


def _pipelined_loop(gen: Generic, g: GemmMatch, t: GemmTiling, kind: str, blk, w: "_Warp",
                    bz: ir.Value, zero: ir.Value, loads, plans, stagings, stages: int,
                    mt: int, nt: int) -> list:
    """The K loop of ``mma_pipeline`` (its docstring): cp.async of the
    operands with a plan ``stages - 1`` tiles ahead, cooperative loads of
    the others; returns the accumulators."""
    k_lo, k_hi = index(0), index(t.ktiles)
    if t.splits > 1:
        k_lo = arith.muli(arith.remui(bz, index(t.splits)), index(t.per))
        k_hi = arith.minui(arith.addi(k_lo, index(t.per)), index(t.ktiles))
    count = arith.subi(k_hi, k_lo)
    sources = []
    for plan, st, load in zip(plans, stagings, loads):
        if plan is None:
            sources.append(None)
            continue
        ptr, shift = pipe.shared_base(load.smem, st.esize)
        sources.append((pipe.global_base(gen.inputs[plan.operand]), ptr, shift))

    def issue(rel: ir.Value, stage: ir.Value) -> None:
        k0 = arith.muli(arith.addi(k_lo, rel), index(t.bk))
        for plan, st, load, src in zip(plans, stagings, loads, sources):
            if plan is not None:
                pipe.issue_tile(gen, plan, st, src[0], src[1], src[2], stage, load.base, k0,
                                load.extent, t.K, blk.tid, blk.bvals, g.batch,
                                THREADS * THREADS)

    for s in range(stages - 1):
        if t.splits == 1 and s < t.ktiles:
            issue(index(s), index(s))
        elif t.splits > 1:
            guard = if_(ult(index(s), count))
            with ir.InsertionPoint(guard.then_block):
                issue(index(s), index(s))
                scf.YieldOp([])
        pipe.commit()
    loop = scf.ForOp(index(0), count, index(1), [zero] * (mt * nt * 4))
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        k0 = arith.muli(arith.addi(k_lo, i), index(t.bk))
        for plan, load in zip(plans, loads):
            if plan is None:
                _load_tile(gen, g, t, blk, load, k0)
        pipe.wait(stages - 2)
        gpu.BarrierOp()
        nxt = arith.addi(i, index(stages - 1))
        guard = if_(ult(nxt, count))
        with ir.InsertionPoint(guard.then_block):
            issue(nxt, arith.remui(nxt, index(stages)))
            scf.YieldOp([])
        pipe.commit()
        stage = arith.remui(i, index(stages))
        frags = []
        for plan, st, load, src, rows in zip(plans, stagings, loads, sources, (16, 8)):
            frags.append(_fragment_reader(kind, plan, st, load, src, stage, w, rows, nt))
        accs = _mma_steps(kind, t, w, mt, nt, list(loop.inner_iter_args), frags[0], frags[1])
        if None in plans:
            gpu.BarrierOp()
        scf.YieldOp(accs)
    return list(loop.results)


def _fragment_reader(kind: str, plan, st, load, src, stage, w: "_Warp", rows: int, nt: int):
    """``fn(k0, i)``: A's fragment ``i`` (``rows`` 16), or a list of B's
    fragments from ``i`` (``rows`` 8), read from the staged tiles."""
    base = w.m0 if rows == 16 else w.n0
    if plan is None:
        if rows == 16:
            return lambda k0, i: _fragment(load.smem, kind, k0, _add(base, 16 * i), w, 16)
        return lambda k0, j: [_fragment(load.smem, kind, k0, _add(base, 8 * j), w, 8)]
    stage_off = arith.muli(stage, index(st.stage_elems))
    _, ptr, shift = src
    elt = load.smem.type.element_type
    if kind == "tf32":
        conv = _staged("tf32", "f32", None)[2]
        if rows == 16:
            return lambda k0, i: pipe.scalar_fragment(st, load.smem, shift, stage_off, w.group,
                                                      w.pair, k0, _add(base, 16 * i), 16, conv)
        return lambda k0, j: [pipe.scalar_fragment(st, load.smem, shift, stage_off, w.group,
                                                   w.pair, k0, _add(base, 8 * j), 8, conv)]
    def typed(regs):    # f16 operands: vector<2xf16> registers
        if kind != "f16":
            return regs
        v2 = ir.VectorType.get([2], ir.F16Type.get())
        return [llvm.bitcast(v2, r) for r in regs]

    if rows == 16:
        return lambda k0, i: typed(pipe.ldmatrix_a(st, ptr, shift, stage_off, elt, w.lane, k0,
                                                   _add(base, 16 * i)))

    def b_frags(k0, j):
        pairs = j + 1 < nt
        regs = typed(pipe.ldmatrix_b(st, ptr, shift, stage_off, elt, w.lane, k0,
                                     _add(base, 8 * j), pairs))
        return [regs[0:2], regs[2:4]] if pairs else [regs]
    return b_frags


def _store_fragments(gen: Generic, g: GemmMatch, t: GemmTiling, blk, w: _Warp, accs: list,
                     mt: int, nt: int, epi: Epilogue | None) -> None:
    """Each lane's accumulators into C (C fragment layout; bounds checked
    at ragged edges)."""
    c = gen.outputs[0]
    base_m = arith.addi(arith.addi(blk.m0, w.m0), w.group)
    base_n = arith.addi(arith.addi(blk.n0, w.n0), arith.muli(w.pair, index(2)))
    rows, cols = {}, {}
    for i in range(mt):
        for h in range(2):
            gm = _add(base_m, 16 * i + 8 * h)
            dims: list = [None] * len(gen.ranges)
            _place(gen, dims, g.ms, gm)
            rows[i, h] = (gm, dims)
    for j in range(nt):
        for e in range(2):
            gn = _add(base_n, 8 * j + e)
            dims = [None] * len(gen.ranges)
            _place(gen, dims, g.ns, gn)
            cols[j, e] = (gn, dims)
    for i in range(mt):
        for j in range(nt):
            for r in range(4):
                store_element(gen, g, t, blk, c, rows[i, r // 2], cols[j, r % 2],
                              accs[(i * nt + j) * 4 + r], epi)


def store_element(gen, g, t, blk, c, row, col, value, epi) -> None:
    """Stores one accumulator ``value`` at C's (row, col) (each a pair of
    the global index and the generic's dims it sets, from ``_place``),
    guarded where the tile may pass C's edges (also the wgmma kernels')."""
    gm, rdims = row
    gn, cdims = col
    dims: list = [index(0)] * len(gen.ranges)
    for d in g.ms:
        dims[d] = rdims[d]
    for d in g.ns:
        dims[d] = cdims[d]
    for d, v in zip(g.batch, blk.bvals):
        dims[d] = v
    conds = []
    if t.M % t.bm:
        conds.append(ult(gm, t.M))
    if t.N % t.bn:
        conds.append(ult(gn, t.N))
    if conds:
        cond = conds[0] if len(conds) == 1 else arith.andi(conds[0], conds[1])
        guard = if_(cond)
        with ir.InsertionPoint(guard.then_block):
            _store_one(gen, g, t, c, dims, value, epi)
            scf.YieldOp([])
    else:
        _store_one(gen, g, t, c, dims, value, epi)

"""The multi-stage pipeline of the Hopper GEMMs (``wgmma.py``): A and B
slabs copied into workgroup memory with ``cp.async`` (16-byte
``nvvm.cp.async.shared.global``) one to three K slabs ahead of the
``wgmma.mma_async`` that read them, straight into the swizzled layout the
matrix descriptors describe.

Which operands (``wgmma_async_operand``): those whose slab is rows of
contiguous memory as the operand is, with nothing to convert on the way:
a plain (batched) matrix with static strides, rows and offset aligned to
16 bytes (``mma_pipeline.async_operand`` with 16-byte chunks), bf16/f16
read as bf16/f16 or f32 read as f32 for TF32; K innermost (K-major tiles),
or M (N) innermost for bf16/f16 (``x @ w`` with ``w`` as stored, a
transposed A: MN-major tiles, ``wgmma_layout.py``, read with
``imm-trans-a`` / ``imm-trans-b``).  wgmma transposes no TF32 operand, so
a TF32 operand with M (N) innermost, implicit GEMMs and casts
(``compute_dtype=bf16`` on f32) keep the cooperative loads
(``wgmma._stage_load``/``_stage_store``), a slab ahead in registers, into
the same stages.

cp.async has no swizzle: each thread copies 16-byte chunks (consecutive
threads along a row's K, or for MN-major tiles along a K row's M (N),
coalesced) and computes each chunk's swizzled address itself
(``wgmma_layout.Layout.chunk_offset``: K-major chunk ``c`` of row ``r`` at
``r * row bytes + 16 (c ^ f(r % 8))``).  Chunks past the edges of the
operand read fewer bytes (``src-size``; the hardware fills the rest with
zeros) from a clamped, valid address, so ragged M, N and K need no padded
copy and no branch.

TF32: wgmma reads the top 19 bits of each staged f32 (truncation), while
``precision=tf32`` rounds operands to nearest (``cvt.rna.tf32.f32``), as
the cooperative loads and ``mma.py`` do.  So once its copies of a slab
have landed, each thread rounds the chunks it copied in place
(``round_slab``: its own copies, complete after its own
``cp.async.wait.group``, need no barrier), before the async-proxy fence.

The loop (``wgmma._pipelined_k_loop``), for S stages (2 to 4, as many as
fit in the 48 KiB of static workgroup memory of a block, TF32's 128x128
tiles taking BK = 16, or with ``wgmma.DYNAMIC_SMEM`` in up to 227 KiB of
dynamic workgroup memory; 2 when no operand is copied)::

    issue slabs 0 .. S-2 into stages 0 .. S-2 (one commit group each)
    load slab 0 of the operands without cp.async into registers
    for each slab i (stage i % S):
        store the registers (slab i of the cooperative operands) into stage i % S
        cp.async.wait.group S-2             # slab i landed (this thread's copies)
        round slab i in place (TF32)
        fence.proxy.async; barrier          # every copy of slab i visible to wgmma
        load slab i+1 of the cooperative operands into registers
        wgmma.fence; mma_async per K step; commit_group
        wgmma.wait_group 1                  # slab i-1's MMAs complete
        barrier                             # ... in every warpgroup of the block
        issue slab i+S-1 into stage (i-1) % S; commit
    wgmma.wait_group 0

so S-1 slabs of copies are in flight while a slab is multiplied (and
the next slab's cooperative loads: their latency is hidden too), and the
MMAs of slab i overlap the wait for slab i+1's copies; the barrier after
``wait_group 1`` keeps a stage from being overwritten while a warpgroup's
MMAs may still read it.  The accumulators stay in wgmma's struct across
the loop (one ``mma_async`` group in flight at the loop's back edge)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm, memref, nvvm, scf

from ..common import index
from .common import Generic, if_, ult
from .mma_pipeline import AsyncOperand, async_operand, element_offset, gep, ragged_chunk

__all__ = ["MAX_STAGES", "wgmma_async_operand", "issue_slab", "round_slab"]

MAX_STAGES = 4
CHUNK = 16                      # bytes per cp.async


def _i(width: int) -> ir.Type:
    return ir.IntegerType.get_signless(width)


def wgmma_async_operand(gen: Generic, operand: int, mn_dims: list, ks: list, batch: list,
                        kind: str, operand_kind: str | None) -> AsyncOperand | None:
    """The cp.async plan of input ``operand`` of a ``kind`` wgmma GEMM, or
    None (cooperative loads): 16-byte chunks, read as stored, K innermost
    or (bf16/f16: wgmma reads them MN-major) M (N) innermost."""
    staged = "f32" if kind == "tf32" else kind
    if operand_kind != staged:
        return None
    plan = async_operand(gen, operand, mn_dims, ks, batch, staged)
    if plan is None or plan.chunk != CHUNK or (kind == "tf32" and not plan.k_inner):
        return None
    return plan


def _chunks(rows: int, per_row: int, tid: ir.Value, threads: int, body) -> None:
    """``body(row, chunk)`` for this thread's 16-byte chunks of a slab of
    ``rows`` lines of ``per_row`` chunks: chunk ``e = tid + threads * step``
    is line ``e / per_row``, its ``e % per_row``-th chunk (guarded where the
    last step is partial)."""
    total = rows * per_row
    for step in range(-(-total // threads)):
        e = arith.addi(tid, index(threads * step)) if step else tid

        def one(e=e):
            body(arith.divui(e, index(per_row)), arith.remui(e, index(per_row)))
        if (step + 1) * threads <= total:
            one()
            continue
        guard = if_(ult(e, total))
        with ir.InsertionPoint(guard.then_block):
            one()
            scf.YieldOp([])


def issue_slab(gen: Generic, plan: AsyncOperand, lay, src: ir.Value, stage_addr: ir.Value,
               rows: int, mn0: ir.Value, k0: ir.Value, mn_extent: int, K: int,
               ragged_k: bool, tid: ir.Value, bvals: list, batch: list,
               threads: int) -> None:
    """cp.async of one operand's (rows x BK) slab at K ``k0`` into the stage
    at shared address ``stage_addr`` (an index), in ``lay``'s layout;
    ``ragged_k``: slabs may reach past K (their chunks there read zeros).
    K-major: consecutive threads copy consecutive chunks of a row's K;
    MN-major (M or N innermost): of a K row's M (N), BK lines of
    ``rows / T`` chunks."""
    ce = CHUNK // plan.esize
    elt = gen.inputs[plan.operand].type.element_type
    ragged_rows = mn_extent % rows != 0
    cache = ir.Attribute.parse("#nvvm<load_cache_modifier cg>")
    ptr3 = ir.Type.parse("!llvm.ptr<3>")

    def chunk(row: ir.Value, c: ir.Value) -> None:
        if lay.mn_major:
            gk = arith.addi(k0, row)
            gmn = arith.addi(mn0, arith.muli(c, index(ce)))
            gk, gmn, size = ragged_chunk(gk, gmn, K, mn_extent, ragged_k, ragged_rows, ce,
                                         plan.esize)
        else:
            gmn = arith.addi(mn0, row)
            gk = arith.addi(k0, arith.muli(c, index(ce)))
            gmn, gk, size = ragged_chunk(gmn, gk, mn_extent, K, ragged_rows, ragged_k, ce,
                                         plan.esize)
        coords = {plan.k_dim: gk, plan.mn_dim: gmn}
        coords.update(zip(batch, bvals))
        flat = element_offset(plan, coords)
        addr = arith.index_cast(_i(64), arith.addi(stage_addr, lay.chunk_offset(row, c)))
        dst = llvm.IntToPtrOp(ptr3, addr).result
        nvvm.CpAsyncOp(dst, gep(src, flat, elt), ir.IntegerAttr.get(_i(32), CHUNK), cache,
                       cpSize=size)

    if lay.mn_major:
        _chunks(lay.bk, rows // ce, tid, threads, chunk)
    else:
        _chunks(rows, lay.bk // ce, tid, threads, chunk)


def round_slab(smem: ir.Value, stage: ir.Value, lay, rows: int, tid: ir.Value,
               threads: int, to_tf32) -> None:
    """Rounds the f32 elements of the chunks this thread copied into stage
    ``stage`` of ``smem`` (an i32 tile) to TF32 in place (``to_tf32``: f32
    -> i32 bit pattern)."""
    f32 = ir.F32Type.get()
    ce = CHUNK // 4

    def chunk(row: ir.Value, c: ir.Value) -> None:
        for j in range(ce):
            kk = arith.addi(arith.muli(c, index(ce)), index(j)) if j else \
                arith.muli(c, index(ce))
            at = [stage] + lay.index(row, kk)
            v = arith.bitcast(f32, memref.LoadOp(smem, at).result)
            memref.StoreOp(to_tf32(v), smem, at)

    _chunks(rows, lay.bk // ce, tid, threads, chunk)

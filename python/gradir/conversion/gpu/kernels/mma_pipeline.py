"""The multi-stage pipeline of the tensor-core GEMMs (``mma.py``): A and B
tiles copied into workgroup memory with ``cp.async`` (sm_80's asynchronous
global-to-shared copies, ``nvvm.cp.async.shared.global``) two or three K
tiles ahead of the MMAs, and bf16/f16 fragments read with ``ldmatrix``.

Which operands (``async_operand``): those whose tile is rows of contiguous
memory in the operand as it is, with nothing to convert on the way: a
plain (batched) matrix, K or M (N) innermost, static strides, each row
start aligned to the copy size (16, 8 or 4 bytes, the largest that fits),
bf16/f16 read as bf16/f16 or f32 read as f32 for TF32 (rounded with
``cvt.rna.tf32.f32`` as its fragments are read instead of as it is
staged).  Implicit GEMMs, casts (``compute_dtype=bf16`` on f32 operands)
and layouts without such rows keep ``gemm._load_tile``'s cooperative
loads, one stage, in the same loop.

Each copy moves one aligned chunk of a row; chunks past the edges of the
operand copy fewer bytes (the ``src-size`` operand) and the hardware fills
the rest with zeros, so ragged M, N and K need no padded copy and no
branch: rows past the edge read a clamped, valid address and copy 0 bytes.
The tile keeps the operand's layout in workgroup memory (``[mn][k]`` when K
is innermost, ``[k][mn]`` otherwise), each row padded by 16 bytes so that
the eight 16-byte rows an ``ldmatrix`` phase reads, or a warp's scalar TF32
reads, fall in distinct banks.  Workgroup buffers are aligned to their
element only, so the kernel rounds each buffer's address up to 16 bytes
(it is allocated 16 bytes longer).

The loop, for S stages (``stages``: 3 when S stages of both tiles fit in
48 KiB of workgroup memory, else 2, else BK 16)::

    issue tiles 0 .. S-2 (one commit group each)
    for each K tile i:
        cooperative loads of tile i (the operands without cp.async)
        cp.async.wait.group S-2; barrier   # tile i landed, tile i-1 read by all
        issue tile i+S-1 into the stage of tile i-1; commit
        MMAs on tile i's stage
        barrier                            # only with cooperative loads

so S-1 tiles of copies are in flight while a tile is multiplied."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, builtin, llvm, memref, nvvm, scf

from ..common import index
from .common import Generic, if_, ult

__all__ = ["AsyncOperand", "async_operand", "Staging", "SMEM_LIMIT", "global_base",
           "shared_base", "issue_tile", "commit", "wait", "ldmatrix_a", "ldmatrix_b",
           "scalar_fragment"]

SMEM_LIMIT = 48 * 1024            # static workgroup memory of one block
ALIGN = 16                        # bytes: cp.async.cg and ldmatrix rows


def _i(width: int) -> ir.Type:
    return ir.IntegerType.get_signless(width)


@dataclass(frozen=True)
class AsyncOperand:
    """An operand copied with cp.async: its loop dims per memref dim, element
    strides and offset (None: dynamic), the M (or N) and K loop dims, and
    whether K is its innermost dim."""
    operand: int
    dims: list
    strides: list
    offset: int | None
    mn_dim: int
    k_dim: int
    k_inner: bool
    chunk: int                    # bytes per copy: 16, 8 or 4
    esize: int                    # bytes per element


def async_operand(gen: Generic, operand: int, mn_dims: list, ks: list, batch: list,
                  staged: str) -> AsyncOperand | None:
    """The cp.async plan of input ``operand`` staged as ``staged`` ("f32",
    "bf16", "f16": its own element type), or None (cooperative loads)."""
    v = gen.inputs[operand]
    t = v.type
    if str(t.element_type) != staged or len(mn_dims) != 1 or len(ks) != 1:
        return None
    amap = gen.maps[operand]
    dims = []
    for e in amap.results:
        if not isinstance(e, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(e).position)
    mn, k = mn_dims[0], ks[0]
    if len(set(dims)) != len(dims) or mn not in dims or k not in dims or \
            any(d not in batch and d not in (mn, k) for d in dims):
        return None
    strides, offset = t.get_strides_and_offset()
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    if any(s == dyn for s in strides) or strides[-1] != 1 or dims[-1] not in (mn, k):
        return None
    esize = 4 if staged == "f32" else 2
    for chunk in (16, 8, 4):
        ce = chunk // esize
        if all(s % ce == 0 for s in strides[:-1]) and \
                (offset % ce == 0 if offset != dyn else ce == 1):
            return AsyncOperand(operand=operand, dims=dims, strides=list(strides),
                                offset=None if offset == dyn else offset, mn_dim=mn,
                                k_dim=k, k_inner=dims[-1] == k, chunk=chunk, esize=esize)
    return None


@dataclass(frozen=True)
class Staging:
    """One operand's workgroup tiles: ``stages`` tiles of ``rows`` x ``cols``
    elements (row stride ``stride``) in a 1-D buffer, the first from the
    buffer's first 16-byte aligned element."""
    rows: int                     # BK ([k][mn]) or BM/BN ([mn][k])
    cols: int
    stride: int
    stages: int
    k_rows: bool                  # rows run along K: [k][mn]
    esize: int

    @classmethod
    def of(cls, plan: AsyncOperand, tile: int, bk: int, stages: int) -> "Staging":
        """``[mn][k]`` tiles for a K-innermost operand, ``[k][mn]`` else,
        rows padded by 16 bytes (f32 ``[k][mn]``: 32, for TF32's reads)."""
        pad = ALIGN // plan.esize
        if not plan.k_inner and plan.esize == 4:
            pad *= 2
        if plan.k_inner:
            return cls(rows=tile, cols=bk, stride=bk + pad, stages=stages, k_rows=False,
                       esize=plan.esize)
        return cls(rows=bk, cols=tile, stride=tile + pad, stages=stages, k_rows=True,
                   esize=plan.esize)

    @property
    def stage_elems(self) -> int:
        return self.rows * self.stride

    @property
    def elems(self) -> int:
        """The buffer's length: the stages and the alignment slack."""
        return self.stages * self.stage_elems + ALIGN // self.esize

    def bytes(self) -> int:
        return self.elems * self.esize


# --- pointers -------------------------------------------------------------------------

def _struct(mt: ir.MemRefType) -> ir.Type:
    ptr = "!llvm.ptr<3>" if mt.memory_space is not None else "!llvm.ptr"
    rank = len(mt.shape)
    tail = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    return ir.Type.parse(f"!llvm.struct<({ptr}, {ptr}, i64{tail})>")


def _descriptor(buf: ir.Value):
    """(aligned pointer, element offset as i64) of a memref: its LLVM
    descriptor, which the lowering to NVVM folds the cast into."""
    st = _struct(buf.type)
    desc = builtin.UnrealizedConversionCastOp([st], [buf]).result
    ptr_t = ir.Type.parse("!llvm.ptr<3>" if buf.type.memory_space is not None else "!llvm.ptr")
    return llvm.extractvalue(ptr_t, desc, [1]), llvm.extractvalue(_i(64), desc, [2])


def gep(base: ir.Value, offset: ir.Value, elt: ir.Type) -> ir.Value:
    """``base + offset`` elements of ``elt`` (``offset``: index or i64)."""
    if isinstance(offset.type, ir.IndexType):
        offset = arith.index_cast(_i(64), offset)
    return llvm.getelementptr(base.type, base, [offset],
                              ir.DenseI32ArrayAttr.get([-2147483648]), elt, 0)


def global_base(value: ir.Value) -> ir.Value:
    """A global-space pointer to element 0 of ``value``'s view."""
    ptr, offset = _descriptor(value)
    ptr = gep(ptr, offset, value.type.element_type)
    return llvm.AddrSpaceCastOp(ir.Type.parse("!llvm.ptr<1>"), ptr).result


def shared_base(smem: ir.Value, esize: int):
    """(the buffer's pointer, the elements from it to its first 16-byte
    aligned element, as an index)."""
    ptr, _ = _descriptor(smem)
    addr = llvm.PtrToIntOp(_i(64), ptr).result
    mis = arith.andi(addr, arith.constant(_i(64), ALIGN - 1))
    slack = arith.andi(arith.subi(arith.constant(_i(64), ALIGN), mis),
                       arith.constant(_i(64), ALIGN - 1))
    shift = arith.divui(slack, arith.constant(_i(64), esize))
    return ptr, arith.index_cast(ir.IndexType.get(), shift)


# --- cp.async ---------------------------------------------------------------------------

def ragged_chunk(row, col, row_ext: int, col_ext: int, ragged_rows: bool, ragged_cols: bool,
                 ce: int, esize: int):
    """(row, col, cp.async's src-size or None) of the ``ce``-element chunk
    at (``row``, ``col``) of a (``row_ext`` x ``col_ext``) operand, chunks
    along the columns: past the edges fewer bytes (zero-filled), and the
    address of a chunk that copies nothing clamped to a valid, aligned one.
    None: no edge is ragged, every chunk copies whole."""
    if not (ragged_rows or ragged_cols):
        return row, col, None
    left = arith.subi(index(col_ext), col) if ragged_cols else index(ce)
    n = arith.maxsi(arith.minsi(left, index(ce)), index(0))
    if ragged_rows:
        n = arith.select(ult(row, row_ext), n, index(0))
    size = arith.index_cast(_i(32), arith.muli(n, index(esize)))
    row = arith.minui(row, index(row_ext - 1))
    col = arith.minui(col, index((col_ext - 1) // ce * ce))
    return row, col, size


def element_offset(plan: AsyncOperand, coords: dict) -> ir.Value:
    """The element offset of ``coords`` (loop dim -> index) in the
    operand's buffer: its strides and offset."""
    flat = None
    for d, stride in zip(plan.dims, plan.strides):
        term = coords[d] if stride == 1 else arith.muli(coords[d], index(stride))
        flat = term if flat is None else arith.addi(flat, term)
    if plan.offset:
        flat = arith.addi(flat, index(plan.offset))
    return flat


def issue_tile(gen: Generic, plan: AsyncOperand, st: Staging, src: ir.Value, smem,
               shift: ir.Value, stage: ir.Value, mn0: ir.Value, k0: ir.Value,
               mn_extent: int, K: int, tid: ir.Value, bvals: list, batch: list,
               threads: int) -> None:
    """cp.async of one (BK x tile) tile into stage ``stage``: every thread
    copies chunks of rows, past the edges fewer bytes (zero-filled)."""
    ce = plan.chunk // plan.esize
    per_row = st.cols // ce
    total = st.rows * per_row
    elt = gen.inputs[plan.operand].type.element_type
    if st.k_rows:
        row_base, row_ext, col_base, col_ext = k0, K, mn0, mn_extent
    else:
        row_base, row_ext, col_base, col_ext = mn0, mn_extent, k0, K
    ragged_rows = row_ext % st.rows != 0
    ragged_cols = col_ext % st.cols != 0
    stage_off = arith.muli(stage, index(st.stage_elems))
    cache = ir.Attribute.parse(f"#nvvm<load_cache_modifier {'cg' if plan.chunk == 16 else 'ca'}>")

    def chunk(e: ir.Value) -> None:
        """Chunk ``e`` of the tile: row ``e / per_row``, its ``e % per_row``-th."""
        row = arith.divui(e, index(per_row))
        col = arith.muli(arith.remui(e, index(per_row)), index(ce))
        grow = arith.addi(row_base, row)
        gcol = arith.addi(col_base, col)
        grow, gcol, size = ragged_chunk(grow, gcol, row_ext, col_ext, ragged_rows, ragged_cols,
                                        ce, plan.esize)
        coords = {plan.k_dim: grow if st.k_rows else gcol,
                  plan.mn_dim: gcol if st.k_rows else grow}
        coords.update(zip(batch, bvals))
        flat = element_offset(plan, coords)
        s = arith.addi(arith.addi(shift, stage_off),
                       arith.addi(arith.muli(row, index(st.stride)), col))
        nvvm.CpAsyncOp(gep(smem, s, elt), gep(src, flat, elt),
                       ir.IntegerAttr.get(_i(32), plan.chunk), cache, cpSize=size)

    for step in range(-(-total // threads)):
        e = arith.addi(tid, index(threads * step)) if step else tid
        if (step + 1) * threads <= total:
            chunk(e)
            continue
        guard = if_(ult(e, total))
        with ir.InsertionPoint(guard.then_block):
            chunk(e)
            scf.YieldOp([])


def commit() -> None:
    nvvm.CpAsyncCommitGroupOp()


def wait(pending: int) -> None:
    nvvm.CpAsyncWaitGroupOp(ir.IntegerAttr.get(_i(32), pending))


# --- fragments --------------------------------------------------------------------------

def _flat(st: Staging, shift, stage_off, k, mn) -> ir.Value:
    r, c = (k, mn) if st.k_rows else (mn, k)
    return arith.addi(arith.addi(shift, stage_off),
                      arith.addi(arith.muli(r, index(st.stride)), c))


def _ldmatrix(ptr: ir.Value, num: int, trans: bool) -> list:
    i32 = _i(32)
    st = ir.Type.parse("!llvm.struct<(" + ", ".join(["i32"] * num) + ")>")
    layout = ir.Attribute.parse(f"#nvvm.mma_layout<{'col' if trans else 'row'}>")
    op = nvvm.LdMatrixOp(st, ptr, num, layout,
                         ir.Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>"),
                         ir.Attribute.parse("#nvvm.ld_st_matrix_elt_type<b16>"))
    return [llvm.extractvalue(i32, op.result, [i]) for i in range(num)]


def ldmatrix_a(st: Staging, smem, shift, stage_off, elt, lane, k0: int, m0) -> list:
    """The four registers of a 16x16 A fragment (``ldmatrix.x4``: lane l
    points at row l % 8 of matrix l / 8, matrices (m, k) = (0, 0), (8, 0),
    (0, 8), (8, 8); ``.trans`` from a ``[k][m]`` tile)."""
    q, r = arith.divui(lane, index(8)), arith.remui(lane, index(8))
    q_lo, q_hi = arith.remui(q, index(2)), arith.divui(q, index(2))
    if st.k_rows:
        k = arith.addi(arith.addi(arith.muli(q_hi, index(8)), r), index(k0))
        m = arith.addi(m0, arith.muli(q_lo, index(8)))
    else:
        k = arith.addi(arith.muli(q_hi, index(8)), index(k0))
        m = arith.addi(arith.addi(m0, arith.muli(q_lo, index(8))), r)
    return _ldmatrix(gep(smem, _flat(st, shift, stage_off, k, m), elt), 4, st.k_rows)


def ldmatrix_b(st: Staging, smem, shift, stage_off, elt, lane, k0: int, n0, pairs: bool
               ) -> list:
    """The two registers of the 16x8 B fragments at N ``n0`` and, with
    ``pairs``, ``n0 + 8`` (``ldmatrix.x4``, else ``.x2``): matrices
    (k, n) = (0, 0), (8, 0), (0, 8), (8, 8)."""
    l = lane if pairs else arith.remui(lane, index(16))
    q, r = arith.divui(l, index(8)), arith.remui(l, index(8))
    q_lo, q_hi = arith.remui(q, index(2)), arith.divui(q, index(2))
    if st.k_rows:
        k = arith.addi(arith.addi(arith.muli(q_lo, index(8)), r), index(k0))
        n = arith.addi(n0, arith.muli(q_hi, index(8)))
    else:
        k = arith.addi(arith.muli(q_lo, index(8)), index(k0))
        n = arith.addi(arith.addi(n0, arith.muli(q_hi, index(8))), r)
    return _ldmatrix(gep(smem, _flat(st, shift, stage_off, k, n), elt), 4 if pairs else 2,
                     st.k_rows)


def scalar_fragment(st: Staging, smem, shift, stage_off, group, pair, k0: int, mn0,
                    rows: int, to_tf32) -> list:
    """A TF32 A (``rows`` 16) or B (8) fragment read element by element
    from f32 tiles, each rounded to TF32 as it is read."""
    out = []
    for r in range(4 if rows == 16 else 2):
        if rows == 16:
            mn = arith.addi(arith.addi(mn0, group), index(8 * (r % 2)))
            k = arith.addi(pair, index(k0 + 4 * (r // 2)))
        else:
            mn = arith.addi(mn0, group)
            k = arith.addi(pair, index(k0 + 4 * r))
        v = memref.LoadOp(smem, [_flat(st, shift, stage_off, k, mn)]).result
        out.append(to_tf32(v))
    return out

"""Row kernels (gpu-fuse-rows): a chain of row reductions and row-wise
elementwise generics (softmax, layer norm, batch-norm statistics and their
gradients) as one ``gpu.launch``.

Every member of the chain iterates over the same rows R times an inner space
I (or over R only).  A block handles ``by`` rows (thread y) and its ``bx``
threads (thread x) stride over I, in the same order in every phase, so that
a thread reading back an R x I value another phase stored reads what it
wrote itself.  Per member:

* a reduction over I: per-thread partials, a tree in workgroup memory, the
  total broadcast to every thread of the row (a register);
* an elementwise generic over R x I: loads, the body and stores in the
  strided loop (per-row operands come from registers);
* an elementwise generic over R only: every thread computes it (registers).

Per-row results are stored once at the end, by thread x 0 of each row (after
a barrier when threads loaded such a buffer before); those in buffers that
only the chain uses are not stored at all."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from ..common import index
from .common import (Cloner, Generic, apply_map, binary, const, delinearize, if_, launch,
                     pow2_ceil, ult, workgroup_type)
from .reduction import COMBINERS

__all__ = ["RowMember", "RowPlan", "RowAccess", "build_rows", "rows_layout",
           "workgroup_bytes", "WORKGROUP_BYTES"]


@dataclass(frozen=True)
class RowAccess:
    """One memref operand of a member: its root buffer and where it reads or
    writes as a function of the canonical row and inner coordinates
    (``key`` = (offset, row strides, inner strides))."""
    root: ir.Value
    key: tuple

    @property
    def per_row(self) -> bool:
        return not any(self.key[2])


@dataclass
class RowMember:
    """A generic of the chain: its row dims and inner dims (loop dims in
    canonical order, unit dims left out: they are 0), its combiners when it
    reduces over I, the access of each operand (None: not a memref) and the
    buffers host scalars its body uses are loaded from (those loads move
    into the kernel)."""
    gen: Generic
    rows: list
    inner: list
    combiners: list | None
    accesses: list = field(default_factory=list)
    host_reads: frozenset = frozenset()   # buffers of host scalars the body uses

    @property
    def row_only(self) -> bool:
        return not self.inner


@dataclass
class RowPlan:
    """A chain of members over rows ``R`` x inner ``I`` (canonical extents);
    per-row results in a ``local`` buffer are not stored."""
    members: list
    R: tuple
    I: tuple
    local: frozenset = frozenset()   # roots nothing outside the chain reads


# Fewer rows than this (the multiprocessors of an H100/H200) and long ones:
# up to 1024 threads per row, so that the few blocks keep more loads in flight.
FEW_ROWS = 132
# Static workgroup memory a kernel may use (bytes).
WORKGROUP_BYTES = 48 * 1024


def workgroup_bytes(plan: RowPlan, threads: int) -> int:
    """Workgroup memory of ``plan``'s reductions at ``threads`` per block."""
    return sum(threads * max(1, o.type.element_type.width // 8) if hasattr(
        o.type.element_type, "width") else threads * 8
        for m in plan.members if m.combiners is not None for o in m.gen.outputs)


def rows_layout(plan: RowPlan, block_size: int) -> tuple[int, int, int]:
    """(bx, by, grid): threads along I, rows per block, blocks."""
    rtot, itot = math.prod(plan.R), math.prod(plan.I)
    if rtot < FEW_ROWS and itot >= 4 * block_size \
            and workgroup_bytes(plan, 1024) <= WORKGROUP_BYTES:
        block_size = 1024
    bx = min(block_size, max(32, pow2_ceil(max(itot, 1))))
    by = max(1, min(block_size // bx, rtot))
    return bx, by, -(-rtot // by)


class _Kernel:
    """The state of building one row kernel."""

    def __init__(self, plan: RowPlan, bx: int, by: int, grid: int, ids, smem):
        self.plan, self.bx, self.by, self.grid = plan, bx, by, grid
        self.rtot, self.itot = math.prod(plan.R), math.prod(plan.I)
        bid, self.tx, self.ty = ids[0], ids[3], ids[4]
        r = self.ty if grid == 1 else arith.addi(arith.muli(bid, index(by)), self.ty)
        self.valid = ult(r, self.rtot) if grid * by != self.rtot else None
        rc = r if self.valid is None else arith.minui(r, index(max(self.rtot - 1, 0)))
        self.row = delinearize(rc, list(plan.R)) if plan.R else []
        self.smem = list(smem)
        self.regs: dict = {}          # (root, key) -> per-row value held by every thread
        self.final: dict = {}         # (root, key) -> (buffer, indices, value)
        self.loaded_rows = False      # per-row values of written buffers loaded from memory
        self.written_roots = {a.root for m in plan.members
                              for a, _ in _writes(m) if a is not None}

    # -- coordinates -----------------------------------------------------------------

    def dims(self, m: RowMember, inner_coords=None) -> list:
        out = [None] * len(m.gen.ranges)
        for d, v in zip(m.rows, self.row):
            out[d] = v
        if inner_coords is not None:
            for d, v in zip(m.inner, inner_coords):
                out[d] = v
        for d in range(len(out)):
            if out[d] is None:
                out[d] = index(0)
        return out

    def read(self, m: RowMember, k: int, dims: list) -> ir.Value:
        value, acc = m.gen.operands[k], m.accesses[k]
        if acc is None:
            return value
        if acc.per_row and (acc.root, acc.key) in self.regs:
            return self.regs[(acc.root, acc.key)]
        if acc.per_row and acc.root in self.written_roots:
            self.loaded_rows = True
        return memref.LoadOp(value, apply_map(m.gen.maps[k], dims)).result

    # -- members -----------------------------------------------------------------------

    def member(self, m: RowMember) -> None:
        if m.combiners is not None:
            self.reduction(m)
        elif m.row_only:
            self.row_map(m)
        else:
            self.full_map(m)

    def _ins(self, m: RowMember, dims: list) -> list:
        gen = m.gen
        return [self.read(m, k, dims) if gen.used(k) else None for k in range(len(gen.inputs))]

    def row_map(self, m: RowMember) -> None:
        gen = m.gen
        n_in = len(gen.inputs)
        dims = self.dims(m)
        outs = [self.read(m, n_in + j, dims) if gen.used(n_in + j) else None
                for j in range(len(gen.outputs))]
        results = Cloner.body(gen, self._ins(m, dims) + outs, dims)
        for j, v in enumerate(results):
            self._per_row_result(m, n_in + j, dims, v)

    def _per_row_result(self, m: RowMember, k: int, dims: list, v: ir.Value) -> None:
        acc = m.accesses[k]
        self.regs[(acc.root, acc.key)] = v
        self.final[(acc.root, acc.key)] = (m.gen.operands[k], apply_map(m.gen.maps[k], dims), v)

    def _preload(self, m: RowMember) -> None:
        """Per-row operands of ``m`` not in registers yet, loaded once per
        thread before its loop (a register from then on)."""
        gen = m.gen
        n_in = len(gen.inputs)
        dims = None
        for k, acc in enumerate(m.accesses):
            if acc is None or not acc.per_row or (acc.root, acc.key) in self.regs:
                continue
            if k < n_in and not gen.used(k) or k >= n_in and (
                    m.combiners is not None or not gen.used(k)):
                continue
            dims = dims or self.dims(m)
            self.regs[(acc.root, acc.key)] = self.read(m, k, dims)

    def _inner_loop(self, iter_args=()):
        ub = index(self.itot)
        if self.valid is not None:
            ub = arith.select(self.valid, ub, index(0))
        return scf.ForOp(self.tx, ub, index(self.bx), list(iter_args))

    def full_map(self, m: RowMember) -> None:
        gen = m.gen
        n_in = len(gen.inputs)
        self._preload(m)
        loop = self._inner_loop()
        with ir.InsertionPoint(loop.body):
            dims = self.dims(m, delinearize(loop.induction_variable, list(self.plan.I)))
            outs = [self.read(m, n_in + j, dims) if gen.used(n_in + j) else None
                    for j in range(len(gen.outputs))]
            results = Cloner.body(gen, self._ins(m, dims) + outs, dims)
            for j, v in enumerate(results):
                memref.StoreOp(v, gen.outputs[j], apply_map(gen.maps[n_in + j], dims))
            scf.YieldOp([])

    def reduction(self, m: RowMember) -> None:
        gen = m.gen
        n_in = len(gen.inputs)
        types = [o.type.element_type for o in gen.outputs]
        idents = [const(t, COMBINERS[c]) for c, t in zip(m.combiners, types)]
        self._preload(m)
        loop = self._inner_loop(idents)
        with ir.InsertionPoint(loop.body):
            dims = self.dims(m, delinearize(loop.induction_variable, list(self.plan.I)))
            scf.YieldOp(Cloner.body(gen, self._ins(m, dims) + list(loop.inner_iter_args), dims))
        bufs = [self.smem.pop(0) for _ in gen.outputs]
        for buf, v in zip(bufs, loop.results):
            memref.StoreOp(v, buf, [self.ty, self.tx])
        gpu.BarrierOp()
        s = self.bx // 2
        while s >= 1:
            active = if_(ult(self.tx, s))
            with ir.InsertionPoint(active.then_block):
                other = [self.ty, arith.addi(self.tx, index(s))]
                for buf, c in zip(bufs, m.combiners):
                    a = memref.LoadOp(buf, [self.ty, self.tx]).result
                    b = memref.LoadOp(buf, other).result
                    memref.StoreOp(binary(c, a, b), buf, [self.ty, self.tx])
                scf.YieldOp([])
            gpu.BarrierOp()
            s //= 2
        dims = self.dims(m)
        for j, (buf, c) in enumerate(zip(bufs, m.combiners)):
            total = memref.LoadOp(buf, [self.ty, index(0)]).result
            if not gen.zero_init:
                total = binary(c, self.read(m, n_in + j, dims), total)
            self._per_row_result(m, n_in + j, dims, total)

    def finish(self) -> None:
        """Thread x 0 of each row stores the final per-row values."""
        if all(root in self.plan.local for root, _ in self.final):
            return
        if self.loaded_rows:
            gpu.BarrierOp()
        first = arith.cmpi(arith.CmpIPredicate.eq, self.tx, index(0))
        if self.valid is not None:
            first = arith.andi(first, self.valid)
        write = if_(first)
        with ir.InsertionPoint(write.then_block):
            for (root, _), (buf, idx, v) in self.final.items():
                if root not in self.plan.local:
                    memref.StoreOp(v, buf, idx)
            scf.YieldOp([])


def _writes(m: RowMember):
    n_in = len(m.gen.inputs)
    return [(m.accesses[n_in + j], j) for j in range(len(m.gen.outputs))]


def build_rows(plan: RowPlan, block_size: int, name) -> ir.Operation:
    """The ``gpu.launch`` of ``plan`` at the current insertion point."""
    bx, by, grid = rows_layout(plan, block_size)
    wg = [workgroup_type([by, bx], o.type.element_type)
          for m in plan.members if m.combiners is not None for o in m.gen.outputs]
    op, body, ids, smem = launch([grid], [bx, by], wg, name=name)
    with ir.InsertionPoint(body):
        k = _Kernel(plan, bx, by, grid, ids, smem)
        for m in plan.members:
            k.member(m)
        k.finish()
        gpu.TerminatorOp()
    return op

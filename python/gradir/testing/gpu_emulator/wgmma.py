"""Warpgroup tensor-core ops of the emulator (sm_90a): ``nvvm.wgmma.fence``,
``nvvm.wgmma.mma_async``, ``nvvm.wgmma.commit.group``,
``nvvm.wgmma.wait.group``, ``nvvm.fence.proxy`` (async) and the shared
memory addresses they need (``memref.extract_aligned_pointer_as_index`` of
a workgroup buffer).

What the PTX ISA specifies and is checked here:

* a warpgroup is 128 consecutive threads of a block; every wgmma op must be
  executed by whole warpgroups (``.sync.aligned``), in blocks of whole
  warpgroups;
* ``mma_async`` reads A and B from shared memory through 64-bit matrix
  descriptors, decoded as the hardware does: start address bits 0-13,
  leading-dimension byte offset bits 16-29, stride-dimension byte offset
  bits 32-45 (each in 16-byte units), base offset bits 49-51 (must be 0
  here), swizzle mode bits 62-63 (0 none, 1 128B, 2 64B, 3 32B).  K-major
  operands (A ``row``, B ``col``: imm-trans 0): row ``r`` (of M or N) and
  16-byte K chunk ``c`` (two per instruction: k16 of 16-bit types, k8 of
  TF32) lie at ``start + (r % 8) * 16 + (r / 8) * SBO + c * LBO`` without
  swizzling, or ``start + (r % 8) * W + (r / 8) * SBO + c * 16`` with a
  swizzle of W bytes (128, 64, 32);
* MN-major operands (A ``col``, B ``row``: imm-trans-a / imm-trans-b 1,
  .f16/.bf16 only; TF32 with one is an error): the 16-byte chunk ``j`` of
  M (N) elements ``8j .. 8j+7`` at K row ``k`` lies at ``start + j * SBO +
  (k / 8) * LBO + (k % 8) * 16`` without swizzling (core matrices of 8 K
  rows; LBO between the two along K, SBO along M/N), or ``start + (j / P) *
  LBO + (k / 8) * SBO + (k % 8) * W + (j % P) * 16`` with a swizzle of W
  bytes (atoms of W bytes of M/N by 8 K rows, ``P = W / 16`` chunks wide;
  LBO between atoms along M/N, SBO between 8-row groups of K);
* either way a swizzle XORs the 16-byte chunk index bits (4..) of each
  address with its bits from 7 (the atom's row);
* the accumulators of ``m64nNk*`` (N/2 f32 per thread): value ``i`` of thread
  ``t`` of the warpgroup is row ``16 (t / 32) + (t % 32) / 4 + 8 (i / 2 % 2)``,
  column ``8 (i / 4) + 2 (t % 4) + i % 2``;
* shared memory written by ordinary stores is visible to wgmma (the async
  proxy) only after the writing thread's ``fence.proxy.async``; a read of
  an element written in this launch without one is an error, as is one
  written by another thread without a barrier in between (the race
  detector of ``memory.py``);
* shared memory written by ``cp.async`` is readable by wgmma once the
  copy completed (``cp.async.wait.group``, ``async_copies.py``) and the
  copying thread fenced it (``fence.proxy.async``): an ``mma_async`` reading
  a copy still in flight is an error; so is one reading what a bulk
  tensor copy wrote before the warpgroup saw its mbarrier phase complete
  (``tma.py``, whose ``_tma_unseen`` this mixin calls);
* ``mma_async`` is asynchronous: its accumulators may be read (or
  rewritten) only after a ``wait_group`` that covers the ``commit_group``
  holding it, and its shared-memory operands must not change until then
  (checked by comparing them at issue and at completion; the read counts
  as the warpgroup's at both, so another thread's write into them needs a
  barrier after the ``wait_group``, as a plain read would); the accumulators
  must be fenced (``wgmma.fence``) before an ``mma_async`` that takes them
  from ordinary registers (chaining one ``mma_async``'s result into the
  next needs no fence).

Products are exact and summed with the accumulator in float64, rounded to
f32 once (as ``tensor_cores.py`` does for ``mma.sync``); TF32 operands use
the upper 19 bits of their 32 (all of them under ``exact_tf32``).  Emulated
shared addresses: each workgroup buffer whose address is taken gets a
1024-byte aligned range from 0, in the order the kernel asks; an
``llvm.inttoptr`` of such an address to a shared pointer (``!llvm.ptr<3>``)
points into that buffer (the destinations of ``cp.async``)."""

from __future__ import annotations

import re

import numpy as np
from mlir import ir

from .async_copies import Ptr
from .values import EmulationError

__all__ = ["WgmmaOps", "accumulator_coordinates"]

WARPGROUP = 128
_K = {"tf32": 8, "bf16": 16, "f16": 16}
_SWIZZLE_BYTES = {1: 128, 2: 64, 3: 32}


def accumulator_coordinates(n: int):
    """``(rows, cols)``: for thread ``t`` (128) of a warpgroup and its
    accumulator ``i`` (n / 2), the element of the 64 x n result it holds."""
    t = np.arange(WARPGROUP)[:, None]
    i = np.arange(n // 2)[None, :]
    rows = 16 * (t // 32) + (t % 32) // 4 + 8 * (i // 2 % 2)
    cols = 8 * (i // 4) + 2 * (t % 4) + i % 2
    return rows, cols


class _Pending(dict):
    """The accumulator struct an ``mma_async`` returns: readable once a
    ``wait_group`` completed it."""

    def __init__(self, values, rec):
        super().__init__(values)
        self.rec = rec

    def __getitem__(self, key):
        if not self.rec.done:
            raise EmulationError(f"{self.rec.location}: an accumulator of wgmma.mma_async is "
                                 "read before a wgmma.wait_group completed it")
        return super().__getitem__(key)


class _Record:
    """One issued ``mma_async``: its warpgroups, commit group and the shared
    memory it read (to check it is unchanged at completion)."""

    def __init__(self, location, wgs, reads):
        self.location, self.wgs, self.reads = location, wgs, reads
        self.group = None
        self.done = False


class _State:
    """The wgmma state of one launch."""

    def __init__(self, nwg: int):
        self.shared = []            # (base address, alloc)
        self.next_address = 0
        self.fenced = np.zeros(nwg, bool)
        self.proxy = {}             # id(alloc) -> (fenced write epoch, fenced writer lane)
        self.pending = []
        self.next_group = 0


def _attr(op, name: str) -> str:
    return str(op.attributes[name]).split("<")[-1].rstrip(">").strip()


class WgmmaOps:
    """wgmma op rules (a mixin of ``Emulator``; ``exact_tf32`` comes from
    ``TensorCoreOps``)."""

    # -- state and warpgroups ----------------------------------------------------
    def _wgmma(self, op) -> _State:
        k = self.kernel
        if k is None:
            raise EmulationError(f"{op.location}: '{op.name}' on the host")
        st = getattr(k, "wgmma_state", None)
        if st is None:
            st = k.wgmma_state = _State(max(1, k.n // WARPGROUP))
        return st

    def _warpgroups(self, op, mask) -> np.ndarray:
        """The warpgroups executing ``op`` (whole warpgroups only)."""
        k = self.kernel
        if k.tpb % WARPGROUP:
            raise EmulationError(f"{op.location}: '{op.name}' in a block of {k.tpb} threads "
                                 "(not whole warpgroups of 128)")
        nwg = k.n // WARPGROUP
        if mask is None:
            return np.ones(nwg, bool)
        m = np.asarray(mask).reshape(nwg, WARPGROUP)
        if (m.any(1) & ~m.all(1)).any():
            raise EmulationError(f"{op.location}: '{op.name}' reached by only part of a "
                                 "warpgroup")
        return m.all(1)

    # -- shared memory addresses ----------------------------------------------------
    def _op_memref_extract_aligned_pointer_as_index(self, op, env, mask):
        buf = env[op.operands[0]]
        if self.kernel is None or not buf.alloc.workgroup:
            return super()._op_memref_extract_aligned_pointer_as_index(op, env, mask)
        st = self._wgmma(op)
        alloc = buf.alloc
        base = next((b for b, a in st.shared if a is alloc), None)
        if base is None:
            # dynamic shared memory: aligned to 16 bytes only (MLIR's
            # declaration), so placed 16 bytes past a 1024-byte boundary
            pad = 16 if getattr(alloc, "dynamic", False) else 0
            base = st.next_address + pad
            size = alloc.data.nbytes // max(1, self.kernel.nblocks)
            st.next_address += -(-(size + pad) // 1024) * 1024
            st.shared.append((base, alloc))
            st.proxy[id(alloc)] = (np.full(alloc.ids.size, -1, np.int64),
                                   np.full(alloc.ids.size, -1, np.int64))
        per_block = alloc.ids.size // self.kernel.nblocks
        first = int(np.asarray(buf.ids).reshape(-1)[0]) % per_block
        return [np.int64(base + first * alloc.data.itemsize)]

    def _op_llvm_inttoptr(self, op, env, mask):
        """A shared pointer from an address of ``extract_aligned_pointer``."""
        k = self.kernel
        if k is None or not str(op.results[0].type).endswith("<3>"):
            return super()._op_llvm_inttoptr(op, env, mask)
        st = self._wgmma(op)
        addr = np.broadcast_to(np.asarray(env[op.operands[0]], np.int64), (k.n,))
        live = addr if mask is None else addr[np.asarray(mask, bool)]
        if not live.size:
            return [Ptr(st.shared[0][1], np.zeros(k.n, np.int64), st.shared[0][0], "shared")
                    if st.shared else np.int64(0)]
        lo, hi = int(live.min()), int(live.max())
        for base, alloc in st.shared:
            if base <= lo and hi < base + alloc.data.nbytes // k.nblocks:
                return [Ptr(alloc, addr - base, base, "shared")]
        raise EmulationError(f"{op.location}: a shared pointer to [{lo:#x}, {hi:#x}] "
                             "outside any workgroup buffer")

    def _op_nvvm_fence_proxy(self, op, env, mask):
        kind = _attr(op, "kind")
        if kind not in ("async", "async.shared"):
            raise EmulationError(f"{op.location}: fence.proxy.{kind} is not supported by "
                                 "the emulator")
        st = self._wgmma(op)
        k = self.kernel
        active = np.ones(k.n, bool) if mask is None else np.asarray(mask, bool)
        for _, alloc in st.shared:
            epochs, lanes = st.proxy[id(alloc)]
            w = alloc.w_lane
            sel = (alloc.w_launch == k.launch) & (w >= 0)
            sel[sel] = active[w[sel]]
            epochs[sel] = alloc.w_epoch[sel]
            lanes[sel] = w[sel]
        return []

    def _locate(self, op, st: _State, addr: np.ndarray):
        """The workgroup allocation holding every address of ``addr``
        (16-byte chunks), and its base."""
        lo, hi = int(addr.min()), int(addr.max()) + 16
        for base, alloc in st.shared:
            size = alloc.data.nbytes // self.kernel.nblocks
            if base <= lo and hi <= base + size:
                return base, alloc
        raise EmulationError(f"{op.location}: wgmma.mma_async reads shared memory "
                             f"[{lo:#x}, {hi:#x}) outside any workgroup buffer")

    # -- the ops ----------------------------------------------------------------------
    def _op_nvvm_wgmma_fence_aligned(self, op, env, mask):
        st = self._wgmma(op)
        st.fenced |= self._warpgroups(op, mask)
        return []

    def _op_nvvm_wgmma_commit_group_sync_aligned(self, op, env, mask):
        st = self._wgmma(op)
        wgs = self._warpgroups(op, mask)
        for rec in st.pending:
            if rec.group is None and (rec.wgs & wgs).any():
                rec.group = st.next_group
        st.next_group += 1
        return []

    def _op_nvvm_wgmma_wait_group_sync_aligned(self, op, env, mask):
        st = self._wgmma(op)
        wgs = self._warpgroups(op, mask)
        keep = int(ir.IntegerAttr(op.attributes["group"]).value)
        mine = [r for r in st.pending if r.group is not None and (r.wgs & wgs).any()]
        groups = sorted({r.group for r in mine})
        finish = set(groups[:max(0, len(groups) - keep)])
        for rec in mine:
            if rec.group in finish:
                for alloc, key, before, flat, first in rec.reads:
                    if not np.array_equal(_bytes(alloc, self.kernel)[key], before):
                        raise EmulationError(f"{rec.location}: shared memory read by "
                                             "wgmma.mma_async changed before its "
                                             "wgmma.wait_group")
                    self._check_read(op, alloc, flat, first)        # read until now
                rec.done = True
        st.pending = [r for r in st.pending if not r.done]
        st.fenced &= ~wgs
        return []

    def _op_llvm_insertvalue(self, op, env, mask):
        struct = env[op.operands[0]]
        if isinstance(struct, _Pending):
            struct[(0,)]            # raises unless completed
        return super()._op_llvm_insertvalue(op, env, mask)

    def _op_nvvm_wgmma_mma_async(self, op, env, mask):
        st = self._wgmma(op)
        wgs = self._warpgroups(op, mask)
        shape = str(op.attributes["shape"])
        m = re.search(r"m = (\d+), n = (\d+), k = (\d+)", shape)
        kind = _attr(op, "typeA")
        if m is None or kind not in _K or _attr(op, "typeB") != kind or \
                _attr(op, "typeD") != "f32" or int(m.group(1)) != 64 or \
                int(m.group(3)) != _K[kind] or int(m.group(2)) % 8 or \
                not 8 <= int(m.group(2)) <= 256:
            raise EmulationError(f"{op.location}: wgmma.mma_async {shape} on {kind} is not "
                                 "supported by the emulator")
        # imm-trans-a / imm-trans-b: A ``col``, B ``row`` read MN-major
        trans = (_attr(op, "layoutA") == "col", _attr(op, "layoutB") == "row")
        if any(trans) and kind not in ("bf16", "f16"):
            raise EmulationError(f"{op.location}: wgmma.mma_async on {kind} with a transposed "
                                 "(MN-major) operand: PTX transposes only .f16/.bf16")
        n = int(m.group(2))
        acc, da, db = (env[v] for v in op.operands)
        chained = isinstance(acc, _Pending) and not acc.rec.done
        if not chained and not st.fenced[wgs].all():
            raise EmulationError(f"{op.location}: wgmma.mma_async takes accumulators from "
                                 "registers without a wgmma.fence before it")
        idx = np.nonzero(wgs)[0]
        reads = []
        A = self._wgmma_operand(op, st, da, idx, 64, kind, reads, trans[0])
        B = self._wgmma_operand(op, st, db, idx, n, kind, reads, trans[1])
        sign = 1.0
        for which in ("scaleA", "scaleB"):
            if _attr(op, which) == "neg":
                sign = -sign
        rows, cols = accumulator_coordinates(n)
        k = self.kernel
        C = np.zeros((len(idx), 64, n))
        if _attr(op, "scaleD") != "zero":
            dict_get = dict.__getitem__
            for i in range(n // 2):
                if (i,) not in acc:
                    raise EmulationError(f"{op.location}: accumulator {i} of "
                                         "wgmma.mma_async is undefined")
                vals = np.broadcast_to(np.asarray(dict_get(acc, (i,)), np.float32), (k.n,))
                C[:, rows[:, i], cols[:, i]] = vals.reshape(-1, WARPGROUP)[idx]
        with np.errstate(all="ignore"):
            D = (sign * np.matmul(A, B.transpose(0, 2, 1)) + C).astype(np.float32)
        rec = _Record(op.location, wgs, reads)
        st.pending.append(rec)
        out = {}
        for i in range(n // 2):
            v = np.zeros((k.n // WARPGROUP, WARPGROUP), np.float32)
            v[idx] = D[:, rows[:, i], cols[:, i]]
            out[(i,)] = v.reshape(k.n)
        return [_Pending(out, rec)]

    def _wgmma_operand(self, op, st: _State, desc, idx, rows: int, kind: str,
                       reads: list, mn_major: bool = False) -> np.ndarray:
        """The (warpgroups x rows x K) float64 operand a descriptor points to
        (K-major, or ``mn_major``), its reads checked and recorded in
        ``reads``."""
        k = self.kernel
        d = np.broadcast_to(np.asarray(desc, np.int64), (k.n,)).view(np.uint64)
        d = d.reshape(-1, WARPGROUP)[idx]
        if (d != d[:, :1]).any():
            raise EmulationError(f"{op.location}: wgmma.mma_async descriptor differs within "
                                 "a warpgroup")
        d = d[:, 0]
        start = ((d & 0x3FFF) << 4).astype(np.int64)
        lbo = (((d >> 16) & 0x3FFF) << 4).astype(np.int64)
        sbo = (((d >> 32) & 0x3FFF) << 4).astype(np.int64)
        if (((d >> 49) & 7) != 0).any():
            raise EmulationError(f"{op.location}: a matrix base offset is not supported by "
                                 "the emulator")
        swizzle = (d >> 62).astype(np.int64)
        if (swizzle != swizzle[0]).any():
            raise EmulationError(f"{op.location}: swizzle modes differ between warpgroups")
        s0, lbo, sbo = start[:, None, None], lbo[:, None, None], sbo[:, None, None]
        mode = int(swizzle[0])
        if mn_major:
            addr = _mn_major_chunks(s0, lbo, sbo, mode, rows, kind)
        else:
            r = np.arange(rows)[None, :, None]
            c = np.arange(2)[None, None, :]
            if mode == 0:
                addr = s0 + (r % 8) * 16 + (r // 8) * sbo + c * lbo
            else:
                addr = s0 + (r % 8) * _SWIZZLE_BYTES[mode] + (r // 8) * sbo + c * 16
        if mode:
            bits = {128: 7, 64: 3, 32: 1}[_SWIZZLE_BYTES[mode]]
            addr = addr ^ (((addr >> 7) & bits) << 4)
        base, alloc = self._locate(op, st, addr)
        pending = getattr(alloc, "cp_pending", None)
        off = addr - base                                   # (wgs, rows, 2)
        blocks = (idx * WARPGROUP) // k.tpb
        byte = off[..., None] + np.arange(16)               # (wgs, rows, 2, 16)
        key = (blocks[:, None, None, None], byte)
        chunk = _bytes(alloc, k)[key]
        # which elements: the race detector and the async-proxy fence
        isz = alloc.data.itemsize
        per_block = alloc.ids.size // k.nblocks
        flat = (blocks[:, None, None, None] * per_block
                + (off[..., None] + np.arange(0, 16, isz)) // isz).reshape(-1)
        if pending is not None and pending[flat].any():
            raise EmulationError(f"{op.location}: wgmma.mma_async reads shared memory whose "
                                 "cp.async has not completed (cp.async.wait.group)")
        first = np.broadcast_to((idx * WARPGROUP)[:, None, None, None],
                                addr.shape + (16 // isz,)).reshape(-1)
        if self._tma_unseen(alloc, flat, first):
            raise EmulationError(f"{op.location}: wgmma.mma_async reads shared memory before "
                                 "the mbarrier phase of its bulk tensor copy completed "
                                 "(mbarrier.try_wait.parity)")
        epochs, lanes = st.proxy[id(alloc)]
        written = alloc.w_launch[flat] == k.launch
        seen = (epochs[flat] == alloc.w_epoch[flat]) & (lanes[flat] == alloc.w_lane[flat])
        if (written & ~seen).any():
            raise EmulationError(f"{op.location}: wgmma.mma_async reads shared memory "
                                 "written without a fence.proxy.async after it")
        self._check_read(op, alloc, flat, first)
        reads.append((alloc, key, chunk.copy(), flat, first))
        values = _values(chunk, kind, self.exact_tf32)
        if mn_major:            # (wgs, K, rows / T, T) -> (wgs, rows, K)
            return values.reshape(len(idx), _K[kind], rows).transpose(0, 2, 1)
        return values.reshape(len(idx), rows, _K[kind])


def _mn_major_chunks(s0, lbo, sbo, mode: int, rows: int, kind: str) -> np.ndarray:
    """The (unswizzled) addresses (warpgroups, K, rows / T) of the 16-byte
    chunks of an MN-major operand (``T`` elements of M or N at one K; PTX's
    canonical MN-major layouts, K = 16 of bf16/f16): no swizzle, core
    matrices of 8 K rows x 16 bytes, ``start + (mn / T) * SBO + (k / 8) *
    LBO + (k % 8) * 16``; a swizzle of W bytes, atoms of W bytes of M/N x 8
    K rows, ``start + (mn / A) * LBO + (k / 8) * SBO + (k % 8) * W + (mn %
    A / T) * 16`` (``A`` = W / element bytes elements per atom)."""
    k = np.arange(_K[kind])[None, :, None]
    j = np.arange(rows // 8)[None, None, :]          # 16-byte chunks: T = 8 (bf16/f16)
    if mode == 0:
        return s0 + j * sbo + (k // 8) * lbo + (k % 8) * 16
    width = _SWIZZLE_BYTES[mode]
    per = width // 16
    return s0 + (j // per) * lbo + (k // 8) * sbo + (k % 8) * width + (j % per) * 16


def _bytes(alloc, kernel) -> np.ndarray:
    """A workgroup allocation's bytes, one row per block."""
    return alloc.data.reshape(kernel.nblocks, -1).view(np.uint8)


def _values(chunk: np.ndarray, kind: str, exact: bool) -> np.ndarray:
    """The float64 elements of 16-byte chunks (..., 2, 16) of ``kind``."""
    raw = np.ascontiguousarray(chunk)
    if kind == "tf32":
        words = raw.view(np.uint32)
        if not exact:
            words = words & np.uint32(0xFFFFE000)
        return words.view(np.float32).astype(np.float64)
    half = raw.view(np.uint16)
    if kind == "f16":
        return half.view(np.float16).astype(np.float64)
    return (half.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

"""TMA and mbarriers in the emulator (sm_90): the host's tensor maps
(``llvm.call @mgpuGradirTensorMap``, what ``cuTensorMapEncodeTiled``
encodes), ``nvvm.mbarrier.init``, ``nvvm.fence.mbarrier_init`` (nothing to
do in the emulator), ``nvvm.mbarrier.arrive.expect_tx``,
``nvvm.mbarrier.try_wait.parity`` and
``nvvm.cp.async.bulk.tensor.shared.cluster.global`` (tile mode).

What the PTX ISA and the driver specify and is checked here:

* a tensor map (``TensorMap``): a global address aligned to 16 bytes,
  dims innermost first, strides of the outer dims in bytes (multiples of
  16), a box of at most 256 elements per dim whose inner row is a multiple
  of 16 bytes and, swizzled, at most the swizzle's span (32, 64, 128 bytes);
* a bulk tensor copy reads the box at its coordinates (elements outside
  the dims read as zeros) and writes it to shared memory row-major, the
  inner box dim contiguous, the 16-byte chunk bits (4..) of each address
  XORed with its bits from 7 (the swizzle, as wgmma's descriptors read
  it), at a destination aligned to 128 bytes; it adds the whole box's
  bytes to its mbarrier's completed transactions;
* an mbarrier (``init`` with an arrival count) completes its current phase
  when every expected arrival came (``arrive.expect_tx`` is one, and
  expects its bytes) and the transactions it expects have completed; the
  next phase then starts with the same count;
* ``try_wait.parity P`` returns once the phase of parity ``P`` has
  completed (the current phase's parity is not ``P``): the emulator runs
  every thread in step, so a wait for a phase nothing can complete any
  more is a deadlock, refused;
* shared memory written by a bulk copy is readable (a load, a
  ``wgmma.mma_async``) by a thread only after it observed the completion
  of the copy's phase with ``try_wait.parity``; reading it earlier is
  refused.  The copy's writes are the async proxy's: wgmma reads them with
  no ``fence.proxy.async``.

The emulator writes a copy's bytes when it is issued (its phase completes
no earlier, and reads before it are refused); overwriting what another
thread read in the same barrier interval is a race, as for a store, but
reads after it are ordered by the mbarrier, not by barriers."""

from __future__ import annotations

import numpy as np
from mlir import ir

from .async_copies import Ptr, alloc_bytes
from .values import EmulationError

__all__ = ["TmaOps", "TensorMap"]

RUNTIME_ENCODE = "mgpuGradirTensorMap"
DTYPES = {7: np.float32, 6: np.float16, 9: "bf16"}
SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
_XOR_BITS = {32: 1, 64: 3, 128: 7}


class TensorMap:
    """An encoded tensor map: ``alloc`` (device) and the byte of element 0,
    element size, dims (innermost first), outer strides in bytes, box and
    swizzle span in bytes (0: none)."""

    def __init__(self, alloc, byte: int, esize: int, dims, strides, box, swizzle: int):
        self.alloc, self.byte, self.esize = alloc, byte, esize
        self.dims, self.strides, self.box, self.swizzle = dims, strides, box, swizzle


class _Barriers:
    """The mbarriers of one launch: per barrier (allocation, byte), per
    block its count, pending arrivals, pending transaction bytes and
    completed phases, and per lane the completed phases it observed."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.keys = {}                 # (id(alloc), byte) -> index
        self.count, self.pending, self.tx, self.done, self.seen = [], [], [], [], []

    def index(self, key) -> int:
        i = self.keys.get(key)
        if i is None:
            i = self.keys[key] = len(self.keys)
            nb, n = self.kernel.nblocks, self.kernel.n
            self.count.append(np.zeros(nb, np.int64))
            self.pending.append(np.full(nb, -1, np.int64))     # -1: not initialized
            self.tx.append(np.zeros(nb, np.int64))
            self.done.append(np.zeros(nb, np.int64))
            self.seen.append(np.zeros(n, np.int64))
        return i

    def complete(self, i: int, blocks) -> None:
        ready = (self.pending[i][blocks] == 0) & (self.tx[i][blocks] == 0)
        b = blocks[ready]
        self.done[i][b] += 1
        self.pending[i][b] = self.count[i][b]


class TmaOps:
    """Tensor map, mbarrier and bulk tensor copy rules (a mixin of
    ``Emulator``)."""

    # -- host: the tensor map ----------------------------------------------------------
    def _op_llvm_call(self, op, env, mask):
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value \
            if "callee" in op.attributes else None
        if callee != RUNTIME_ENCODE:
            return super()._op_llvm_call(op, env, mask)
        ptr = env[op.operands[0]]
        dtype, swz, d0, d1, d2, s1, s2, b0, b1 = (int(np.asarray(env[v]))
                                                  for v in list(op.operands)[1:])
        where = f"{op.location}: cuTensorMapEncodeTiled"
        if not isinstance(ptr, Ptr) or not ptr.alloc.device or ptr.alloc.workgroup or \
                ptr.alloc.freed:
            raise EmulationError(f"{where}: the address is not in a device allocation")
        alloc, byte = ptr.alloc, int(np.asarray(ptr.byte))
        base = ptr.base + byte
        if dtype not in DTYPES or swz not in SWIZZLE_BYTES:
            raise EmulationError(f"{where}: data type {dtype} or swizzle {swz} not supported")
        esize = 4 if dtype == 7 else 2
        swizzle = SWIZZLE_BYTES[swz]
        if base % 16 or s1 % 16 or s2 % 16:
            raise EmulationError(f"{where}: the address and strides must be multiples of 16 "
                                 "bytes")
        if not (0 < b0 <= 256 and 0 < b1 <= 256) or (b0 * esize) % 16 or \
                swizzle and b0 * esize > swizzle:
            raise EmulationError(f"{where}: box {b0}x{b1} does not fit the swizzle")
        return [TensorMap(alloc, byte, esize, (d0, d1, d2), (s1, s2), (b0, b1, 1), swizzle)]

    # -- mbarriers ----------------------------------------------------------------------
    def _barriers(self, op) -> _Barriers:
        k = self.kernel
        if k is None:
            raise EmulationError(f"{op.location}: '{op.name}' on the host")
        st = getattr(k, "mbarriers", None)
        if st is None:
            st = k.mbarriers = _Barriers(k)
        return st

    def _barrier_lanes(self, op, ptr, mask):
        """(barrier index per active lane, the active lanes, their blocks)."""
        if not isinstance(ptr, Ptr) or not ptr.alloc.workgroup:
            raise EmulationError(f"{op.location}: an mbarrier outside workgroup memory")
        k, st = self.kernel, self._barriers(op)
        active = np.ones(k.n, bool) if mask is None else np.asarray(mask, bool)
        lanes = k.lane[active]
        byte = np.broadcast_to(np.asarray(ptr.byte, np.int64), (k.n,))[active]
        if ((ptr.base + byte) % 8).any():
            raise EmulationError(f"{op.location}: an mbarrier not aligned to 8 bytes")
        idx = np.array([st.index((id(ptr.alloc), int(b))) for b in byte], np.int64)
        return idx, lanes, k.block_of[lanes]

    def _op_nvvm_mbarrier_init(self, op, env, mask):
        st = self._barriers(op)
        idx, lanes, blocks = self._barrier_lanes(op, env[op.operands[0]], mask)
        count = np.broadcast_to(np.asarray(env[op.operands[1]], np.int64),
                                (self.kernel.n,))[lanes]
        for i, b, c in zip(idx, blocks, count):
            st.count[i][b] = st.pending[i][b] = c
            st.tx[i][b] = st.done[i][b] = 0
        return []

    def _op_nvvm_fence_mbarrier_init(self, op, env, mask):
        self._barriers(op)
        return []

    def _op_nvvm_mbarrier_arrive_expect_tx(self, op, env, mask):
        st = self._barriers(op)
        idx, lanes, blocks = self._barrier_lanes(op, env[op.operands[0]], mask)
        tx = np.broadcast_to(np.asarray(env[op.operands[1]], np.int64),
                             (self.kernel.n,))[lanes]
        for i, b, t in zip(idx, blocks, tx):
            if st.pending[i][b] <= 0:
                raise EmulationError(f"{op.location}: mbarrier.arrive on an mbarrier "
                                     + ("not initialized" if st.pending[i][b] < 0 else
                                        "whose phase expects no more arrivals"))
            st.tx[i][b] += t
            st.pending[i][b] -= 1
            st.complete(i, np.array([b]))
        return [np.int64(0) for _ in op.results]

    def _op_nvvm_mbarrier_try_wait_parity(self, op, env, mask):
        st = self._barriers(op)
        idx, lanes, blocks = self._barrier_lanes(op, env[op.operands[0]], mask)
        parity = np.broadcast_to(np.asarray(env[op.operands[1]], np.int64),
                                 (self.kernel.n,))[lanes]
        for i, lane, b, p in zip(idx, lanes, blocks, parity):
            if st.pending[i][b] < 0:
                raise EmulationError(f"{op.location}: mbarrier.try_wait on an mbarrier not "
                                     "initialized")
            done = st.done[i][b]
            if done % 2 == p % 2:
                raise EmulationError(f"{op.location}: mbarrier.try_wait.parity waits for a "
                                     "phase that never completes (deadlock)")
            st.seen[i][lane] = done
        return []

    # -- bulk tensor copies -------------------------------------------------------------
    def _op_nvvm_cp_async_bulk_tensor_shared_cluster_global(self, op, env, mask):
        k = self.kernel
        seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        if any(seg[4:]) or "im2col" in str(op.attributes["mode"]):
            raise EmulationError(f"{op.location}: only tile-mode bulk tensor copies without "
                                 "multicast, cache hints or predicates are supported")
        ops = list(op.operands)
        dst, tmap = env[ops[0]], env[ops[1]]
        coords = [env[v] for v in ops[2:2 + seg[2]]]
        bar = env[ops[2 + seg[2]]]
        if not isinstance(tmap, TensorMap):
            raise EmulationError(f"{op.location}: a bulk tensor copy without a tensor map")
        if len(coords) != (3 if tmap.strides[1] else 2):
            raise EmulationError(f"{op.location}: a {len(coords)}-d bulk tensor copy with a "
                                 f"tensor map of rank {3 if tmap.strides[1] else 2}")
        if not isinstance(dst, Ptr) or not dst.alloc.workgroup:
            raise EmulationError(f"{op.location}: a bulk tensor copy into something not "
                                 "workgroup memory")
        if tmap.alloc.freed:
            raise EmulationError(f"{op.location}: a bulk tensor copy from a freed buffer")
        st = self._barriers(op)
        idx, lanes, blocks = self._barrier_lanes(op, bar, mask)
        dbyte = np.broadcast_to(np.asarray(dst.byte, np.int64), (k.n,))[lanes]
        cs = [np.broadcast_to(np.asarray(c, np.int64), (k.n,))[lanes] for c in coords]
        cs += [np.zeros(len(lanes), np.int64)] * (3 - len(cs))
        src = alloc_bytes(tmap.alloc)
        dbytes = alloc_bytes(dst.alloc)
        b0, b1, b2 = tmap.box
        es = tmap.esize
        box_bytes = b0 * b1 * b2 * es
        e0 = np.arange(b0)[None, None, :]
        e1 = np.arange(b1)[None, :, None]
        e2 = np.arange(b2)[:, None, None]
        item = dst.alloc.data.itemsize
        per_block = dbytes.shape[1] // item
        for j, lane in enumerate(lanes):
            addr = dst.base + int(dbyte[j])
            if addr % 128:
                raise EmulationError(f"{op.location}: a bulk tensor copy's destination is not "
                                     "aligned to 128 bytes")
            i0, i1, i2 = cs[0][j] + e0, cs[1][j] + e1, cs[2][j] + e2
            ok = (i0 >= 0) & (i0 < tmap.dims[0]) & (i1 >= 0) & (i1 < tmap.dims[1]) & \
                (i2 >= 0) & (i2 < tmap.dims[2])
            first = tmap.byte + i0 * es + i1 * tmap.strides[0] + i2 * tmap.strides[1]
            first = np.where(ok, first, 0)[..., None] + np.arange(es)
            data = np.where(ok[..., None], src[np.minimum(first, src.size - 1)], 0)
            off = (((e2 * b1 + e1) * b0 + e0) * es)[..., None] + np.arange(es) + addr
            if tmap.swizzle:
                off = off ^ (((off >> 7) & _XOR_BITS[tmap.swizzle]) << 4)
            off = off - dst.base
            if off.min() < 0 or off.max() >= dbytes.shape[1]:
                raise EmulationError(f"{op.location}: a bulk tensor copy writes outside its "
                                     "workgroup buffer")
            b = k.block_of[lane]
            ids = np.unique(b * per_block + off.reshape(-1) // item)
            self._check_write(op, dst.alloc, ids, np.full(ids.size, lane))
            dbytes[b, off.reshape(-1)] = data.reshape(-1).astype(np.uint8)
            # ordered by the mbarrier (checked at each read), not by barriers,
            # and written by the async proxy: no writer for the race detector
            # or the fence.proxy.async check
            dst.alloc.w_launch[ids] = -1
            tags = dst.alloc.__dict__
            if "tma_bar" not in tags:
                tags["tma_bar"] = np.full(dst.alloc.data.size, -1, np.int64)
                tags["tma_phase"] = np.zeros(dst.alloc.data.size, np.int64)
            dst.alloc.tma_bar[ids] = idx[j]
            dst.alloc.tma_phase[ids] = st.done[idx[j]][b]
            st.tx[idx[j]][b] -= box_bytes
            st.complete(idx[j], np.array([b]))
        return []

    def _tma_unseen(self, alloc, flat, lanes) -> bool:
        """Whether any element ``flat`` was written by a bulk copy whose phase
        lane ``lanes`` (same length) has not observed complete."""
        bars = getattr(alloc, "tma_bar", None)
        st = getattr(self.kernel, "mbarriers", None)
        if bars is None or st is None:
            return False
        b = bars[flat]
        hit = b >= 0
        if not hit.any():
            return False
        seen = np.stack(st.seen)[b[hit], lanes[hit]]
        return bool((seen <= alloc.tma_phase[flat][hit]).any())

    def _op_memref_load(self, op, env, mask):
        """A load of workgroup memory a bulk copy wrote, before the loading
        thread saw its phase complete, is an error."""
        buf = env[op.operands[0]]
        if getattr(getattr(buf, "alloc", None), "tma_bar", None) is not None and \
                self.kernel is not None:
            idx = [env[v] for v in list(op.operands)[1:]]
            _, flat, active = self._addresses(op, buf, idx, mask)
            if self._tma_unseen(buf.alloc, flat, self.kernel.lane[active]):
                raise EmulationError(f"{op.location}: a load of an element whose bulk tensor "
                                     "copy's mbarrier phase it has not waited for "
                                     "(mbarrier.try_wait.parity)")
        return super()._op_memref_load(op, env, mask)

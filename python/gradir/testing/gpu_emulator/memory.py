"""Memory accesses in kernels: bounds, freed and host buffers, and the race
detector (per element: the last writer and the readers of the current barrier
interval, per launch), plus ``gpu.barrier`` (which starts a new interval) and
atomics."""

from __future__ import annotations

import numpy as np
from mlir import ir

from .values import Alloc, Buf, EmulationError, unsigned

__all__ = ["MemoryOps", "ATOMIC_KINDS", "ATOMIC_UFUNCS"]

# memref.atomic_rmw kinds (arith::AtomicRMWKind values) and their numpy ufuncs.
ATOMIC_KINDS = {0: "addf", 1: "addi", 2: "andi", 4: "maximumf", 5: "maxnumf", 6: "maxs",
                 7: "maxu", 8: "minimumf", 9: "minnumf", 10: "mins", 11: "minu", 12: "mulf",
                 13: "muli", 14: "ori", 15: "xori"}
ATOMIC_UFUNCS = {"addf": np.add, "addi": np.add, "andi": np.bitwise_and,
                  "maximumf": np.maximum, "maxnumf": np.fmax, "maxs": np.maximum,
                  "maxu": np.maximum, "minimumf": np.minimum, "minnumf": np.fmin,
                  "mins": np.minimum, "minu": np.minimum, "mulf": np.multiply,
                  "muli": np.multiply, "ori": np.bitwise_or, "xori": np.bitwise_xor}


class MemoryOps:
    """``memref`` loads, stores and atomics of kernels, with their checks (a
    mixin of ``Emulator``: ``self.kernel`` is the running launch)."""

    def _op_gpu_barrier(self, op, env, mask):
        k = self.kernel
        if mask is not None:
            per_block = mask.reshape(k.nblocks, k.tpb)
            if (per_block.any(1) & ~per_block.all(1)).any():
                raise EmulationError(f"{op.location}: gpu.barrier reached by only part of "
                                     "a block")
        k.epoch += 1
        return []

    def _addresses(self, op, buf: Buf, idx, mask):
        k = self.kernel
        if buf.alloc.freed:
            raise EmulationError(f"{op.location}: access to a freed buffer")
        if k is None:
            raise EmulationError(f"{op.location}: '{op.name}' on the host")
        if not buf.alloc.device:
            raise EmulationError(f"{op.location}: a kernel accesses host memory")
        n = k.n
        active = np.ones(n, bool) if mask is None else mask
        idx = [np.broadcast_to(np.asarray(i, np.int64), (n,))[active] for i in idx]
        shape = buf.data.shape[1:] if buf.alloc.workgroup else buf.data.shape
        for d, (i, s) in enumerate(zip(idx, shape)):
            if i.size and (i.min() < 0 or i.max() >= s):
                bad = i[(i < 0) | (i >= s)][0]
                raise EmulationError(f"{op.location}: '{op.name}' index {bad} out of bounds "
                                     f"for dimension {d} of size {s}")
        if buf.alloc.workgroup:
            idx = [k.block_of[active]] + idx
        key = tuple(idx)
        flat = np.broadcast_to(buf.ids[key], (int(active.sum()),))
        return key, flat, active

    def _op_memref_load(self, op, env, mask):
        buf = env[op.operands[0]]
        idx = [env[v] for v in list(op.operands)[1:]]
        if self.kernel is None and not buf.alloc.device and not buf.alloc.freed:
            return [buf.data[tuple(int(i) for i in idx)]]   # a host copy of a condition
        key, flat, active = self._addresses(op, buf, idx, mask)
        k = self.kernel
        out = np.zeros(k.n, buf.data.dtype)
        out[active] = buf.data[key]
        if buf.alloc.workgroup or id(buf.alloc) in k.written:
            self._check_read(op, buf.alloc, flat, k.lane[active])
        return [out]

    def _op_memref_store(self, op, env, mask):
        value = env[op.operands[0]]
        buf = env[op.operands[1]]
        idx = [env[v] for v in list(op.operands)[2:]]
        if self.kernel is None and not buf.alloc.device and not buf.alloc.freed:
            buf.data[tuple(int(i) for i in idx)] = value    # host bookkeeping
            return []
        key, flat, active = self._addresses(op, buf, idx, mask)
        k = self.kernel
        vals = np.broadcast_to(np.asarray(value), (k.n,))[active]
        lanes = k.lane[active]
        if flat.size:
            order = np.argsort(flat, kind="stable")
            f, v = flat[order], vals[order]
            dup = f[1:] == f[:-1]
            if dup.any() and not np.array_equal(v[1:][dup], v[:-1][dup], equal_nan=True):
                raise EmulationError(f"{op.location}: data race: threads store different "
                                     "values to one element")
        self._check_write(op, buf.alloc, flat, lanes)
        if key:
            buf.data[key] = vals
        elif vals.size:
            buf.data[()] = vals[-1]
        return []

    def _op_memref_atomic_rmw(self, op, env, mask):
        kind = int(ir.IntegerAttr(op.attributes["kind"]).value)
        name = ATOMIC_KINDS.get(kind)
        if name is None:
            raise EmulationError(f"{op.location}: atomic kind {kind} is not supported")
        value = env[op.operands[0]]
        buf = env[op.operands[1]]
        idx = [env[v] for v in list(op.operands)[2:]]
        key, _, active = self._addresses(op, buf, idx, mask)
        k = self.kernel
        vals = np.broadcast_to(np.asarray(value), (k.n,))[active].astype(buf.data.dtype)
        old = np.zeros(k.n, buf.data.dtype)
        if key:
            old[active] = buf.data[key]
            data = buf.data
            if name.endswith("u"):
                data, vals = unsigned(data), unsigned(vals)
            ATOMIC_UFUNCS[name].at(data, key, vals)
        elif vals.size:
            old[active] = buf.data[()]
            data = buf.data
            if name.endswith("u"):
                data, vals = unsigned(data), unsigned(vals)
            total = ATOMIC_UFUNCS[name].reduce(vals)
            data[()] = ATOMIC_UFUNCS[name](data[()], total)
        return [old]

    def _check_read(self, op, alloc: Alloc, flat, lanes):
        k = self.kernel
        if not flat.size:
            return
        same = alloc.w_launch[flat] == k.launch
        other = same & (alloc.w_lane[flat] != lanes)
        if alloc.workgroup:
            conflict = other & (alloc.w_epoch[flat] == k.epoch)
        else:
            wblock = alloc.w_lane[flat] // k.tpb
            conflict = other & ((wblock != k.block_of[lanes]) | (alloc.w_epoch[flat] == k.epoch))
        if conflict.any():
            raise EmulationError(f"{op.location}: data race: a thread reads an element "
                                 "another thread wrote without a barrier in between")
        # record the readers: a lane, or -2 for several (same for blocks)
        blocks = k.block_of[lanes]
        fresh = (alloc.r_launch[flat] != k.launch) | (alloc.r_epoch[flat] != k.epoch)
        for rec, mine in ((alloc.r_lane, lanes), (alloc.r_block, blocks)):
            prev = np.where(fresh, mine, rec[flat])
            new = np.where(prev == mine, mine, -2)
            rec[flat] = new
            clash = rec[flat] != new
            if clash.any():
                rec[flat[clash]] = -2
        alloc.r_launch[flat] = k.launch
        alloc.r_epoch[flat] = k.epoch

    def _check_write(self, op, alloc: Alloc, flat, lanes):
        k = self.kernel
        if not flat.size:
            return
        my_block = k.block_of[lanes]
        same = alloc.w_launch[flat] == k.launch
        other = same & (alloc.w_lane[flat] != lanes)
        if alloc.workgroup:
            ww = other & (alloc.w_epoch[flat] == k.epoch)
        else:
            ww = other & (((alloc.w_lane[flat] // k.tpb) != my_block)
                          | (alloc.w_epoch[flat] == k.epoch))
        if ww.any():
            raise EmulationError(f"{op.location}: data race: two threads write one element "
                                 "without a barrier in between")
        rsame = alloc.r_launch[flat] == k.launch
        rl, rb = alloc.r_lane[flat], alloc.r_block[flat]
        rother = rsame & (rl != lanes)
        if alloc.workgroup:
            war = rother & (alloc.r_epoch[flat] == k.epoch)
        else:
            war = rother & ((rb != my_block) | (alloc.r_epoch[flat] == k.epoch))
        if war.any():
            raise EmulationError(f"{op.location}: data race: a thread overwrites an element "
                                 "another thread read without a barrier in between")
        alloc.w_launch[flat] = k.launch
        alloc.w_epoch[flat] = k.epoch
        alloc.w_lane[flat] = lanes

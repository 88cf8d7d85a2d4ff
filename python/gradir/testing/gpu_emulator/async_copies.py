"""Pointers into buffers and sm_80's asynchronous copies in the emulator:
``builtin.unrealized_conversion_cast`` of a memref to its LLVM descriptor
(what the lowering to NVVM folds away), ``llvm.getelementptr``,
``llvm.addrspacecast``, ``llvm.ptrtoint`` and ``nvvm.cp.async.shared.global``
with ``cp.async.commit.group`` / ``cp.async.wait.group``.

A pointer is an allocation and a byte offset (per lane) with an address:
device allocations get 256-byte aligned addresses (as ``cuMemAlloc``; a
fake driver's buffers keep their real ones), workgroup buffers addresses
aligned to their element only, never to 16 bytes, as a shared-memory
variable of that type may be placed: code that needs 16-byte alignment must
round the address up itself.

``cp.async`` (PTX ISA): a thread copies ``cp-size`` bytes (4, 8 or 16, both
addresses aligned to it) from global to shared memory, of which only
``src-size`` are read and the rest are zeros.  The copies a thread issues
join its open group; ``commit.group`` closes it; ``wait.group N`` returns
when at most the N newest of the thread's committed groups are incomplete.
The emulator reads the source when the copy is issued and writes the
destination when the wait completes its group, so reading it earlier sees
the old contents; the destination counts as written by the issuing thread
both at the issue (overwriting what others read in the same barrier
interval is a race) and at the completion (others must pass a barrier
after the wait before they read it); a load or an ``ldmatrix`` of bytes
whose copy has not completed is an error."""

from __future__ import annotations

import numpy as np
from mlir import ir

from .values import Buf, EmulationError, dtype_of

__all__ = ["AsyncCopyOps", "Ptr"]

_GLOBAL_BASE = 0x7F00_0000_0000
_SHARED_BASE = 0x1000


class Ptr:
    """A pointer: ``byte`` (per lane, or one value) bytes into ``alloc``,
    whose first byte is at address ``base``."""

    def __init__(self, alloc, byte, base: int, space: str):
        self.alloc, self.byte, self.base, self.space = alloc, byte, base, space

    def moved(self, byte=None, space=None) -> "Ptr":
        return Ptr(self.alloc, self.byte if byte is None else byte, self.base,
                   self.space if space is None else space)


def _space(t: ir.Type) -> str:
    s = str(t)
    return "shared" if s.endswith("<3>") else "global" if s.endswith("<1>") else "generic"


def alloc_bytes(alloc) -> np.ndarray:
    """An allocation's bytes (workgroup: one row per block)."""
    data = alloc.data
    if not data.flags.c_contiguous:
        raise EmulationError("pointer into a non-contiguous allocation")
    flat = data.reshape(-1).view(np.uint8)
    return flat.reshape(data.shape[0], -1) if alloc.workgroup else flat


class _AsyncState:
    """The cp.async copies of one launch: per lane, groups committed so far,
    and the copies not yet completed."""

    def __init__(self, n: int):
        self.committed = np.zeros(n, np.int64)
        self.copies = []            # (alloc, lanes, groups, byte offsets, data, element ids)


class AsyncCopyOps:
    """Pointer and cp.async rules (a mixin of ``Emulator``)."""

    def _ptr_base(self, alloc) -> int:
        bases = self.__dict__.setdefault("_ptr_bases", {})
        hit = bases.get(id(alloc))
        if hit is not None and hit[0] is alloc:
            return hit[1]
        if alloc.workgroup:
            item = alloc.data.itemsize
            base = _SHARED_BASE * (len(bases) + 1) + (item if item < 16 else 0)
        elif getattr(alloc, "address", None) is not None:
            base = int(alloc.address)
        else:
            base = _GLOBAL_BASE + (len(bases) << 32)
        bases[id(alloc)] = (alloc, base)
        return base

    def _op_builtin_unrealized_conversion_cast(self, op, env, mask):
        """A memref's LLVM descriptor {allocated, aligned, offset, sizes,
        strides}; other casts are the host rules'."""
        buf = env[op.operands[0]] if len(op.operands) == 1 else None
        if not isinstance(buf, Buf) or "llvm.struct" not in str(op.results[0].type):
            return super()._op_builtin_unrealized_conversion_cast(op, env, mask)
        if buf.alloc.freed:
            raise EmulationError(f"{op.location}: descriptor of a freed buffer")
        alloc = buf.alloc
        data, ids = (buf.data[0], buf.ids[0]) if alloc.workgroup else (buf.data, buf.ids)
        first = int(ids.reshape(-1)[0]) if ids.size else 0     # block 0's ids start at 0
        offset = first * alloc.data.itemsize // max(data.itemsize, 1)
        space = "shared" if alloc.workgroup else "generic"
        ptr = Ptr(alloc, np.int64(0), self._ptr_base(alloc), space)
        out = {(0,): ptr, (1,): ptr, (2,): np.int64(offset)}
        for i, (size, stride) in enumerate(zip(data.shape, data.strides)):
            out[(3, i)] = np.int64(size)
            out[(4, i)] = np.int64(stride // data.itemsize)
        return [out]

    def _other(self, op, env, mask):
        """The rule of the next mixin for an op on something not a Ptr."""
        rule = getattr(super(), "_op_" + op.name.replace(".", "_"), None)
        if rule is None:
            raise EmulationError(f"{op.location}: '{op.name}' of something not a pointer "
                                 "into a buffer")
        return rule(op, env, mask)

    def _op_llvm_getelementptr(self, op, env, mask):
        base = env[op.operands[0]]
        if not isinstance(base, Ptr):
            return self._other(op, env, mask)
        raw = list(ir.DenseI32ArrayAttr(op.attributes["rawConstantIndices"]))
        if len(raw) != 1:
            raise EmulationError(f"{op.location}: only one-index getelementptr on a pointer "
                                 "is supported")
        elt = ir.TypeAttr(op.attributes["elem_type"]).value
        size = np.dtype(dtype_of(elt)).itemsize
        idx = env[op.operands[1]] if raw[0] == -2147483648 else np.int64(raw[0])
        return [base.moved(byte=base.byte + np.asarray(idx, np.int64) * size)]

    def _op_llvm_addrspacecast(self, op, env, mask):
        ptr = env[op.operands[0]]
        if not isinstance(ptr, Ptr):
            return self._other(op, env, mask)
        space = _space(op.results[0].type)
        if space == "global" and ptr.alloc.workgroup or space == "shared" and \
                not ptr.alloc.workgroup:
            raise EmulationError(f"{op.location}: address space cast to {space} of a pointer "
                                 "outside it")
        return [ptr.moved(space=space)]

    def _op_llvm_ptrtoint(self, op, env, mask):
        ptr = env[op.operands[0]]
        if not isinstance(ptr, Ptr):
            return self._other(op, env, mask)
        return [np.int64(ptr.base) + np.asarray(ptr.byte, np.int64)]

    def _op_memref_load(self, op, env, mask):
        """A load of workgroup memory a cp.async has not completed is an
        error (the memory rules do the rest)."""
        buf = env[op.operands[0]]
        pending = getattr(buf.alloc, "cp_pending", None) if isinstance(buf, Buf) else None
        if pending is not None and self.kernel is not None and pending.any():
            idx = [env[v] for v in list(op.operands)[1:]]
            _, flat, _ = self._addresses(op, buf, idx, mask)
            if pending[flat].any():
                raise EmulationError(f"{op.location}: a load of an element whose cp.async "
                                     "has not completed (cp.async.wait.group)")
        return super()._op_memref_load(op, env, mask)

    # -- cp.async -------------------------------------------------------------------------
    def _async(self):
        k = self.kernel
        if k is None:
            raise EmulationError("cp.async on the host")
        state = getattr(k, "async_copies", None)
        if state is None:
            state = k.async_copies = _AsyncState(k.n)
        return state

    def _op_nvvm_cp_async_shared_global(self, op, env, mask):
        k, state = self.kernel, self._async()
        dst, src = env[op.operands[0]], env[op.operands[1]]
        size = int(ir.IntegerAttr(op.attributes["size"]).value)
        if size not in (4, 8, 16):
            raise EmulationError(f"{op.location}: cp.async of {size} bytes")
        if not dst.alloc.workgroup or src.alloc.workgroup or not src.alloc.device:
            raise EmulationError(f"{op.location}: cp.async copies from device (global) to "
                                 "workgroup (shared) memory")
        if src.alloc.freed:
            raise EmulationError(f"{op.location}: cp.async from a freed buffer")
        active = np.ones(k.n, bool) if mask is None else mask
        lanes = k.lane[active]
        d = np.broadcast_to(np.asarray(dst.byte, np.int64), (k.n,))[active]
        s = np.broadcast_to(np.asarray(src.byte, np.int64), (k.n,))[active]
        read = np.full(k.n, size, np.int64)
        if len(op.operands) > 2:
            read = np.broadcast_to(np.asarray(env[op.operands[2]], np.int64), (k.n,))
        read = read[active]
        if ((read < 0) | (read > size)).any():
            raise EmulationError(f"{op.location}: cp.async src-size {read.max()} outside "
                                 f"[0, {size}]")
        for name, p, off in (("destination", dst, d), ("source", src, s)):
            if ((p.base + off) % size).any():
                raise EmulationError(f"{op.location}: cp.async {name} address not aligned to "
                                     f"{size} bytes")
        sbytes, dbytes = alloc_bytes(src.alloc), alloc_bytes(dst.alloc)
        if ((s < 0) | (s + read > sbytes.size) | (s >= sbytes.size)).any():
            raise EmulationError(f"{op.location}: cp.async reads outside its source buffer")
        if ((d < 0) | (d + size > dbytes.shape[1])).any():
            raise EmulationError(f"{op.location}: cp.async writes outside its workgroup "
                                 "buffer")
        col = np.arange(size)
        idx = np.minimum(s[:, None] + col, sbytes.size - 1)
        data = np.where(col < read[:, None], sbytes[idx], 0).astype(np.uint8)
        sitem = src.alloc.data.itemsize
        got = col < read[:, None]
        if id(src.alloc) in k.written and got.any():
            ids = (s[:, None] + col)[got] // sitem
            self._check_read(op, src.alloc, ids, np.repeat(lanes, got.sum(1)))
        item = dst.alloc.data.itemsize
        if (d % item).any() or size % item:
            raise EmulationError(f"{op.location}: cp.async destination splits an element")
        per_block = dbytes.shape[1] // item
        ids = (k.block_of[lanes] * per_block + d // item)[:, None] + np.arange(size // item)
        self._check_write(op, dst.alloc, ids.reshape(-1), np.repeat(lanes, size // item))
        pending = dst.alloc.__dict__.setdefault(
            "cp_pending", np.zeros(dst.alloc.data.size, bool))
        pending[ids.reshape(-1)] = True
        state.copies.append((dst.alloc, lanes, state.committed[lanes].copy(), d, data, ids))
        return []

    def _op_nvvm_cp_async_commit_group(self, op, env, mask):
        state = self._async()
        state.committed[self.kernel.lane if mask is None else mask] += 1
        return []

    def _op_nvvm_cp_async_wait_group(self, op, env, mask):
        k, state = self.kernel, self._async()
        n = int(ir.IntegerAttr(op.attributes["n"]).value)
        active = np.ones(k.n, bool) if mask is None else mask
        left = []
        for alloc, lanes, groups, d, data, ids in state.copies:
            done = active[lanes] & (state.committed[lanes] - groups > n)
            if done.any():
                item = alloc.data.itemsize
                dbytes = alloc_bytes(alloc)
                blocks = k.block_of[lanes[done]]
                dbytes[blocks[:, None], d[done][:, None] + np.arange(data.shape[1])] = \
                    data[done]
                self._check_write(op, alloc, ids[done].reshape(-1),
                                  np.repeat(lanes[done], data.shape[1] // item))
                alloc.cp_pending[ids[done].reshape(-1)] = False
            if not done.all():
                keep = ~done
                left.append((alloc, lanes[keep], groups[keep], d[keep], data[keep],
                             ids[keep]))
        state.copies = left
        return []

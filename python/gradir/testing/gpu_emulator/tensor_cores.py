"""Warp-level tensor-core ops of the emulator: ``nvvm.mma.sync`` (the
m16n8k8 TF32 and m16n8k16 bf16/f16 shapes with f32 accumulation, ``row.col``
layouts), ``nvvm.ldmatrix`` (m8n8 b16, x1/x2/x4, plain and ``.trans``),
``nvvm.convert.float.to.tf32`` and the LLVM glue around them
(``llvm.extractvalue`` of the result struct, ``llvm.bitcast`` of packed
registers).

``ldmatrix`` semantics, from the PTX ISA: each of the ``num`` 8x8 matrices
of 16-bit elements is eight 16-byte rows in shared memory, row ``r`` of
matrix ``q`` at the address lane ``8 q + r`` gives (16-byte aligned; the
other lanes' addresses are not read).  Register ``q`` of lane ``l`` (``group
= l / 4``, ``pair = l % 4``) holds elements (``group``, ``2 pair``) and
(``group``, ``2 pair + 1``) of matrix ``q``, the first in the low half; with
``.trans`` (``layout = col``) elements (``2 pair``, ``group``) and
(``2 pair + 1``, ``group``).  The whole warp executes it (``.aligned``).

``mma.sync`` semantics, from the PTX ISA: the 32 lanes of a warp hold the
fragments of A (16 x k), B (k x 8) and C (16 x 8) in fixed registers
(``group = lane / 4``, ``pair = lane % 4``):

* A, word r: row ``group + 8 (r mod 2)``; K ``pair + 4 floor(r/2)`` (tf32,
  one element per word) or ``2 pair + 8 floor(r/2)`` and the next (16-bit
  types, the lower K in the low half of the word);
* B, word r: column ``group``; K ``pair + 4 r`` (tf32) or ``2 pair + 8 r``
  and the next;
* C and D, value r: row ``group + 8 floor(r/2)``, column ``2 pair + r mod 2``.

Every lane of the warp must execute it (``.aligned``): a partly active warp
is an error.  TF32 operands use the upper 19 bits of their f32 registers
(what the hardware reads: the low 13 mantissa bits are ignored, so code
must round with ``cvt.rna.tf32.f32`` first, as ``convert.float.to.tf32``
does here); products are exact and summed with C in float64, rounded to
f32 once (the tensor cores' internal order and precision of the sum is
not specified; the emulated sum is at least as accurate).

``Emulator.exact_tf32 = True`` (tests) makes TF32 conversions and MMAs
keep all 23 mantissa bits: a TF32 kernel then computes what an exact fp32
one does, so its data flow (fragment indices, edges, epilogues) can be
checked against the interpreter to fp32 tolerance, apart from rounding."""

from __future__ import annotations

import numpy as np
from mlir import ir

from .async_copies import Ptr, alloc_bytes
from .values import EmulationError

__all__ = ["TensorCoreOps", "tf32_round", "fragment_coordinates"]

_SHAPE_K = {"tf32": 8, "bf16": 16, "f16": 16}


def tf32_round(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to TF32 (10 mantissa bits), to nearest with ties
    away from zero (``cvt.rna.tf32.f32``); the result as f32 bit patterns
    with the low 13 bits clear (NaN and infinity kept)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    finite = (bits & 0x7F800000) != 0x7F800000
    rounded = ((bits.astype(np.uint64) + 0x1000) & 0xFFFFE000).astype(np.uint32)
    out = np.where(finite, rounded, bits)
    nan = ~finite & ((bits & 0x007FFFFF) != 0)
    return np.where(nan, bits | 0x00400000, out).astype(np.uint32)


def fragment_coordinates(kind: str):
    """``(a, b, c)``: for every lane (32) and register, the (row, K) of A's
    elements, (K, column) of B's and (row, column) of C's; 16-bit kinds
    have two elements per A and B register (lower K first)."""
    lane = np.arange(32)
    group, pair = lane // 4, lane % 4
    if kind == "tf32":
        a = [[(group + 8 * (r % 2), pair + 4 * (r // 2))] for r in range(4)]
        b = [[(pair + 4 * r, group)] for r in range(2)]
    else:
        a = [[(group + 8 * (r % 2), 2 * pair + 8 * (r // 2) + h) for h in range(2)]
             for r in range(4)]
        b = [[(2 * pair + 8 * r + h, group) for h in range(2)] for r in range(2)]
    c = [(group + 8 * (r // 2), 2 * pair + r % 2) for r in range(4)]
    return a, b, c


def _mma_type(op, which: str) -> str:
    key = f"multiplicand{which}PtxType"
    if key in op.attributes:
        return str(op.attributes[key]).split("<")[-1].rstrip(">")
    t = op.operands[0].type
    return "f16" if "f16" in str(t) else str(t)


def _words(value, n: int) -> np.ndarray:
    """A register's 32 bits per lane (``n`` lanes) as uint32."""
    a = np.asarray(value)
    if a.dtype == np.float32:
        a = a.view(np.uint32)
    return np.broadcast_to(a.astype(np.int64) & 0xFFFFFFFF, (n,)).astype(np.uint32)


def _elements(words: np.ndarray, kind: str, half: int, exact: bool = False) -> np.ndarray:
    """The operand values (float64) a register holds (``half``: which of
    two 16-bit elements; ``exact``: TF32 registers read whole)."""
    if kind == "tf32":
        return (words & (0xFFFFFFFF if exact else 0xFFFFE000)).view(np.float32).astype(
            np.float64)
    bits16 = ((words >> (16 * half)) & 0xFFFF).astype(np.uint16)
    if kind == "f16":
        return bits16.view(np.float16).astype(np.float64)
    return (bits16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


class TensorCoreOps:
    """Tensor-core op rules (a mixin of ``Emulator``)."""

    exact_tf32 = False      # TF32 conversions and MMAs keep every f32 bit (tests)

    def _op_nvvm_mma_sync(self, op, env, mask):
        k = self.kernel
        if k is None:
            raise EmulationError(f"{op.location}: 'nvvm.mma.sync' on the host")
        shape = str(op.attributes["shape"])
        kind = _mma_type(op, "A")
        if kind not in _SHAPE_K or _mma_type(op, "B") != kind or \
                f"k = {_SHAPE_K[kind]}" not in shape or "m = 16, n = 8" not in shape:
            raise EmulationError(f"{op.location}: mma.sync {shape} on {kind} is not "
                                 "supported by the emulator")
        for name in ("layoutA", "layoutB"):
            want = "row" if name == "layoutA" else "col"
            if want not in str(op.attributes[name]):
                raise EmulationError(f"{op.location}: mma.sync {name} must be {want}")
        if k.tpb % 32:
            raise EmulationError(f"{op.location}: mma.sync in a block of {k.tpb} threads "
                                 "(not whole warps)")
        n = k.n
        if mask is not None:
            warps = mask.reshape(-1, 32)
            if (warps.any(1) & ~warps.all(1)).any():
                raise EmulationError(f"{op.location}: mma.sync reached by only part of a "
                                     "warp")
        operands = [env[v] for v in op.operands]
        n_a, n_b = (4, 2)
        regs_a, regs_b, regs_c = operands[:n_a], operands[n_a:n_a + n_b], operands[n_a + n_b:]
        ka = _SHAPE_K[kind]
        acoord, bcoord, ccoord = fragment_coordinates(kind)
        nw = n // 32
        A = np.zeros((nw, 16, ka))
        B = np.zeros((nw, ka, 8))
        C = np.zeros((nw, 16, 8))
        for r, reg in enumerate(regs_a):
            w = _words(reg, n).reshape(nw, 32)
            for h, (row, col) in enumerate(acoord[r]):
                A[:, row, col] = _elements(w, kind, h, self.exact_tf32)
        for r, reg in enumerate(regs_b):
            w = _words(reg, n).reshape(nw, 32)
            for h, (row, col) in enumerate(bcoord[r]):
                B[:, row, col] = _elements(w, kind, h, self.exact_tf32)
        for r, reg in enumerate(regs_c):
            vals = np.broadcast_to(np.asarray(reg, np.float32), (n,)).reshape(nw, 32)
            C[:, ccoord[r][0], ccoord[r][1]] = vals
        with np.errstate(all="ignore"):
            D = (np.matmul(A, B) + C).astype(np.float32)
        out = {}
        for r in range(4):
            out[(r,)] = D[:, ccoord[r][0], ccoord[r][1]].reshape(n)
        return [out]

    def _op_nvvm_ldmatrix(self, op, env, mask):
        k = self.kernel
        if k is None:
            raise EmulationError(f"{op.location}: 'nvvm.ldmatrix' on the host")
        num = int(ir.IntegerAttr(op.attributes["num"]).value)
        trans = "col" in str(op.attributes["layout"])
        if "m = 8, n = 8" not in str(op.attributes["shape"]) or \
                "b16" not in str(op.attributes["eltType"]) or num not in (1, 2, 4):
            raise EmulationError(f"{op.location}: only ldmatrix m8n8 x1/x2/x4 of b16 is "
                                 "supported")
        if k.tpb % 32:
            raise EmulationError(f"{op.location}: ldmatrix in a block of {k.tpb} threads")
        if mask is not None:
            warps = mask.reshape(-1, 32)
            if (warps.any(1) & ~warps.all(1)).any():
                raise EmulationError(f"{op.location}: ldmatrix reached by only part of a "
                                     "warp")
        ptr = env[op.operands[0]]
        if not isinstance(ptr, Ptr) or ptr.space != "shared" or not ptr.alloc.workgroup:
            raise EmulationError(f"{op.location}: ldmatrix reads workgroup (shared) memory")
        active = np.ones(k.n, bool) if mask is None else mask
        byte = np.broadcast_to(np.asarray(ptr.byte, np.int64), (k.n,))
        lane = k.lane % 32
        reads = active & (lane < 8 * num)       # lanes whose row addresses are used
        rows = byte[reads]
        if ((ptr.base + rows) % 16).any():
            raise EmulationError(f"{op.location}: ldmatrix row address not 16-byte aligned")
        data = alloc_bytes(ptr.alloc)
        if ((rows < 0) | (rows + 16 > data.shape[1])).any():
            raise EmulationError(f"{op.location}: ldmatrix reads outside its workgroup buffer")
        item = ptr.alloc.data.itemsize
        blocks = k.block_of[reads]
        per_block = data.shape[1] // item
        ids = ((blocks * per_block + rows // item)[:, None] + np.arange(16 // item)).reshape(-1)
        pending = getattr(ptr.alloc, "cp_pending", None)
        if pending is not None and pending[ids].any():
            raise EmulationError(f"{op.location}: ldmatrix reads bytes whose cp.async has "
                                 "not completed (cp.async.wait.group)")
        self._check_read(op, ptr.alloc, ids, np.repeat(k.lane[reads], 16 // item))
        raw = data[blocks[:, None], rows[:, None] + np.arange(16)]
        halves = raw.view(np.uint16).reshape(-1, num, 8, 8)   # warp, matrix, row, column
        warps = np.unique(k.lane[reads] // 32)
        group, pair = np.arange(32) // 4, np.arange(32) % 4
        out = {}
        for q in range(num):
            m = halves[:, q]
            lo, hi = (m[:, 2 * pair, group], m[:, 2 * pair + 1, group]) if trans else \
                (m[:, group, 2 * pair], m[:, group, 2 * pair + 1])
            words = lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)
            full = np.zeros((k.n // 32, 32), np.uint32)
            full[warps] = words
            out[(q,)] = full.reshape(k.n).view(np.int32)
        return [out]

    def _op_llvm_extractvalue(self, op, env, mask):
        struct = env[op.operands[0]]
        pos = tuple(ir.DenseI64ArrayAttr(op.attributes["position"]))
        return [struct[pos]]

    def _op_llvm_bitcast(self, op, env, mask):
        """i32 -> vector<2xf16> (a packed f16 pair): kept as its 32 bits."""
        src, dst = op.operands[0].type, op.results[0].type
        if str(src) != "i32" or str(dst) != "vector<2xf16>":
            raise EmulationError(f"{op.location}: llvm.bitcast {src} to {dst} is not "
                                 "supported")
        return [env[op.operands[0]]]

    def _op_nvvm_convert_float_to_tf32(self, op, env, mask):
        rnd = str(op.attributes["rnd"]) if "rnd" in op.attributes else ""
        if "rna" not in rnd:
            raise EmulationError(f"{op.location}: only round-to-nearest-away (rna) "
                                 "conversions to tf32 are supported")
        sat = str(op.attributes["sat"]) if "sat" in op.attributes else "none"
        relu = str(op.attributes["relu"]) if "relu" in op.attributes else "false"
        if "none" not in sat or relu != "false":
            raise EmulationError(f"{op.location}: saturating or relu tf32 conversions are "
                                 "not supported")
        x = env[op.operands[0]]
        if self.exact_tf32:
            return [np.asarray(x, np.float32).view(np.int32)]
        return [tf32_round(x).view(np.int32)]

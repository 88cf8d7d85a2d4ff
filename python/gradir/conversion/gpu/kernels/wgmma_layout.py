"""How the Hopper GEMMs (``wgmma.py``) lay an operand's (rows x BK) tile
out in workgroup memory, and the matrix-descriptor fields that describe it
to ``wgmma.mma_async`` (PTX ISA, "Shared Memory Matrix Layout" and "Matrix
Descriptor Format"; ``T`` = elements per 16 bytes, ``rows`` = BM or BN).

K-major (every kind; the operand read with K innermost by wgmma):

* interleaved (mode 0): core matrices of 8 rows x 16 bytes of K, 128
  contiguous bytes, ``[row / 8][k / T][row % 8][k % T]``: LBO (between
  core matrices along K) 128 bytes, SBO (between 8-row groups)
  ``BK / T * 128``;
* swizzled (mode 1, 2, 3 for rows of 128, 64, 32 bytes): rows of BK
  elements, ``[row / 8][row % 8][chunk ^ f(row % 8)][k % T]`` where
  ``chunk = k / T`` is the row's 16-byte chunk and ``f(r)`` the address
  bits from 7 of row ``r`` (``r``, ``r / 2``, ``r / 4``): the XOR wgmma
  applies to addresses; SBO ``8 * row bytes``, LBO unused (16).

MN-major (bf16/f16 only, read with ``imm-trans-a`` / ``imm-trans-b`` = 1:
an operand with M (N) innermost in memory, copied as it lies):

* interleaved: core matrices of 8 K rows x 16 bytes of M (N),
  ``[mn / T][k / 8][k % 8][mn % T]``: LBO (between core matrices along K,
  "the first 8 columns to the next 8") 128 bytes, SBO (between core
  matrices along M/N) ``BK / 8 * 128``;
* swizzled: swizzle atoms of W bytes of M (N) x 8 K rows, W the widest of
  128, 64, 32 that is at most ``rows`` elements (``A = W / esize``
  elements of M/N per atom), ``[mn / A][k][chunk ^ f(k % 8)][mn % T]``
  with ``chunk = mn % A / T``: SBO (between 8-K groups) ``8 * W``, LBO
  (between atoms along M/N) ``BK * W``.

A K step of the instructions (16 bytes of K in K-major rows; K 16 of
bf16/f16 MN-major: 16 K rows) advances the descriptors' start address by
``step_bytes``; every swizzled tile starts on a 1024-byte boundary (the
128-byte swizzle's repeat), so the base-offset field stays 0."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from ..common import index
from .common import workgroup_type

__all__ = ["Layout", "BYTES", "CORE", "SWIZZLE_MODE", "descriptor_bits", "element_type"]

BYTES = {"tf32": 4, "bf16": 2, "f16": 2}
CORE = 128                 # bytes of one core matrix (8 rows of 16 bytes)
SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}      # row bytes -> descriptor mode
_SHIFT = {1: 0, 2: 1, 3: 2}                # f(r) = r >> shift


def descriptor_bits(lbo: int, sbo: int, swizzle: int = 0) -> int:
    """The constant fields of a wgmma matrix descriptor: leading- and
    stride-dimension byte offsets (bits 16-29, 32-45, in 16-byte units),
    swizzle mode (bits 62-63: 0 none, 1 128B, 2 64B, 3 32B); the start
    address (bits 0-13: ``(address & 0x3FFFF) >> 4``) is added to them."""
    bits = ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (swizzle << 62)
    return bits - (1 << 64) if bits >> 63 else bits        # as a signed i64


def element_type(kind: str) -> ir.Type:
    return {"tf32": ir.IntegerType.get_signless(32), "bf16": ir.BF16Type.get(),
            "f16": ir.F16Type.get()}[kind]


@dataclass(frozen=True)
class Layout:
    """One operand's tile layout (the module docstring): ``rows`` x BK of
    ``kind``, K-major or (``mn_major``) MN-major, swizzle ``mode``."""
    kind: str
    bk: int
    mode: int
    rows: int = 0
    mn_major: bool = False

    @classmethod
    def of(cls, kind: str, bk: int, swizzle: bool = True) -> "Layout":
        """The K-major layout of BK columns (any ``rows``)."""
        mode = SWIZZLE_MODE.get(bk * BYTES[kind], 0) if swizzle else 0
        return cls(kind, bk, mode)

    @classmethod
    def mn(cls, kind: str, bk: int, rows: int, swizzle: bool = True) -> "Layout":
        """The MN-major layout of a (``rows`` x BK) bf16/f16 tile."""
        assert kind in ("bf16", "f16") and rows % 8 == 0 and bk % 16 == 0
        width = min(128, rows * BYTES[kind])
        mode = SWIZZLE_MODE.get(width, 0) if swizzle and rows % (width // BYTES[kind]) == 0 \
            else 0
        return cls(kind, bk, mode, rows, True)

    @property
    def ke(self) -> int:
        """Elements per 16 bytes (T)."""
        return 16 // BYTES[self.kind]

    @property
    def row_bytes(self) -> int:
        """Bytes of a K-major row (BK elements)."""
        return self.bk * BYTES[self.kind]

    @property
    def width(self) -> int:
        """MN-major swizzled: the atom's bytes along M/N (W)."""
        return {1: 128, 2: 64, 3: 32}[self.mode]

    @property
    def atom(self) -> int:
        """MN-major swizzled: elements of M/N per atom (A)."""
        return self.width // BYTES[self.kind]

    @property
    def lbo(self) -> int:
        if not self.mn_major:
            return 16 if self.mode else CORE
        return self.bk * self.width if self.mode else CORE

    @property
    def sbo(self) -> int:
        if not self.mn_major:
            return 8 * self.row_bytes if self.mode else self.bk // self.ke * CORE
        return 8 * self.width if self.mode else self.bk // 8 * CORE

    @property
    def bits(self) -> int:
        return descriptor_bits(self.lbo, self.sbo, self.mode)

    def step_bytes(self, k: int) -> int:
        """Start-address advance per K step of ``k`` elements."""
        if not self.mn_major:
            return k * BYTES[self.kind] if self.mode else k // self.ke * CORE
        return k * self.width if self.mode else k // 8 * self.lbo

    def rows_bytes(self, first: int) -> int:
        """The byte offset of row ``first`` (a multiple of 64: a warpgroup's
        rows of A)."""
        if self.mn_major and self.mode:
            return first // self.atom * self.lbo
        if self.mn_major:
            return first // self.ke * self.sbo
        return first // 8 * self.sbo

    @property
    def align(self) -> int:
        return 1024 if self.mode else 128

    def tile_type(self, rows: int, stages: int = 1) -> ir.Type:
        """One tile, or (``stages`` > 1) ``stages`` of them, the stage first."""
        elt = element_type(self.kind)
        lead = [stages] if stages > 1 else []
        ke = self.ke
        if self.mn_major and self.mode:
            return workgroup_type(lead + [rows // self.atom, self.bk, self.atom], elt)
        if self.mn_major:
            return workgroup_type(lead + [rows // ke, self.bk // 8, 8, ke], elt)
        if self.mode:
            return workgroup_type(lead + [rows // 8, 8, self.bk], elt)
        return workgroup_type(lead + [rows // 8, self.bk // ke, 8, ke], elt)

    def tile_bytes(self, rows: int) -> int:
        return rows * self.row_bytes

    def _xor(self, line: ir.Value, c: ir.Value) -> ir.Value:
        r = arith.remui(line, index(8))
        shift = _SHIFT[self.mode]
        return arith.xori(c, arith.shrui(r, index(shift)) if shift else r)

    def chunk_offset(self, line: ir.Value, c: ir.Value) -> ir.Value:
        """The byte offset in a tile of 16-byte chunk ``c`` of ``line`` (a
        row of M/N and its K chunk, K-major; a K row and its M/N chunk,
        MN-major): what ``index`` gives its first element, in bytes."""
        if self.mn_major:
            k = line
            if not self.mode:
                return arith.addi(arith.addi(arith.muli(c, index(self.sbo)),
                                             arith.muli(arith.divui(k, index(8)),
                                                        index(self.lbo))),
                                  arith.muli(arith.remui(k, index(8)), index(16)))
            per = self.atom // self.ke
            atom, inner = arith.divui(c, index(per)), arith.remui(c, index(per))
            return arith.addi(arith.addi(arith.muli(atom, index(self.lbo)),
                                         arith.muli(k, index(self.width))),
                              arith.muli(self._xor(k, inner), index(16)))
        row = line
        r8, r = arith.divui(row, index(8)), arith.remui(row, index(8))
        if not self.mode:
            return arith.addi(arith.addi(arith.muli(r8, index(self.sbo)),
                                         arith.muli(c, index(CORE))), arith.muli(r, index(16)))
        return arith.addi(arith.muli(row, index(self.row_bytes)),
                          arith.muli(self._xor(row, c), index(16)))

    def index(self, mn: ir.Value, kk: ir.Value) -> list:
        """The tile's indices of element (``mn``, ``kk``)."""
        ke = self.ke
        if self.mn_major:
            if not self.mode:
                return [arith.divui(mn, index(ke)), arith.divui(kk, index(8)),
                        arith.remui(kk, index(8)), arith.remui(mn, index(ke))]
            per = self.atom // ke
            inner = arith.remui(arith.divui(mn, index(ke)), index(per))
            chunk = self._xor(kk, inner)
            return [arith.divui(mn, index(self.atom)), kk,
                    arith.addi(arith.muli(chunk, index(ke)), arith.remui(mn, index(ke)))]
        r8, r = arith.divui(mn, index(8)), arith.remui(mn, index(8))
        if not self.mode:
            return [r8, arith.divui(kk, index(ke)), r, arith.remui(kk, index(ke))]
        chunk = self._xor(mn, arith.divui(kk, index(ke)))
        return [r8, r, arith.addi(arith.muli(chunk, index(ke)), arith.remui(kk, index(ke)))]

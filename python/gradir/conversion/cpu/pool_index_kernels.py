"""The pooling kernels of ``rlx.max_pool2d_with_indices`` and
``rlx.max_pool2d_indices_backward``: the saved arg-max indices are an rlx
value (i32, the pooled shape), which ``runtime/partition.py`` passes between
the parts of a function like any other intermediate.

    void gradir_kernel_<variant>_max_pool2x2_indices32_<elt>(x, y, idx)
    void gradir_kernel_<variant>_max_pool3x3s2_indices32_<elt>(xp, y, idx)
        pool_kernels.py's forward kernels, also writing each window's
        first-maximum position (row-major) into ``idx`` (N, C, Ho, Wo; i32)
    void gradir_kernel_<variant>_max_pool2x2_backward_indices32_<elt>(g, idx, dx)
        dx[n, c, 2i + a, 2j + b] = g[n, c, i, j] where idx[n, c, i, j] = 2a + b, else 0
    void gradir_kernel_<variant>_max_pool3x3s2_backward_indices32_<elt>(g, idx, dx)
        the 3x3 backward (pool_kernels._backward3_kernel) with phase 1 copying
        each channel's positions and gradients (Ho x Wo) into its scratch rows
        (zero past the last window) instead of computing them; phase 2 the same

bench/cnn.py's stem pool (3x3/2 pad 1, 32x32x32x32 f32, after a ReLU)
with its forward and backward in two functions, as the ResNet step's cut
puts them: one thread, AMD EPYC Zen 5 AVX-512, min of 300 alternating
calls (load 3.2), recomputing -> saved positions: forward 0.268 -> 0.383
ms, backward 0.584 -> 0.321, both 0.852 -> 0.704 (the i8 pairing of a
whole function: 0.700).

The positions are those of the i8 kernels (``pool_kernels._first_equal``:
the first maximum, the first NaN), the sums the same in the same order: the
bits of the kernels that recompute the arg-max, and of rlx-to-linalg's
generic lowering.
"""

from __future__ import annotations

from . import pool_kernels as pk

__all__ = ["saved_indices_name", "saved_index_memref_type", "saved_indices_text",
           "SAVED_INDEX_TYPE"]

SAVED_INDEX_TYPE = "i32"


def saved_indices_name(kernel: str, elt: str, var: str) -> str:
    """``kernel`` (``max_pool2x2``, ``max_pool3x3s2`` and their ``_backward``)
    writing or reading i32 positions of the pooled shape."""
    return f"{pk.KERNEL_PREFIX}{var}_{kernel}_indices32_{elt}"


def saved_index_memref_type() -> str:
    """The positions' type in the kernels: NCHW i32, unit innermost stride."""
    return "memref<?x?x?x?xi32, strided<[?, ?, ?, 1], offset: ?>>"


def _store(k: str, j: str, w: int) -> str:
    TI = saved_index_memref_type()
    if not w:
        return f"memref.store {k}, %idx[%i, %ch, %oh, {j}] : {TI}"
    return f"vector.store {k}, %idx[%i, %ch, %oh, {j}] : {TI}, vector<{w}xi32>"


def _forward2_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """``pool_kernels._forward_step`` and the windows' positions."""
    even, odd = list(range(0, 2 * w, 2)), list(range(1, 2 * w, 2))
    lines = pk._forward_step(elt, w, j, s) + [
        f"%v0{s} = " + pk._shuffle(f"%a{s}", f"%a{s}", even, 2 * w, elt),
        f"%v1{s} = " + pk._shuffle(f"%a{s}", f"%a{s}", odd, 2 * w, elt),
        f"%v2{s} = " + pk._shuffle(f"%b{s}", f"%b{s}", even, 2 * w, elt),
        f"%v3{s} = " + pk._shuffle(f"%b{s}", f"%b{s}", odd, 2 * w, elt)]
    found, k = pk._first_equal([f"%v{p}{s}" for p in range(4)], f"%r{s}", elt, str(w), s,
                               SAVED_INDEX_TYPE)
    return lines + found + [_store(k, j, w)]


def _forward2_scalar(elt: str, j: str) -> list[str]:
    found, k = pk._first_equal([f"%v{p}" for p in range(4)], "%r", elt, "", "",
                               SAVED_INDEX_TYPE)
    return pk._forward_scalar(elt, j) + found + [_store(k, j, 0)]


def _forward3_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """``pool_kernels._forward3_step`` and the windows' positions (row-major)."""
    even, odd = list(range(0, 2 * w, 2)), list(range(1, 2 * w, 2))
    lines = pk._forward3_step(elt, w, j, s)
    for r in range(3):
        lines += [f"%t{r}0{s} = " + pk._shuffle(f"%a{r}{s}", f"%a{r}{s}", even, 2 * w, elt),
                  f"%t{r}1{s} = " + pk._shuffle(f"%a{r}{s}", f"%a{r}{s}", odd, 2 * w, elt),
                  f"%t{r}2{s} = " + pk._shuffle(f"%b{r}{s}", f"%b{r}{s}", even, 2 * w, elt)]
    found, k = pk._first_equal([f"%t{r}{c}{s}" for r in range(3) for c in range(3)],
                               f"%r{s}", elt, str(w), s, SAVED_INDEX_TYPE)
    return lines + found + [_store(k, j, w)]


def _forward3_scalar(elt: str, j: str) -> list[str]:
    found, k = pk._first_equal([f"%v{r}{c}" for r in range(3) for c in range(3)], "%m22",
                               elt, "", "", SAVED_INDEX_TYPE)
    return pk._forward3_scalar(elt, j) + found + [_store(k, j, 0)]


def _backward2(elt: str, w: int, j: str, s: str) -> list[str]:
    """``w`` windows (0: one, scalar) from column ``j`` of output row ``%oh``:
    each input element its window's gradient where the saved position is its
    own, else 0 (``pool_kernels._backward_indices`` over i32 positions)."""
    return pk._backward_indices(elt, w, j, s, index="i32")


def _copy3(w: int):
    """Phase 1 of the 3x3 backward from saved positions: ``w`` (0: one)
    positions and gradients of output row ``%oy`` from column ``j`` into the
    scratch rows ``%A`` and ``%G``."""
    def step(elt: str, j: str, s: str) -> list[str]:
        T, TI = pool_memref_type(elt), saved_index_memref_type()
        S, SA = f"memref<?x?x{elt}>", "memref<?x?xi32>"
        if not w:
            return [f"%kv{s} = memref.load %idx[%i, %ch, %oy, {j}] : {TI}",
                    f"memref.store %kv{s}, %A[%oy, {j}] : {SA}",
                    f"%gv{s} = memref.load %g[%i, %ch, %oy, {j}] : {T}",
                    f"memref.store %gv{s}, %G[%oy, {j}] : {S}"]
        V, VI = f"vector<{w}x{elt}>", f"vector<{w}xi32>"
        return [f"%kv{s} = vector.load %idx[%i, %ch, %oy, {j}] : {TI}, {VI}",
                f"vector.store %kv{s}, %A[%oy, {j}] : {SA}, {VI}",
                f"%gv{s} = vector.load %g[%i, %ch, %oy, {j}] : {T}, {V}",
                f"vector.store %gv{s}, %G[%oy, {j}] : {S}, {V}"]
    return step


def _backward3_kernel(name: str, elt: str, lanes: int) -> list[str]:
    """``(g, idx, dx)``: ``dx`` (2 * Ho, 2 * Wo), ``g`` and ``idx`` (Ho, Wo).
    Per image and channel: phase 1 copies the positions and gradients into
    scratch rows zero-padded past the last window (``_copy3``; position 0
    with gradient 0 adds +0, as the zero-padded gradient of the lowering),
    phase 2 is ``pool_kernels._backward3_kernel``'s (``_spread3_step``)."""
    T, TI = pool_memref_type(elt), saved_index_memref_type()
    L = pk._widths(lanes, elt)[0]
    ind = "        "
    w = pk._backward3_head(name, T, TI) + [
         "    %rows = arith.addi %ho, %c1 : index",
         "    %cols0 = arith.addi %wo, %c1 : index",
         f"    %cLs = arith.constant {L} : index",
         "    %cols = arith.addi %cols0, %cLs : index",
         "    %A = memref.alloc(%rows, %cols) : memref<?x?xi32>",
         f"    %G = memref.alloc(%rows, %cols) : memref<?x?x{elt}>",
         "    %zi = arith.constant 0 : i32",
         f"    %zf = arith.constant 0.0 : {elt}",
         "    scf.for %zr = %c0 to %rows step %c1 {",
         "      scf.for %zc = %c0 to %cols step %c1 {",
         "        memref.store %zi, %A[%zr, %zc] : memref<?x?xi32>",
         f"        memref.store %zf, %G[%zr, %zc] : memref<?x?x{elt}>",
         "      }",
         "    }",
         "    scf.for %i = %c0 to %n step %c1 {",
         "      scf.for %ch = %c0 to %c step %c1 {",
         "        scf.for %oy = %c0 to %ho step %c1 {"]
    w += pk._columns(elt, lanes, "%wo", "a", lambda e, width, j, s: _copy3(width)(e, j, s),
                     _copy3(0), ind + "  ")
    w += [f"{ind}}}",
          f"{ind}scf.for %lo = %c0 to %ho step %c1 {{",
          f"{ind}  %hi = arith.addi %lo, %c1 : index",
          f"{ind}  %r0 = arith.muli %lo, %c2 : index",
          f"{ind}  %r1 = arith.addi %r0, %c1 : index"]
    for py in range(2):
        w += pk._columns(elt, lanes, "%wo", f"p{py}", pk._spread3_step(py),
                         pk._spread3_scalar(py), ind + "  ")
    w += [f"{ind}}}", "      }", "    }",
          "    memref.dealloc %A : memref<?x?xi32>",
          f"    memref.dealloc %G : memref<?x?x{elt}>",
          "    return", "  }"]
    return w


def pool_memref_type(elt: str) -> str:
    return pk.pool_memref_type(elt)


def saved_indices_text(var: str, elt: str, lanes: int) -> list[str]:
    """The four kernels of one element type (``pool_kernels.pool_text``)."""
    T, TI = pool_memref_type(elt), saved_index_memref_type()
    return (pk._kernel(saved_indices_name("max_pool2x2", elt, var),
                       f"%x: {T}, %y: {T}, %idx: {TI}", "%y", elt, lanes, _forward2_step,
                       _forward2_scalar)
            + pk._kernel(saved_indices_name("max_pool2x2_backward", elt, var),
                         f"%g: {T}, %idx: {TI}, %dx: {T}", "%g", elt, lanes, _backward2,
                         lambda e, j: _backward2(e, 0, j, ""))
            + pk._kernel(saved_indices_name("max_pool3x3s2", elt, var),
                         f"%x: {T}, %y: {T}, %idx: {TI}", "%y", elt, lanes, _forward3_step,
                         _forward3_scalar)
            + _backward3_kernel(saved_indices_name("max_pool3x3s2_backward", elt, var), elt,
                                lanes))

"""issue 14 (compile time): shape-generic matmul kernels, compiled once per CPU.

Every ``linalg.matmul`` the schedule tiles is a register-tiled loop nest
specialized to its shapes, which MLIR and LLVM compile anew (~20 ms each:
nine of the MLP step's ten tenths of its compile time).  XLA calls
precompiled Eigen kernels instead.  With ``matmul-kernels`` on,
``rlx-to-linalg`` emits 2-D f32/f64 matmuls as ``linalg.contract
{gradir.kernel}`` (the schedule leaves them alone), ``rlx-matmul-kernels``
turns them into calls after bufferization, and the calls go to the
functions of this module's text, compiled by MLIR and LLVM once per CPU
target into a runtime library (``runtime/kernels.py``) that is linked or
shipped like the OpenMP runtime.

    void gradir_kernel_<variant>_matmul_f32(A, B, C, zero)   // C += A @ B   (f64 likewise)
                                                             // zero: C = A @ B (C not read)

``A`` (M x K), ``B`` (K x N) and ``C`` (M x N) are strided memrefs of any
strides (a transposed operand is a view with its strides swapped), ``C``
with unit column stride.  The loop order is the schedule's: K blocks, M
blocks, N tiles of ``2 * lanes`` columns, register tiles of ``rows`` rows
(the schedule's register tile for the target), and inside a tile the K
loop in steps of 1 (unrolled by ``KUNROLL``), one fused multiply-add per
element and step.  Every
element of C is therefore the same chain of FMAs in the same order as the
schedule's code computes (bitwise the same results; the tests check it).

* The lhs block (M block x K block) is packed K-major, as BLIS packs it
  (a tile's ``rows`` operands of one K step side by side: one stream
  through the block, where rows ``kb`` apart were ``rows`` streams), when
  more than ``PACK_A_TILES`` N tiles read it; a row-major lhs by L x L
  blocks transposed in registers, a transposed lhs a K step (a row) at a
  time.  AVX-512, one thread, against the row-wise pack: 1024^3 160 -> 168
  GFLOP/s, 256x784x512 162 -> 167; AVX2 (x86-64-v3) the same within 1%.
* An M block's full register tiles are one call of the tile function (a
  loop over them inside), not a call each: with N = 10 (one N tile, the
  lhs read in place) 64x512x10 ran at 47 GFLOP/s, 75 now (AVX-512).
* The rhs panel of an N tile (K block x tile width) is copied into a
  contiguous buffer, zero-padded to the tile width, unless the matmul has
  fewer than ``pack_rows(target)`` rows (32, or the schedule's
  ``PACK_ROWS`` on AMD CPUs with a large L2) and the panel is a full-width
  unit-stride slice (read in place, as the schedule does).  A row-major
  rhs is packed a whole K block at a time, every panel, reading its rows
  front to back (once per K block, not once per M block); a transposed rhs
  a panel at a time, by L x L blocks transposed in registers.
* K blocks are as even as can be, up to ``kb_most`` (no short last block:
  each block is a pass over C).
* Rows left over at the end of an M block run a tile of that many rows (one
  function per row count); columns left over, a tile of two vectors (the
  last masked) or of one (masked when fewer than L).

Threads: the kernels themselves are serial.  ``strips_text`` is a second,
small library's (``runtime/kernels.py``: ``..._omp.so``, linked with
libomp): per element type, ``gradir_kernel_<variant>_strips_<elt>`` runs a
matmul as strips of whole register tiles, one kernel call each, in one
OpenMP work-sharing loop, and ``gradir_kernel_<variant>_batch_<elt>`` a
batched matmul as kernel calls per batch element (or per strip of one).
``rlx-matmul-kernels{threads}`` calls them for matmuls worth the
threads, so the compiled program holds no OpenMP region of its own for
them (issue 14, compile time: each region is outlined and compiled by
LLVM; the MLP step's two parts held 2 and 3).
"""

from __future__ import annotations

import sys

from .schedule import PACK_ROWS

__all__ = ["ELEMENT_TYPES", "kernel_name", "kernel_text", "variant", "KERNEL_PREFIX",
           "pack_rows", "strips_name", "strips_text", "strips_type", "STRIPS_SCHEDULE",
           "batch_name", "batch_type"]

KERNEL_PREFIX = "gradir_kernel_"
ELEMENT_TYPES = ("f32", "f64")
# Bumped when the kernels' code changes (their symbols then change too).
KERNEL_VERSION = 12
# K steps per iteration of the tiles' inner loop
KUNROLL = 4
# N tiles from which the lhs block is packed (fewer read it in place): the
# pack's pass over the block, transposed in registers, costs more than the
# few tiles reading it save.  AMD Zen 5, AVX-512 (32-wide f32 tiles), one
# thread, min CPU time, packed from 2 tiles / from 5: 2048x576x64 743 / 593
# us, 4096x147x64 351 / 300, 512x288x48 74 / 63, 2048x576x128 1495 / 1195,
# 1024x256x128 296 / 259; attention's batched 32 x 128x128x64 (probs @ v)
# 0.35 / 0.29 ms (load 6-9 on 2 cores).  Wider ones ran 0-14% faster
# unpacked as well (1024x1024x256, 256x784x512, 1024^3), left packed until
# measured on an idle machine.
PACK_A_TILES = 4


# Rows from which the kernels pack the rhs panels (below them a full-width
# unit-stride panel is read in place, again by every register tile of rows:
# from L2, its rows N elements apart alias in L1).  Intel (Xeon, AVX-512,
# L1d 48 KiB, L2 2 MiB; one thread, 512x512 rhs, us in place / packed): 16
# rows 78 / 80, 32 rows 140 / 125, 48 rows 206 / 170, 128 rows 520 / 400,
# 192 rows 740 / 595, 128x784x512 790 / 640; the MLP 64 step 1.64 -> 1.56
# ms.  The same Xeon at x86-64-v3 (AVX2), 64 rows, a rhs of 784x512 /
# 512x512 out of L2 (the MLP step's weights): packed 0.96x numpy's time
# (whole K blocks packed row by row, ``_driver``), in place 0.84-0.94x
# from process to process.  AMD Zen 5 (AVX-512, L2 1 MiB): 64 rows 250 in
# place / 275 packed (a panel at a time), so 256 stays where the L2 holds
# a 512x512 rhs; Zen 2/3's 512 KiB holds neither of the MLP's weights.
PACK_ROWS_SMALL = 32


def pack_rows(target) -> int:
    """The rows from which the kernels for ``target`` pack the rhs panels:
    the schedule's PACK_ROWS on AMD CPUs with 1 MiB of L2 or more, 32
    elsewhere (Intel, smaller caches, named targets: the machine unknown)."""
    if getattr(target, "vendor", "") == "AuthenticAMD" and getattr(target, "l2", 0) >= 1 << 20:
        return PACK_ROWS
    return PACK_ROWS_SMALL


def variant(target) -> str:
    """The kernels' variant for ``target`` (a ``host.CpuTarget``): a digest
    of the register tiles, blocks and LLVM target.  It is part of every
    symbol, so the kernels of two targets (the host's and x86-64-v3's, say)
    can be loaded in one process without one's symbols resolving to the
    other's."""
    import hashlib
    from .schedule import schedule_params
    params = schedule_params(target, 1)
    key = repr((KERNEL_VERSION, params.tiles, target.name, target.llvm_cpu,
                tuple(target.llvm_features), pack_rows(target)))
    return hashlib.sha256(key.encode()).hexdigest()[:10]


def kb_most(kb: int, width: int, elt_bytes: int, l1d: int) -> int:
    """The longest K block of the kernels whose schedule's K block is
    ``kb`` (``schedule._k_block``) for register tiles ``width`` elements
    wide: a quarter more, as long as the rhs panel (K block x width) stays
    within 3/4 of the L1 data cache.  The K blocks are then as even as can
    be: K = 784 runs as three blocks of 262, not 256, 256, 256 and a block
    of 16 (each block is a pass over C: one AVX2 matmul 64x784x512, one
    thread, 0.88-0.92x numpy's time -> 0.97x)."""
    return max(kb, min(kb + kb // 4, (3 * l1d // 4) // (width * elt_bytes)))


def kernel_name(elt: str, var: str) -> str:
    """The symbol of the matmul kernel for element type ``elt`` of variant ``var``."""
    return f"{KERNEL_PREFIX}{var}_matmul_{elt}"


def strips_name(elt: str, var: str) -> str:
    """The symbol of the multi-threaded driver of that kernel (``strips_text``)."""
    return f"{KERNEL_PREFIX}{var}_strips_{elt}"


def strips_type(elt: str) -> str:
    """The driver's function type: A, B, C and the kernel's zero flag, then
    whether the strips are columns (else rows), the strip size and count,
    the threads, and whether the strips run on the threads even while
    libomp's workers sleep (else only while they spin: ``kmp_get_blocktime()``
    nonzero, as rlx-parallel-loops' hot-min-work regions)."""
    t = memref_type(elt)
    return f"({t}, {t}, {t}, i1, i1, index, index, i32, i1) -> ()"


def batch_name(elt: str, var: str) -> str:
    """The symbol of the batched matmuls' multi-threaded driver (``strips_text``)."""
    return f"{KERNEL_PREFIX}{var}_batch_{elt}"


def batch_type(elt: str) -> str:
    """The batched driver's function type: A (batch, M, K), B (batch, K,
    N), C (batch, M, N) (a batch stride of 0: one matrix for every element)
    and the kernel's zero flag, then as ``strips_type``: whether each
    element's strips are columns (else rows), their size and count per
    element, the threads, and whether they always run on the threads."""
    t = memref_type(elt, 3)
    return f"({t}, {t}, {t}, i1, i1, index, index, i32, i1) -> ()"


# How the strips are dealt to the threads: as rlx-parallel-loops' SCHEDULE
# (guided: a thread that is running takes more while another waits for a
# core).  Each strip computes its own columns or rows, in the order of one
# kernel call: the same bits whichever thread runs it.
STRIPS_SCHEDULE = "guided"


def strips_text(target) -> str:
    """The multi-threaded drivers of ``target``'s kernels (MLIR: func, scf,
    memref, arith, omp): a strip ``i`` is columns (or rows) ``[i * size,
    min((i + 1) * size, extent))`` of C, computed by one call of the serial
    kernel (``kernel_name``, from the kernel library) on views.  The
    batched driver (``batch_name``): work item ``i`` of ``batch * count``
    is strip ``i % count`` of batch element ``i / count``, on rank-reduced
    views of the element's matrices."""
    var = variant(target)
    lines = ["// gradir's multi-threaded matmul drivers (gradir/conversion/cpu/kernels.py)",
             f"// variant {var}", "module {",
             "  func.func private @kmp_get_blocktime() -> i32"]
    for elt in ELEMENT_TYPES:
        t = memref_type(elt)
        # (the kernel library's symbol itself, descriptors expanded)
        lines.append(f"  func.func private @{kernel_name(elt, var)}({t}, {t}, {t}, i1)")
        lines += _omp_driver(elt, var, False) + _omp_driver(elt, var, True)
    return "\n".join(lines + ["}"]) + "\n"


def _omp_driver(elt: str, var: str, batched: bool) -> list[str]:
    """``strips_name``'s driver, or ``batch_name``'s (``batched``)."""
    t = memref_type(elt)
    ta = memref_type(elt, 3) if batched else t
    kernel = kernel_name(elt, var)
    call = f"({t}, {t}, {t}, i1) -> ()"
    a, b, c = ("%ae", "%be", "%ce") if batched else ("%a", "%b", "%c")
    r = 1 if batched else 0     # C's dim of rows
    w = [f"  func.func @{(batch_name if batched else strips_name)(elt, var)}(%a: {ta}, "
         f"%b: {ta}, %c: {ta}, %zero: i1, %cols: i1, %size: index, %count: index, "
         "%threads: i32, %always: i1) attributes {llvm.emit_c_interface} {",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         "    %c2 = arith.constant 2 : index",
         "    %z = arith.constant 0 : i32",
         "    %blocktime = func.call @kmp_get_blocktime() : () -> i32",
         "    %hot = arith.cmpi ne, %blocktime, %z : i32",
         "    %on = arith.ori %always, %hot : i1",
         f"    %m = memref.dim %c, %c{r} : {ta}",
         f"    %n = memref.dim %c, %c{r + 1} : {ta}",
         f"    %k = memref.dim %a, %c{r + 1} : {ta}",
         "    %extent = arith.select %cols, %n, %m : index"]
    if batched:
        w += [f"    %nb = memref.dim %c, %c0 : {ta}",
              "    %items = arith.muli %nb, %count : index"]
    w += ["    omp.parallel if(%on) num_threads(%threads : i32) {",
          f"      omp.wsloop schedule({STRIPS_SCHEDULE}) {{",
          f"        omp.loop_nest (%i) : index = (%c0) to ({'%items' if batched else '%count'}) "
          "step (%c1) {"]
    if batched:
        w += ["          %e = arith.divui %i, %count : index",
              "          %s = arith.remui %i, %count : index"]
        w += [f"          {v} = memref.subview %{v[1]}[%e, 0, 0] [1, {x}, {y}] [1, 1, 1] : "
              f"{ta} to {t}" for v, x, y in ((a, "%m", "%k"), (b, "%k", "%n"), (c, "%m", "%n"))]
    w += [f"          %start = arith.muli {'%s' if batched else '%i'}, %size : index",
          "          %left = arith.subi %extent, %start : index",
          "          %len = arith.minsi %left, %size : index",
          "          scf.if %cols {",
          f"            %bs = memref.subview {b}[0, %start] [%k, %len] [1, 1] : {t} to {t}",
          f"            %cs = memref.subview {c}[0, %start] [%m, %len] [1, 1] : {t} to {t}",
          f"            func.call @{kernel}({a}, %bs, %cs, %zero) : {call}",
          "          } else {",
          f"            %as = memref.subview {a}[%start, 0] [%len, %k] [1, 1] : {t} to {t}",
          f"            %cs = memref.subview {c}[%start, 0] [%len, %n] [1, 1] : {t} to {t}",
          f"            func.call @{kernel}(%as, {b}, %cs, %zero) : {call}",
          "          }",
          "          omp.yield",
          "        }",
          "      }",
          "      omp.terminator",
          "    }",
          "    return",
          "  }"]
    return w


def memref_type(elt: str, rank: int = 2) -> str:
    """The kernels' argument type (``rank`` 3: the batched driver's)."""
    return f"memref<{'?x' * rank}{elt}, strided<[{', '.join(['?'] * rank)}], offset: ?>>"


def _types(elt: str, lanes: int) -> tuple[str, str, str, str]:
    """The kernels' argument type, a unit-column-stride view, a vector and its mask."""
    return (memref_type(elt), f"memref<?x?x{elt}, strided<[?, 1], offset: ?>>",
            f"vector<{lanes}x{elt}>", f"vector<{lanes}xi1>")


def _tile_name(elt: str, rows: int, nv: int, masked: bool, packed: bool, var: str) -> str:
    return (f"{KERNEL_PREFIX}{var}_tile_{elt}_{'m' if masked else 'f'}{rows}x{nv}"
            f"{'p' if packed else ''}")


def _apack_type(elt: str, mr: int, kb: int) -> str:
    """The packed lhs block, K-major: tile t's K step k is ``[t, k, 0:mr]``
    (the tile's A operands of one step side by side, one stream through
    the block)."""
    return f"memref<?x{kb}x{mr}x{elt}>"


def _tile(elt: str, rows: int, lanes: int, nv: int, masked: bool, var: str,
          apack: tuple[int, int] | None = None) -> list[str]:
    """One register tile: ``rows`` rows of C times ``nv`` vectors of
    columns (the last ``masked`` when the tile's columns, ``%nr``, are
    fewer), C += A @ B over ``%kc`` steps of K (C = A @ B when ``%z``),
    for ``%cnt`` tiles one below the other.  ``apack`` (MR, KB): A is the
    packed lhs block (``_apack_type``: K-major, so a K step's A operands
    are one pointer plus constants) and ``%aifirst`` the first tile's
    index in it; else A is the strided matrix and ``%aifirst``/``%ak``
    the first tile's first row and K step."""
    T, L = elt, lanes
    AT, BT, VT, MT = _types(elt, lanes)
    if apack:
        AT = _apack_type(elt, *apack)
    name = f"@{_tile_name(T, rows, nv, masked, apack is not None, var)}"
    w = [f"  func.func private {name}(%A: {AT}, %aifirst: index, %ak: index, %B: {BT}, %bk: index, "
         f"%C: {BT}, %cifirst: index, %cn: index, %kc: index, %nr: index, %z: i1, %cnt: index) {{",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         f"    %crows = arith.constant {rows} : index",
         f"    %zero = arith.constant dense<0.0> : {VT}"]
    for j in range(nv):
        w += [f"    %o{j} = arith.constant {j * L} : index",
              f"    %cn{j} = arith.addi %cn, %o{j} : index"]
        if masked:
            w += [f"    %rem{j} = arith.subi %nr, %o{j} : index",
                  f"    %len{j} = arith.maxsi %rem{j}, %c0 : index",
                  f"    %mk{j} = vector.create_mask %len{j} : {MT}"]
    # %cnt tiles one below the other (one call for the full tiles of an M
    # block: the call and its arguments are not paid per tile)
    w += ["    scf.for %t = %c0 to %cnt step %c1 {",
          "    %tr = arith.muli %t, %crows : index",
          "    %ci = arith.addi %cifirst, %tr : index",
          "    %ai = arith.addi %aifirst, %t : index" if apack else
          "    %ai = arith.addi %aifirst, %tr : index"]
    for i in range(rows):
        w += [f"    %ri{i} = arith.constant {i} : index",
              f"    %ci{i} = arith.addi %ci, %ri{i} : index",
              f"    %ar{i} = arith.addi %ai, %ri{i} : index"]
    # the accumulators start from C, or from zeros when %z (the first K
    # block of a matmul whose C is not read: its zero fill left out)
    n = rows * nv
    types = ", ".join([VT] * n)
    w += [f"    %acc:{n} = scf.if %z -> ({types}) {{",
          f"      scf.yield {', '.join(['%zero'] * n)} : {types}",
          "    } else {"]
    for i in range(rows):
        for j in range(nv):
            if masked:
                w.append(f"      %l{i}_{j} = vector.maskedload %C[%ci{i}, %cn{j}], %mk{j}, %zero : "
                         f"{BT}, {MT}, {VT} into {VT}")
            else:
                w.append(f"      %l{i}_{j} = vector.load %C[%ci{i}, %cn{j}] : {BT}, {VT}")
    w += [f"      scf.yield {', '.join(f'%l{i}_{j}' for i in range(rows) for j in range(nv))} "
          f": {types}", "    }"]
    def step(k: str, x: list[str], sfx: str) -> tuple[list[str], list[str]]:
        """One K step (index ``k``) of FMAs into the accumulators ``x``."""
        body = [f"      %bkk{sfx} = arith.addi %bk, {k} : index",
                f"      %akk{sfx} = arith.addi %ak, {k} : index"]
        for j in range(nv):
            body.append(f"      %b{j}{sfx} = vector.load %B[%bkk{sfx}, %o{j}] : {BT}, {VT}")
        ys = []
        for i in range(rows):
            body += [f"      %s{i}{sfx} = memref.load %A[%ai, {k}, %ri{i}] : {AT}" if apack else
                     f"      %s{i}{sfx} = memref.load %A[%ar{i}, %akk{sfx}] : {AT}",
                     f"      %v{i}{sfx} = vector.broadcast %s{i}{sfx} : {T} to {VT}"]
            for j in range(nv):
                body.append(f"      %y{i}_{j}{sfx} = vector.fma %v{i}{sfx}, %b{j}{sfx}, "
                            f"{x[i * nv + j]} : {VT}")
                ys.append(f"%y{i}_{j}{sfx}")
        return body, ys
    # K unrolled by KUNROLL (loop overhead off the FMA ports), then the
    # steps left one at a time: the same FMAs in the same order
    xs = [f"%x{i}_{j}" for i in range(rows) for j in range(nv)]
    iters = ", ".join(f"{x} = %acc#{n_}" for n_, x in enumerate(xs))
    w += [f"    %cU = arith.constant {KUNROLL} : index",
          "    %kq = arith.divui %kc, %cU : index",
          "    %kcu = arith.muli %kq, %cU : index",
          f"    %ru:{n} = scf.for %k = %c0 to %kcu step %cU iter_args({iters}) -> ({types}) {{"]
    cur = xs
    for u in range(KUNROLL):
        if u:
            w += [f"      %ku{u}c = arith.constant {u} : index",
                  f"      %ku{u} = arith.addi %k, %ku{u}c : index"]
        body, cur = step("%k" if u == 0 else f"%ku{u}", cur, f"u{u}")
        w += body
    w += [f"      scf.yield {', '.join(cur)} : {types}", "    }"]
    iters = ", ".join(f"{x} = %ru#{n_}" for n_, x in enumerate(xs))
    w += [f"    %res:{n} = scf.for %k = %kcu to %kc step %c1 iter_args({iters}) -> ({types}) {{"]
    body, cur = step("%k", xs, "")
    w += body + [f"      scf.yield {', '.join(cur)} : {types}", "    }"]
    for idx, (i, j) in enumerate((i, j) for i in range(rows) for j in range(nv)):
        if masked:
            w.append(f"    vector.maskedstore %C[%ci{i}, %cn{j}], %mk{j}, %res#{idx} : "
                     f"{BT}, {MT}, {VT}")
        else:
            w.append(f"    vector.store %res#{idx}, %C[%ci{i}, %cn{j}] : {BT}, {VT}")
    return w + ["    }", "    return", "  }"]


def _driver(elt: str, rows: int, lanes: int, nv: int, kb: int, mb: int, var: str,
            pack_from: int = PACK_ROWS) -> list[str]:
    T, L = elt, lanes
    NR = nv * L
    AT, BT, VT, MT = _types(elt, lanes)
    PT = f"memref<{kb}x{NR}x{T}>"
    BPT = f"memref<?x{kb}x{NR}x{T}>"
    APT = _apack_type(elt, rows, kb)
    # (the C interface: gradir's pipeline calls functions declared in the
    # module through it, llvm-request-c-wrappers)
    w = [f"  func.func @{kernel_name(elt, var)}(%A: {AT}, %B: {AT}, %C: {AT}, %zc: i1) "
         f"attributes {{llvm.emit_c_interface}} {{",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         f"    %cMR = arith.constant {rows} : index",
         f"    %cNR = arith.constant {NR} : index",
         f"    %cKB = arith.constant {kb} : index",
         f"    %cBPS = arith.constant {kb * NR} : index",
         f"    %cMB = arith.constant {mb} : index",
         f"    %cL = arith.constant {L} : index",
         f"    %cPR = arith.constant {pack_from} : index",
         f"    %fz = arith.constant 0.0 : {T}",
         f"    %vz = arith.constant dense<0.0> : {VT}",
         f"    %M = memref.dim %A, %c0 : {AT}",
         f"    %K = memref.dim %A, %c1 : {AT}",
         f"    %N = memref.dim %B, %c1 : {AT}",
         # K blocks of at most kb (the buffers' size) and as even as can be:
         # no short block left at the end (kb_most)
         "    %nkb0 = arith.ceildivsi %K, %cKB : index",
         "    %nkb = arith.maxsi %nkb0, %c1 : index",
         "    %kstep0 = arith.ceildivsi %K, %nkb : index",
         "    %kstep = arith.maxsi %kstep0, %c1 : index",
         f"    %bb, %bo, %bs:2, %bt:2 = memref.extract_strided_metadata %B : {AT} -> "
         f"memref<{T}>, index, index, index, index, index",
         f"    %cb, %co, %cs:2, %ct:2 = memref.extract_strided_metadata %C : {AT} -> "
         f"memref<{T}>, index, index, index, index, index",
         f"    %Cv = memref.reinterpret_cast %cb to offset: [%co], sizes: [%cs#0, %cs#1], "
         f"strides: [%ct#0, 1] : memref<{T}> to {BT}",
         f"    %ab, %ao, %as:2, %at:2 = memref.extract_strided_metadata %A : {AT} -> "
         f"memref<{T}>, index, index, index, index, index",
         # the lhs block is packed (K-major, _lhs_block) when more than
         # PACK_A_TILES N tiles read it and its rows or columns are unit-stride: one
         # stream of constant offsets in the tiles, no cache-set conflicts
         # between rows of power-of-two strides
         "    %aunit = arith.cmpi eq, %at#1, %c1 : index",
         # (a transposed lhs: copied a K step at a time)
         "    %akunit = arith.cmpi eq, %at#0, %c1 : index",
         "    %aany = arith.ori %aunit, %akunit : i1",
         f"    %cPA = arith.constant {PACK_A_TILES * NR} : index",
         "    %manyn = arith.cmpi sgt, %N, %cPA : index",
         "    %packa = arith.andi %aany, %manyn : i1",
         f"    %At = memref.reinterpret_cast %ab to offset: [%ao], sizes: [%K, %M], "
         f"strides: [%at#1, 1] : memref<{T}> to {BT}",
         "    %mrows = arith.minsi %M, %cMB : index",
         "    %mtiles = arith.ceildivsi %mrows, %cMR : index",
         "    %atiles = arith.select %packa, %mtiles, %c0 : index",
         # (flat, L elements longer: the packing stores whole vectors)
         f"    %cAPS = arith.constant {kb * rows} : index",
         "    %apsz0 = arith.muli %atiles, %cAPS : index",
         "    %apsz = arith.addi %apsz0, %cL : index",
         f"    %apflat = memref.alloc(%apsz) {{alignment = 64 : i64}} : memref<?x{T}>",
         f"    %apack = memref.reinterpret_cast %apflat to offset: [0], sizes: [%atiles, {kb}, "
         f"{rows}], strides: [{kb * rows}, {rows}, 1] : memref<?x{T}> to {APT}",
         f"    %Au = memref.reinterpret_cast %ab to offset: [%ao], sizes: [%M, %K], "
         f"strides: [%at#0, 1] : memref<{T}> to {BT}",
         "    %unit = arith.cmpi eq, %bt#1, %c1 : index",
         # a transposed rhs (unit stride down its columns): its panels are
         # transposed in registers, L x L blocks at a time
         "    %kunit = arith.cmpi eq, %bt#0, %c1 : index",
         f"    %Bt = memref.reinterpret_cast %bb to offset: [%bo], sizes: [%N, %K], "
         f"strides: [%bt#1, 1] : memref<{T}> to {BT}",
         "    %fewrows = arith.cmpi slt, %M, %cPR : index",
         "    %inplace_ok = arith.andi %unit, %fewrows : i1",
         f"    %pack = memref.alloc() {{alignment = 64 : i64}} : {PT}",
         # a row-major rhs not read in place is packed a whole K block at a
         # time (every N tile's panel), reading its rows front to back: a
         # panel at a time read a column strip, rows N elements apart, which
         # the hardware prefetchers do not follow out of L3
         "    %true = arith.constant true",
         "    %notinplace = arith.xori %inplace_ok, %true : i1",
         "    %blockpack = arith.andi %unit, %notinplace : i1",
         f"    %Bu = memref.reinterpret_cast %bb to offset: [%bo], sizes: [%K, %N], "
         f"strides: [%bt#0, 1] : memref<{T}> to {BT}",
         "    %ntiles = arith.ceildivsi %N, %cNR : index",
         "    %bptiles = arith.select %blockpack, %ntiles, %c0 : index",
         f"    %bpack = memref.alloc(%bptiles) {{alignment = 64 : i64}} : {BPT}",
         "    %nfull0 = arith.divsi %N, %cNR : index",
         "    %nfull = arith.muli %nfull0, %cNR : index",
         "    %ntail = arith.cmpi slt, %nfull, %N : index",
         f"    %packv = memref.cast %pack : {PT} to {BT}",
         "    scf.for %kb = %c0 to %K step %kstep {",
         "      %krem = arith.subi %K, %kb : index",
         "      %kc = arith.minsi %krem, %kstep : index",
         "      scf.for %mb = %c0 to %M step %cMB {",
         "        %mrem = arith.subi %M, %mb : index",
         "        %mc = arith.minsi %mrem, %cMB : index",
         "        %mend = arith.addi %mb, %mc : index",
         "        %packrows = arith.andi %packa, %aunit : i1",
         "        %packt = arith.andi %packa, %akunit : i1",
         # %zc: C is not read; the tiles of the first K block start from zeros
         "        %kfirst = arith.cmpi eq, %kb, %c0 : index",
         "        %mfirst = arith.cmpi eq, %mb, %c0 : index",
         "        %bpnow = arith.andi %blockpack, %mfirst : i1",
         "        scf.if %bpnow {",
         "          scf.for %k = %c0 to %kc step %c1 {",
         "            %kk = arith.addi %kb, %k : index",
         "            scf.for %nt = %c0 to %nfull step %cNR {",
         "              %bpt = arith.divui %nt, %cNR : index"]
    for j in range(nv):
        w += [f"              %bq{j} = arith.constant {j * L} : index",
              f"              %bn{j} = arith.addi %nt, %bq{j} : index",
              f"              %bv{j} = vector.load %Bu[%kk, %bn{j}] : {BT}, {VT}",
              f"              vector.store %bv{j}, %bpack[%bpt, %k, %bq{j}] : {BPT}, {VT}"]
    w += ["            }",
          "            scf.if %ntail {",
          "              %bpt = arith.divui %nfull, %cNR : index",
          "              %nr = arith.subi %N, %nfull : index"]
    w += _masked_row_copy(" " * 14, "b", elt, lanes, nv, ("%Bu", BT), "%nfull",
                          ("%bpack", BPT, "%bpt, %k, "))
    w += ["            }",
          "          }",
          "        }",
         "        %first = arith.andi %zc, %kfirst : i1",
         "        scf.if %packt {"]
    w += _lhs_block(elt, lanes, rows, True)
    w += ["        }",
          "        scf.if %packrows {"]
    w += _lhs_block(elt, lanes, rows, False)
    w += ["        }",
         "        scf.for %nt = %c0 to %N step %cNR {",
         "          %nrem = arith.subi %N, %nt : index",
         "          %nr = arith.minsi %nrem, %cNR : index",
         "          %full = arith.cmpi eq, %nr, %cNR : index",
         "          %inplace = arith.andi %inplace_ok, %full : i1",
         f"          %src, %bk0 = scf.if %inplace -> ({BT}, index) {{",
         "            %bofs = arith.addi %bo, %nt : index",
         f"            %bv = memref.reinterpret_cast %bb to offset: [%bofs], sizes: [%K, %cNR], "
         f"strides: [%bt#0, 1] : memref<{T}> to {BT}",
         f"            scf.yield %bv, %kb : {BT}, index",
         "          } else {",
         f"           %bsrc, %bsk = scf.if %blockpack -> ({BT}, index) {{",
         "            %bpt = arith.divui %nt, %cNR : index",
         "            %bpo = arith.muli %bpt, %cBPS : index",
         f"            %bview = memref.reinterpret_cast %bpack to offset: [%bpo], "
         f"sizes: [%cKB, %cNR], strides: [%cNR, 1] : {BPT} to {BT}",
         f"            scf.yield %bview, %c0 : {BT}, index",
         "           } else {",
         # the panel: unit-stride rows as (masked) vectors, other strides element by element
         "            scf.if %unit {",
         "              scf.for %k = %c0 to %kc step %c1 {",
         "                %kk = arith.addi %kb, %k : index"]
    w += _masked_row_copy(" " * 16, "p", elt, lanes, nv, ("%B", AT), "%nt", ("%pack", PT, "%k, "))
    w += ["              }",
          "            } else {",
          "            scf.if %kunit {"]
    w += _transposed_panel(elt, lanes, nv)
    w += ["            } else {",
          "              scf.for %k = %c0 to %kc step %c1 {",
          "                %kk = arith.addi %kb, %k : index",
          "                scf.for %j = %c0 to %cNR step %c1 {",
          "                  %inb = arith.cmpi slt, %j, %nr : index",
          f"                  %val = scf.if %inb -> ({T}) {{",
          "                    %nj = arith.addi %nt, %j : index",
          f"                    %x = memref.load %B[%kk, %nj] : {AT}",
          f"                    scf.yield %x : {T}",
          "                  } else {",
          f"                    scf.yield %fz : {T}",
          "                  }",
          f"                  memref.store %val, %pack[%k, %j] : {PT}",
          "                }",
          "              }",
          "            }",
          "            }",
          f"            scf.yield %packv, %c0 : {BT}, index",
          "           }",
          f"           scf.yield %bsrc, %bsk : {BT}, index",
          "          }",
          # the M block's full register tiles in one call, then the rows left
          "          %mfull = arith.divui %mc, %cMR : index",
          "          %mrest = arith.remui %mc, %cMR : index",
          "          %mfrows = arith.muli %mfull, %cMR : index",
          "          %mtr = arith.addi %mb, %mfrows : index",
          "          %hasfull = arith.cmpi sgt, %mfull, %c0 : index"]
    # the tiles (full width, the last vector masked, one vector, less)
    from .conv_kernels import _tile_calls
    w += _tile_calls(elt, rows, lanes, nv, kb, var, sys.modules[__name__], ("%src", "%bk0"))
    w += ["        }", "      }", "    }",
          # C = A @ B with no K steps: zeros (no tile ran)
          "    %knone = arith.cmpi eq, %K, %c0 : index",
          "    %zfill = arith.andi %zc, %knone : i1",
          "    scf.if %zfill {",
          "      scf.for %zi = %c0 to %M step %c1 {",
          "        scf.for %zj = %c0 to %N step %c1 {",
          f"          memref.store %fz, %Cv[%zi, %zj] : {BT}",
          "        }",
          "      }",
          "    }",
          f"    memref.dealloc %pack : {PT}", f"    memref.dealloc %bpack : {BPT}",
          f"    memref.dealloc %apflat : memref<?x{T}>",
          "    return", "  }"]
    return w


def _masked_row_copy(ind: str, p: str, elt: str, lanes: int, nv: int, src: tuple[str, str],
                     col0: str, dst: tuple[str, str, str]) -> list[str]:
    """Copies row ``%kk`` of ``src`` (name, type), columns ``col0`` ..
    ``col0 + %nr``, as ``nv`` masked vectors (zeros past ``%nr``) into
    ``dst`` (name, type, the indices before the column) at ``%k``; SSA
    names prefixed ``p``."""
    _, _, VT, MT = _types(elt, lanes)
    w = []
    for j in range(nv):
        w += [f"{ind}%{p}o{j} = arith.constant {j * lanes} : index",
              f"{ind}%{p}n{j} = arith.addi {col0}, %{p}o{j} : index",
              f"{ind}%{p}r{j} = arith.subi %nr, %{p}o{j} : index",
              f"{ind}%{p}l{j} = arith.maxsi %{p}r{j}, %c0 : index",
              f"{ind}%{p}m{j} = vector.create_mask %{p}l{j} : {MT}",
              f"{ind}%{p}v{j} = vector.maskedload {src[0]}[%kk, %{p}n{j}], %{p}m{j}, %vz : "
              f"{src[1]}, {MT}, {VT} into {VT}",
              f"{ind}vector.store %{p}v{j}, {dst[0]}[{dst[2]}%{p}o{j}] : {dst[1]}, {VT}"]
    return w


def _load_transposed(ind: str, src: str, p: str, zero: str, elt: str, lanes: int,
                     rows: list[tuple[str, str, str]]) -> list[str]:
    """L rows of ``src`` (a unit-stride view), row j read at ``rows[j]``'s
    (row index, column index) as a vector of ``rows[j]``'s mask length
    (zeros past it), gathered into an L x L block from ``zero`` and
    transposed in registers: ``<p>t``."""
    _, BT, VT, MT = _types(elt, lanes)
    XT = f"vector<{lanes}x{lanes}x{elt}>"
    w, prev = [], zero
    for j, rc in enumerate(rows):
        if rc is None:          # a row of zeros: nothing read
            continue
        row, col, length = rc
        w += [f"{ind}{p}m{j} = vector.create_mask {length} : {MT}",
              f"{ind}{p}l{j} = vector.maskedload {src}[{row}, {col}], {p}m{j}, %vz : "
              f"{BT}, {MT}, {VT} into {VT}",
              f"{ind}{p}x{j} = vector.insert {p}l{j}, {prev} [{j}] : {VT} into {XT}"]
        prev = f"{p}x{j}"
    return w + [f"{ind}{p}t = vector.transpose {prev}, [1, 0] : {XT} to {XT}"]


def _lhs_block(elt: str, lanes: int, mr: int, transposed: bool) -> list[str]:
    """Packs the lhs block (rows ``%mb``..``%mend``, K steps ``%kb``..
    ``+%kc``) K-major (``_apack_type``) into ``%apflat``, one register tile
    of rows at a time: K step k of tile t at ``(t * kb + k) * mr``, as
    vectors of L rows (whole vectors: the lanes past the tile's rows land
    on the next K step's, which is stored after them, or past the block's
    end, which has L elements of room).  A transposed lhs (``%At``, K x M,
    unit stride along M) is copied a K step at a time; a row-major one
    (``%Au``) is read L K steps of L rows at a time, each block transposed
    in registers.  Rows past ``%mend`` are not read (zeros); K steps past
    ``%kc`` are zeros or not stored (K blocks are multiples of L)."""
    T, L = elt, lanes
    _, UT, VT, MT = _types(elt, lanes)
    XT = f"vector<{L}x{L}x{T}>"
    groups = -(-mr // L)
    ind = "          "
    w = [f"{ind}scf.for %q0 = %mb to %mend step %cMR {{",
         f"{ind}  %qr = arith.subi %mend, %q0 : index",
         f"{ind}  %qrl = arith.minsi %qr, %cMR : index",
         f"{ind}  %qrel = arith.subi %q0, %mb : index",
         f"{ind}  %qt = arith.divui %qrel, %cMR : index",
         f"{ind}  %qbase = arith.muli %qt, %cAPS : index"]
    if transposed:
        for g in range(groups):
            w += [f"{ind}  %qg{g} = arith.constant {g * L} : index",
                  f"{ind}  %qgr{g} = arith.subi %qrl, %qg{g} : index",
                  f"{ind}  %qgc{g} = arith.minsi %qgr{g}, %cL : index",
                  f"{ind}  %qgl{g} = arith.maxsi %qgc{g}, %c0 : index",
                  f"{ind}  %qgm{g} = vector.create_mask %qgl{g} : {MT}",
                  f"{ind}  %qgv{g} = arith.cmpi sgt, %qgl{g}, %c0 : index",
                  f"{ind}  %qgq{g} = arith.addi %q0, %qg{g} : index",
                  f"{ind}  %qgs{g} = arith.select %qgv{g}, %qgq{g}, %q0 : index"]
        w += [f"{ind}  scf.for %k = %c0 to %kc step %c1 {{",
              f"{ind}    %kk = arith.addi %kb, %k : index",
              f"{ind}    %qk = arith.muli %k, %cMR : index",
              f"{ind}    %qo = arith.addi %qbase, %qk : index"]
        for g in range(groups):
            w += [f"{ind}    %qe{g} = vector.maskedload %At[%kk, %qgs{g}], %qgm{g}, %vz : "
                  f"{UT}, {MT}, {VT} into {VT}",
                  f"{ind}    %qof{g} = arith.addi %qo, %qg{g} : index",
                  f"{ind}    vector.store %qe{g}, %apflat[%qof{g}] : memref<?x{T}>, {VT}"]
        return w + [f"{ind}  }}", f"{ind}}}"]
    w += [f"{ind}  %qz = arith.constant dense<0.0> : {XT}",
          f"{ind}  scf.for %k0 = %c0 to %kc step %cL {{",
          f"{ind}    %kr0 = arith.subi %kc, %k0 : index",
          f"{ind}    %klen = arith.minsi %kr0, %cL : index",
          f"{ind}    %kk0 = arith.addi %kb, %k0 : index"]
    for g in range(groups):
        rows = []
        for j in range(L):
            r = g * L + j
            if r >= mr:
                rows.append(None)
                continue
            w += [f"{ind}    %qj{r} = arith.constant {r} : index",
                  f"{ind}    %qv{r} = arith.cmpi slt, %qj{r}, %qrl : index",
                  f"{ind}    %qa{r} = arith.addi %q0, %qj{r} : index",
                  f"{ind}    %qs{r} = arith.select %qv{r}, %qa{r}, %q0 : index",
                  f"{ind}    %qml{r} = arith.select %qv{r}, %klen, %c0 : index"]
            rows.append((f"%qs{r}", "%kk0", f"%qml{r}"))
        w += _load_transposed(f"{ind}    ", "%Au", f"%q{g}", "%qz", elt, lanes, rows)
    for i in range(L):
        w += [f"{ind}    %qi{i} = arith.constant {i} : index",
              f"{ind}    %qki{i} = arith.addi %k0, %qi{i} : index",
              f"{ind}    %qkm{i} = arith.muli %qki{i}, %cMR : index",
              f"{ind}    %qo{i} = arith.addi %qbase, %qkm{i} : index"]
        for g in range(groups):
            w += [f"{ind}    %qe{g}_{i} = vector.extract %q{g}t[{i}] : {VT} from {XT}",
                  f"{ind}    %qgo{g}_{i} = arith.constant {g * L} : index",
                  f"{ind}    %qof{g}_{i} = arith.addi %qo{i}, %qgo{g}_{i} : index",
                  f"{ind}    vector.store %qe{g}_{i}, %apflat[%qof{g}_{i}] : memref<?x{T}>, {VT}"]
    return w + [f"{ind}  }}", f"{ind}}}"]


def _transposed_panel(elt: str, lanes: int, nv: int) -> list[str]:
    """The rhs panel of a transposed rhs: ``%Bt`` (N x K, unit stride along
    K) read L x L blocks at a time (rows of Bt are contiguous), each block
    transposed in registers and stored as L rows of the panel.  Columns past
    ``%nr`` and K steps past ``%kc`` load as zeros (masks); every block
    stores whole rows (the panel has room: K blocks are multiples of L)."""
    T, L = elt, lanes
    _, BT, VT, _ = _types(elt, lanes)
    XT = f"vector<{L}x{L}x{T}>"
    ind = "              "
    w = [f"{ind}%xz = arith.constant dense<0.0> : {XT}",
         f"{ind}scf.for %k0 = %c0 to %kc step %cL {{",
         f"{ind}  %kr0 = arith.subi %kc, %k0 : index",
         f"{ind}  %klen = arith.minsi %kr0, %cL : index",
         f"{ind}  %kk0 = arith.addi %kb, %k0 : index"]
    for jb in range(nv):
        for j in range(L):
            t = f"{jb}_{j}"
            w += [f"{ind}  %tj{t} = arith.constant {jb * L + j} : index",
                  f"{ind}  %tv{t} = arith.cmpi slt, %tj{t}, %nr : index",
                  f"{ind}  %tl{t} = arith.select %tv{t}, %klen, %c0 : index",
                  f"{ind}  %tc{t} = arith.addi %nt, %tj{t} : index",
                  # (a row past N is never read: its mask is empty; its index
                  # stays inside the matrix all the same)
                  f"{ind}  %ts{t} = arith.select %tv{t}, %tc{t}, %nt : index"]
        w += _load_transposed(f"{ind}  ", "%Bt", f"%t{jb}", "%xz", elt, lanes,
                              [(f"%ts{jb}_{j}", "%kk0", f"%tl{jb}_{j}") for j in range(L)])
        for i in range(L):
            w += [f"{ind}  %te{jb}_{i} = vector.extract %t{jb}t[{i}] : {VT} from {XT}",
                  f"{ind}  %tk{jb}_{i} = arith.addi %k0, %tj0_{i} : index",
                  f"{ind}  %tq{jb}_{i} = arith.constant {jb * L} : index",
                  f"{ind}  vector.store %te{jb}_{i}, %packv[%tk{jb}_{i}, %tq{jb}_{i}] : {BT}, {VT}"]
    return w + [f"{ind}}}"]


def kernel_text(target) -> str:
    """The kernels (MLIR: func, scf, memref, vector, arith) for ``target``
    (a ``host.CpuTarget``): the register tiles, K blocks and M blocks of its
    schedule (``schedule.schedule_params``), both element types."""
    from .schedule import schedule_params
    params = schedule_params(target, 1)
    var = variant(target)
    lines = ["// gradir's shape-generic matmul kernels (gradir/conversion/cpu/kernels.py)",
             f"// target: {params.target}, variant {var}", "module {"]
    conv = {}
    for elt in ELEMENT_TYPES:
        rows, width, kb, mb = ((params.f32_m, params.f32_n, params.f32_k, params.f32_mb)
                               if elt == "f32" else
                               (params.f64_m, params.f64_n, params.f64_k, params.f64_mb))
        nv = 2
        lanes = width // nv
        kb = kb_most(kb, width, 4 if elt == "f32" else 8, target.l1d)
        for apack in ((rows, kb), None):
            for tnv in (nv, 1):
                for masked in (False, True):
                    for r in range(1, rows + 1):
                        lines += _tile(elt, r, lanes, tnv, masked, var, apack)
        lines += _driver(elt, rows, lanes, nv, kb, mb, var, pack_rows(target))
        conv[elt] = (rows, lanes, nv, kb, mb)
    # the 2x2 max-pooling kernels (pool_kernels.py, rlx-pool-kernels)
    from .pool_kernels import pool_text
    lines += pool_text(var, {elt: target.lanes(32 if elt == "f32" else 64)
                             for elt in ELEMENT_TYPES})
    # those of the saved arg-max indices (pool_index_kernels.py, rlx-pool-indices)
    from .pool_index_kernels import saved_indices_text
    for elt in ELEMENT_TYPES:
        lines += saved_indices_text(var, elt, target.lanes(32 if elt == "f32" else 64))
    # the implicit-GEMM convolutions (conv_kernels.py, rlx-conv-kernels)
    from .conv_kernels import conv_text
    lines += conv_text(var, conv, sys.modules[__name__])
    return "\n".join(lines + ["}"]) + "\n"

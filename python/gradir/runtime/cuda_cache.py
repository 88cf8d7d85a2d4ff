"""The persistent compile cache for ``gradir.compile(target="cuda")``.

The CPU's cache (``cache.py``: the folder, ``cache=``, ``GRADIR_CACHE``,
``GRADIR_CACHE_DIR``, the size cap, the entries' trailer, atomic writes,
damaged entries discarded and rebuilt) holds CUDA entries too.  An entry
is the library ``export_cuda_library`` writes (host code, kernels embedded,
signatures); the entries of one CUDA runtime share a folder,
``compiled/cuda-<runtime>/``, with that runtime (``libmlir_cuda_runtime.so``,
gradir's or MLIR's with its ``libLLVM.so`` stand-in) beside them, which
the entries find through their RUNPATH ``$ORIGIN``.

The key is ``cache.cache_key`` of the module's text, the options (chip,
opt_level, keep_resident, precision, compute_dtype), the functions asked
for and the lowering switches (``cache._switches``: ``wgmma.TMA``,
``wgmma.DYNAMIC_SMEM``, ``gemm.GEMM_CONFIGS``, ...), plus the binary format
(cubin, PTX or fatbin), ``sm_count``, the version of ``ptxas`` (and of
``fatbinary``) when the kernels are compiled to a cubin (a fatbin) and the
CUDA runtime the library links (gradir's source digest, or MLIR's library).

A hit reads the entry (its trailer, its ELF image, its signatures and its
``gradir_target`` record, ``cuda:<chip>:<format>``) without loading it:
loading runs the constructor that loads the kernels into the CUDA context,
so, as for a fresh compile, nothing needs a GPU until the first call.  The
first call checks the CUDA runtime and the driver (the same RuntimeError as
a fresh compile's without one), checks the entry again and loads it with
``gradir.runtime.load``; an entry gone or damaged since is compiled again
there (a CacheWarning).  A miss compiles (``compile_cuda``), writes the
entry (``export_cuda_library`` in a temporary folder, then renamed into
place) and returns an executable that runs it, so the first call loads the
library instead of starting an ExecutionEngine; when the entry cannot be
written (a CacheWarning) the compiled executable is returned as it is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from . import cache
from .abi import Function, Signature
from .cuda import (RESIDENT_SUFFIX, CudaExecutable, _resident_indices, _runtime_library,
                   check_cuda_runtime, compile_cuda, default_format, export_cuda_library)
from .cuda_runtime import write_atomic
from .errors import LibraryError

__all__ = ["CachedCudaExecutable", "compile_cached", "runtime_tag", "tool_versions",
           "TARGET_RECORD"]

TARGET_RECORD = "gradir_target"       # cuda._glue_source: "cuda:<chip>:<format>"


def runtime_tag() -> str:
    """The CUDA runtime exported libraries link: gradir's (its source
    digest) or MLIR's (``GRADIR_CUDA_RUNTIME=mlir``: its file's size and time)."""
    from . import cuda_runtime
    if os.environ.get("GRADIR_CUDA_RUNTIME", "").strip().lower() != "mlir":
        return "gradir-" + cuda_runtime.source_digest()[:16]
    from .toolchain import runtime_library_dir
    try:
        st = (runtime_library_dir() / cuda_runtime.LIBRARY_NAME).stat()
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        stamp = "missing"
    return "mlir-" + hashlib.sha256(stamp.encode()).hexdigest()[:16]


_versions: dict[tuple, str] = {}


def _version(path: str | None) -> str:
    """``path --version``'s output (memoized per file and time), "missing"
    without the tool."""
    if path is None:
        return "missing"
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    memo = (path, st.st_size, st.st_mtime_ns)
    if memo not in _versions:
        try:
            proc = subprocess.run([path, "--version"], capture_output=True, text=True,
                                  timeout=60)
            _versions[memo] = proc.stdout.strip() or f"{path}: {st.st_size}:{st.st_mtime_ns}"
        except (OSError, subprocess.SubprocessError):
            _versions[memo] = f"{path}: {st.st_size}:{st.st_mtime_ns}"
    return _versions[memo]


def tool_versions(fmt: str) -> dict:
    """The CUDA tools whose output a ``fmt`` binary embeds: ptxas for a
    cubin, ptxas and fatbinary for a fatbin, none for PTX (the driver
    compiles it when the library loads)."""
    if fmt == "isa":
        return {}
    from ..conversion.gpu.nvvm import find_ptxas
    ptxas = find_ptxas()
    out = {"ptxas": _version(ptxas)}
    if fmt == "fatbin":
        beside = Path(ptxas).with_name("fatbinary") if ptxas else None
        out["fatbinary"] = _version(str(beside) if beside and beside.exists()
                                    else shutil.which("fatbinary"))
    return out


def _target_record(image) -> str | None:
    sym = image.symbols.get(TARGET_RECORD)
    if sym is None or not sym.defined:
        return None
    span = image.file_range(sym.value, max(sym.size, 1))
    if span is None:
        return None
    return image.data[span[0]:span[1]].split(b"\0", 1)[0].decode("utf-8", "replace")


def _reader(chip: str, fmt: str):
    """``cache.lookup``'s reader of a CUDA entry: its signatures, read from
    the file (not loaded: loading needs the driver); LibraryError when it is
    no gradir library or was built for another chip or format."""
    from .elf import ElfError, read_elf
    from .loader import read_signatures

    def read(path: Path) -> dict:
        try:
            image = read_elf(path)
        except ElfError as err:
            raise LibraryError(f"{path}: {err}") from None
        sigs = read_signatures(image)
        record, want = _target_record(image), f"cuda:{chip}:{fmt}"
        if record != want:
            raise LibraryError(f"its kernels are for {record!r}, not {want!r}")
        return sigs
    return read


def _resident(options, signatures: dict) -> dict:
    """function -> the argument indices kept resident (as ``compile_cuda``)."""
    out = {}
    for name, sig in signatures.items():
        if name.endswith(RESIDENT_SUFFIX) and name[:-len(RESIDENT_SUFFIX)] in signatures:
            continue
        idx = _resident_indices(options, sig) if options.keep_resident else ()
        if idx:
            out[name] = idx
    return out


def _interface_problem(module, signatures: dict, options, functions) -> str | None:
    """Why an entry's signatures are not what compiling ``module`` gives
    (its public functions, and an upload function per function with
    resident arguments), or None."""
    from ..ir import as_operation
    from .signature import interface_matches
    resident = _resident(options, signatures)
    uploads = {name + RESIDENT_SUFFIX for name in resident}
    base = {n: s for n, s in signatures.items() if n not in uploads}
    if not interface_matches(as_operation(module), base, functions):
        return "holds functions whose signatures are not this module's"
    for name, idx in resident.items():
        sig = signatures[name]
        if any(not isinstance(sig.input_tree[i], int) for i in idx):
            return "keeps a tuple argument resident"
        want = Signature(name + RESIDENT_SUFFIX,
                         tuple(sig.inputs[sig.input_tree[i]] for i in idx),
                         tuple(range(len(idx))), (), ())
        if signatures[want.name].to_json() != want.to_json():
            return f"holds an upload function @{want.name} of other arguments"
    return None


def compile_cached(module, options, directory: Path, *, sm_count: int = 132,
                   functions=None, format: str | None = None):  # noqa: A002
    """``compile_cuda`` through the compile cache in ``directory``
    (``cache.cache_dir``): a ``CachedCudaExecutable``, or on a miss whose
    entry could not be written the ``CudaExecutable`` compiled."""
    from ..ir import as_operation, print_module
    from .export import unexportable_names
    fmt = format or default_format()
    tag = runtime_tag()
    folder = Path(directory) / (cache.TARGET_PREFIX + tag)
    text = print_module(as_operation(module), segments=True)
    key = cache.cache_key(text, options, functions,
                          {"binary": fmt, "sm_count": sm_count, "tools": tool_versions(fmt),
                           "runtime": tag})
    sigs = cache.lookup(folder, key, reader=_reader(options.chip, fmt))
    if sigs is not None:
        problem = _interface_problem(module, sigs, options, functions)
        if problem is None:
            return CachedCudaExecutable(folder / f"{key}.so", key, sigs, options, fmt, text,
                                        functions, sm_count, hit=True)
        cache.discard_entry(folder, key, problem)
    exe = compile_cuda(module, options, format=fmt, sm_count=sm_count, functions=functions)
    exe.cache_hit, exe.cache_path = False, folder / f"{key}.so"
    if unexportable_names(exe.signatures) or not _store(folder, key, exe):
        return exe
    return CachedCudaExecutable(exe.cache_path, key, exe.signatures, options, fmt, text,
                                functions, sm_count, hit=False, compiled=exe)


def _store(folder: Path, key: str, exe: CudaExecutable) -> bool:
    """Writes ``exe``'s library as the entry ``key``; False (with a
    CacheWarning) when it could not."""
    work = cache.work_folder(folder)
    if work is None:
        return False
    try:
        return cache.store_library(folder, key, export_cuda_library(exe, work / "lib.so"))
    except Exception as err:  # noqa: BLE001 - a cache write must never fail the compile
        cache.stats.errors += 1
        cache.warn(f"gradir compile cache: writing the entry for {key[:12]} failed: "
                   f"{str(err)[:500]}; not cached")
        return False
    finally:
        shutil.rmtree(work, ignore_errors=True)


class CachedCudaExecutable(CudaExecutable):
    """A ``CudaExecutable`` whose functions run a compile-cache entry (an
    exported CUDA library), loaded at the first call; nothing is lowered
    and LLVM is not invoked.  ``cache_hit``: True when the entry was
    found, False when this process compiled and wrote it (``compiled``: that
    ``CudaExecutable``, which runs instead should the entry be gone by the
    first call).  ``llvm_ir`` and ``kernels()`` lower the module again on
    first use (a hit); ``export_library`` copies the entry's library and
    its runtime."""

    def __init__(self, path: Path, key: str, signatures: dict, options, fmt: str,
                 module_text: str, functions, sm_count: int, *, hit: bool,
                 compiled: CudaExecutable | None = None):
        self.options = options
        self.format = fmt
        self.signatures = signatures
        self.resident = _resident(options, signatures)
        self.cache_hit = hit
        self.cache_path = path
        self._key = key
        self._module_text = module_text
        self._requested = functions
        self._sm_count = sm_count
        self._compiled = compiled
        self._lowered_text = compiled.llvm_ir if compiled is not None else None
        self._engine = None         # the loaded Library (or a CudaExecutable compiled again)
        self._keepalive = None
        self._functions = {name: Function(sig, self._caller(name), keepalive=self)
                           for name, sig in signatures.items()}

    def _where(self) -> str:
        return "compiled functions (from the compile cache)"

    def _caller(self, name: str):
        state = {}

        def call(desc_ptrs):
            if "fn" not in state:
                state["fn"] = self._ensure_engine()[name]._call
            state["fn"](desc_ptrs)
        return call

    def _ensure_engine(self):
        """The loaded entry (its constructor loads the kernels): the CUDA
        runtime and the driver are checked first, as by a fresh compile's
        first call."""
        if self._engine is None:
            check_cuda_runtime(_runtime_library())
            self._engine = self._open()
        return self._engine

    def _open(self):
        from .abi import signatures_to_json
        from .loader import load
        try:
            why = cache.verify(self.cache_path, self._key)
            if why is not None:
                raise LibraryError(why)
            lib = load(self.cache_path)
            if signatures_to_json(lib.signatures) != signatures_to_json(self.signatures):
                raise LibraryError("holds other functions than when it was looked up")
            return lib
        except OSError as err:      # LibraryError; FileNotFoundError: evicted meanwhile
            cache.stats.errors += 1
            cache.warn(f"gradir compile cache: {self.cache_path} cannot be loaded ({err}); "
                       + ("compiling again" if self._compiled is None
                          else "running the code compiled here"))
        fresh = self._compile_again()
        fresh._ensure_engine()
        return fresh

    def _compile_again(self) -> CudaExecutable:
        if self._compiled is not None:
            return self._compiled
        from mlir import ir
        from ..ir import make_context
        with make_context():
            module = ir.Module.parse(self._module_text)
            return compile_cuda(module, self.options, format=self.format,
                                sm_count=self._sm_count, functions=self._requested)

    @property
    def llvm_ir(self) -> str:
        if self._lowered_text is None:
            self._lowered_text = self._compile_again().llvm_ir
        return self._lowered_text

    def export_library(self, path) -> Path:
        """The entry's library (its trailer cut off) written to ``path``,
        the CUDA runtime beside it (as ``export_cuda_library`` does); an
        entry gone or damaged meanwhile is compiled again."""
        import uuid
        path = Path(path).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            data = cache.library_bytes(self.cache_path, self._key)
        except OSError as err:
            cache.warn(f"gradir compile cache: {self.cache_path} cannot be exported ({err}); "
                       "compiling again")
            return export_cuda_library(self._compile_again(), path)
        for lib in sorted(self.cache_path.parent.glob("lib*.so")):
            dest = path.parent / lib.name
            blob = lib.read_bytes()
            if dest.exists() and (lib.name == "libLLVM.so" or dest.read_bytes() == blob):
                continue            # (a libLLVM.so there, the stand-in or the real one, stays)
            write_atomic(dest, blob, uuid.uuid4().hex[:8])
        write_atomic(path, data, uuid.uuid4().hex[:8])
        return path



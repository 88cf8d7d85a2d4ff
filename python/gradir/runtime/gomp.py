"""gradir's parallel loops on GNU libgomp, where the process already runs it.

A process that imported PyTorch has GNU libgomp's worker threads: PyTorch's
own kernels (the optimizer step of a training loop among them) run on them.
gradir's code calls LLVM's OpenMP runtime (libomp.so), a second pool of
workers.  Each pool's workers spin a while after a region (libgomp's
``GOMP_SPINCOUNT``, libomp's block time), so on a machine with as many
cores as threads the two pools contest the cores at every switch: the
ResNet training step of ``bench/train_step.py`` at 2 threads took 18.6 ms
through the drop-in module against 11.8 ms with PyTorch's workers told not
to spin (``GOMP_SPINCOUNT=0``, which slows PyTorch itself: eager 13.3 ->
18.4 ms), on a 2-core AMD EPYC (Zen 5, AVX-512) at load 1.

So where libgomp is loaded and libomp is not yet, gradir's compiled code
runs on libgomp's pool: ``native/gradir_gomp.c`` defines the LLVM entry
points gradir's code calls (``__kmpc_fork_call``, ``__kmpc_dispatch_*``,
...) on top of ``GOMP_parallel`` and libgomp's loops, and is built (once per
source, beside the kernel library) with the soname ``libomp.so`` and
libomp's symbol version, and loaded before gradir's code: every
``NEEDED libomp.so`` of a library gradir loads and every JIT lookup binds
to it.  Nothing is compiled differently: the same code, the same
libraries, the same bits (the loops write disjoint elements; which thread
runs which iterations does not change them).  Exported libraries still link
and ship LLVM's libomp; loaded into such a process they run on libgomp too.

``GRADIR_OPENMP``: ``auto`` (the default: libgomp where it is loaded and
libomp is not), ``libomp`` (always LLVM's runtime).  ``GRADIR_OPENMP_LIBRARY``
(a libomp.so to use) implies ``libomp``.  Once either runtime is loaded, the
process keeps it.

A leaf module (imports only ``folders.py``, never mlir): ``toolchain``
chooses the process's runtime with it, the loader of exported libraries
(``preload_for``) too; where there is no C compiler, the process runs
libomp as before.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path

__all__ = ["SOURCE", "LIBRARY_PREFIX", "mode", "loaded_libgomp", "loaded_library",
           "loaded_libomp", "needs_libomp", "preload_for", "wanted", "library", "activate", "counters"]

SOURCE = Path(__file__).resolve().parent / "native" / "gradir_gomp.c"
LIBRARY_PREFIX = "libgradir_gomp_"
_FLAGS = ("-shared", "-fPIC", "-O2", "-fvisibility=hidden", "-Wl,-soname,libomp.so")
# libomp's symbol version: libraries linked against LLVM's libomp ask for
# ``__kmpc_*@VERSION``
_VERSION_SCRIPT = "VERSION { global: *; };\n"
_lock = threading.Lock()
_built: Path | None = None


def mode() -> str:
    """``auto`` or ``libomp`` (``GRADIR_OPENMP``; ``GRADIR_OPENMP_LIBRARY`` set: ``libomp``)."""
    if os.environ.get("GRADIR_OPENMP_LIBRARY"):
        return "libomp"
    value = os.environ.get("GRADIR_OPENMP", "auto").strip().lower() or "auto"
    return "libomp" if value == "libomp" else "auto"


def _mapped() -> list[str]:
    try:
        with open("/proc/self/maps") as f:
            return [line.split(maxsplit=5)[-1].strip() for line in f if "/" in line]
    except OSError:
        return []


def loaded_libgomp() -> str | None:
    """The path of the libgomp the process has loaded, or None."""
    for path in _mapped():
        if os.path.basename(path).startswith("libgomp"):
            return path
    return None


def loaded_library() -> Path | None:
    """The path of this library where the process has loaded it, or None."""
    for path in _mapped():
        if os.path.basename(path).startswith(LIBRARY_PREFIX) and os.path.isfile(path):
            return Path(path)
    return None


def loaded_libomp() -> bool:
    """Whether the process has loaded LLVM's libomp (a file named libomp.so)."""
    return any(os.path.basename(path) == "libomp.so" for path in _mapped())


def preload_for(path) -> None:
    """Before the library ``path`` is loaded (``gradir.runtime.load``, where
    MLIR need not be): where it needs ``libomp.so`` and this process should
    run its regions on libgomp (``wanted``), loads these entry points first,
    with the libomp beside ``path`` behind them, so that the NEEDED entry
    binds to them (their soname).  Nothing where they cannot be built."""
    if mode() != "auto" or loaded_library() is not None or not needs_libomp(path):
        return
    if wanted(loaded_libomp()):
        from .folders import c_compiler
        beside = Path(path).resolve().parent / "libomp.so"
        activate(c_compiler(), beside if beside.is_file() else None)


def wanted(libomp_loaded: bool) -> bool:
    """Whether this process should run gradir's regions on libgomp (mode
    ``auto``, libgomp loaded, no libomp yet)."""
    return not libomp_loaded and mode() == "auto" and loaded_libgomp() is not None


def activate(cc: str | None, libomp: Path | None) -> Path | None:
    """Loads this library (built with ``cc`` if needed) and binds LLVM's
    libomp at ``libomp`` behind it for the regions that run while workers
    are cold (``native/gradir_gomp.c``; None: every region on libgomp);
    returns its path, or None where it cannot be built."""
    built = library(cc)
    if built is None:
        return None
    lib = ctypes.CDLL(str(built))
    if libomp is not None:
        lib.gradir_gomp_fallback.argtypes = [ctypes.c_char_p]
        lib.gradir_gomp_fallback(str(libomp).encode())
    return built


def source_digest() -> str:
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(" ".join(_FLAGS).encode() + _VERSION_SCRIPT.encode())
    return h.hexdigest()


def needs_libomp(path) -> bool:
    """Whether the library file ``path`` names ``libomp.so`` (a NEEDED entry)."""
    try:
        with open(path, "rb") as f:
            return b"libomp.so\x00" in f.read()
    except OSError:
        return False


def library(cc: str | None) -> Path | None:
    """This library (built with the C compiler ``cc`` if no folder has it
    yet), or None where it cannot be built (no compiler, no writable
    folder)."""
    from .folders import library_folders
    global _built
    if _built is not None and _built.is_file():
        return _built
    digest = source_digest()
    name = f"{LIBRARY_PREFIX}{digest[:16]}.so"
    with _lock:
        for folder in library_folders():
            if (folder / name).is_file():
                _built = folder / name
                return _built
        if cc is None:
            return None
        for folder in library_folders():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                _built = _compile(cc, folder, name, digest)
                return _built
            except (OSError, RuntimeError):
                continue
    return None


def _compile(cc: str, folder: Path, name: str, digest: str) -> Path:
    with tempfile.TemporaryDirectory(prefix="gradir-gomp-") as tmp:
        script = Path(tmp) / "version.map"
        script.write_text(_VERSION_SCRIPT)
        out = folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        cmd = [cc, *_FLAGS, f"-Wl,--version-script={script}",
               f'-DGRADIR_GOMP_DIGEST="{digest}"', "-o", str(out), str(SOURCE), "-ldl"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        try:
            if proc.returncode != 0:
                raise RuntimeError("building gradir's libgomp entry points failed:\n"
                                   + " ".join(cmd) + "\n" + proc.stderr)
            os.replace(out, folder / name)
        finally:
            out.unlink(missing_ok=True)
    return folder / name


def counters(lib: ctypes.CDLL | None = None) -> dict:
    """What the loaded library did: ``bound`` (1: libgomp found), ``regions``
    (regions forked on libgomp's pool), ``libomp_regions`` (on libomp's,
    while workers were cold), ``widest`` (the largest team on libgomp's),
    ``libgomp`` (its path)."""
    if lib is None:
        path = loaded_library()
        if path is None:
            return {}
        lib = ctypes.CDLL(str(path))
    out = {}
    for key, fn, restype in (("bound", "gradir_gomp_bound", ctypes.c_int),
                             ("regions", "gradir_gomp_regions", ctypes.c_long),
                             ("libomp_regions", "gradir_gomp_libomp_regions", ctypes.c_long),
                             ("widest", "gradir_gomp_widest_team", ctypes.c_long),
                             ("libgomp", "gradir_gomp_library", ctypes.c_char_p)):
        f = getattr(lib, fn)
        f.restype = restype
        out[key] = f()
    out["libgomp"] = out["libgomp"].decode() if out["libgomp"] else ""
    return out

"""The persistent compile cache: a second process skips LLVM.

``gradir.compile(module)`` (target "cpu") looks up a shared library under
the cache directory before it lowers anything.  The key is the SHA-256 of

  * the printed module (pretty form, locations left out),
  * every ``CompileOptions`` field (target, opt_level, cpu, ... and any field
    added later) and the functions asked for,
  * the CPU the code is generated for (``host.resolve(cpu)``: LLVM CPU name,
    ISA features, cache sizes the schedule's tiles follow),
  * gradir's own code (a digest of the package's sources and the dialect
    files, so editing a pass invalidates old entries), the MLIR and LLVM
    builds (name, size and time of their shared libraries) and this file's
    ``FORMAT``,
  * the lowering's tuning switches a program changed at run time: an
    upper-case module constant of ``gradir.conversion``, ``transforms``,
    ``autodiff`` or ``simplify`` (``conv.CONV_KERNEL``,
    ``rlx_parallel_loops.PIPELINE_MIN_WORK``, ...) whose value is no longer
    the one its source file assigns (``_switches``), so a build made under
    other switches is never served; unchanged switches add nothing, so the
    key does not depend on which modules happen to be imported.

A hit loads the library with ``gradir.runtime.load`` (its ELF, signature
digest and CPU-feature checks apply) and ``compile`` returns a
``jit.CachedExecutable`` (an ``Executable``) whose
functions run the cached code; nothing is lowered and LLVM is not invoked
(``exe.cache_hit`` is True, ``stats.hits`` counts it).  A miss compiles as
usual (the JIT), then writes the library in a background thread (the object
file of the same ExecutionEngine, linked with ``cc`` as
``export_library`` does), so the first call does not wait for the link;
``wait()`` joins pending writes and the interpreter joins them at exit.

Entries are ``<dir>/compiled/<key>.so``: an ELF shared library followed by a
trailer (``MAGIC``, the entry's own key and the SHA-256 of the library bytes
and that key), written to a temporary file in the same directory and renamed
into place, so readers see a whole entry or none and concurrent processes may
write the same key.  An entry whose digest does not match (truncated,
edited), that holds another key (an entry of another program copied or
renamed over this one) or that the loader refuses is removed with a
``CacheWarning`` and rebuilt.  The runtime libraries entries link to
(``libomp.so``, ``libgradir_kernels_*.so``, found through their RUNPATH
``$ORIGIN``) lie beside them, each with a ``<name>.sha256`` record: a lookup
checks them first (``dlopen`` of a truncated library raises SIGBUS): a
damaged or unrecorded one makes the lookup a miss, and the write that follows
replaces it.  A
directory that cannot be created or written costs a warning, never the
compile.

Where and whether (read when ``compile`` runs):

  * ``GRADIR_CACHE_DIR``: the directory (default ``$XDG_CACHE_HOME/gradir``,
    else ``~/.cache/gradir``; the CPU schedules live in its ``schedules/``);
  * ``GRADIR_CACHE=0`` (or ``off``/``false``/``no``), or ``GRADIR_CACHE_DIR=""``:
    no compile cache;
  * ``gradir.compile(..., cache=False)`` for one call (``True``: on even when the
    environment turns it off; a path: that directory);
  * ``GRADIR_CACHE_MAX_MB`` (default 1024): after each write the least
    recently used entries are deleted until the ``compiled/`` folder is under
    the cap (a hit refreshes an entry's time).  ``clear()`` (or deleting the
    folder) empties it.

``gradir.compile(target="cuda")`` uses the same folder, switches and
rules (``cuda_cache.py``): its entries are exported CUDA libraries, under
``compiled/cuda-<runtime>/`` beside the CUDA runtime they link, in the
same size cap; their key adds the binary format, ``sm_count``, the ptxas
version and the runtime.  ``lookup`` then reads an entry without loading
it (``reader``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tempfile
import threading
import shutil
import uuid
import warnings
from pathlib import Path

__all__ = ["CacheWarning", "CacheStats", "stats", "cache_dir", "cache_key", "lookup", "verify",
           "library_bytes", "warn",
           "store", "store_library", "work_folder", "discard_entry", "wait", "clear", "FORMAT",
           "MAGIC", "TARGET_PREFIX"]

FORMAT = 2
MAGIC = b"\0GRADIR-CACHE-2\0"   # 16 bytes, then the key and the hex SHA-256 (64 bytes each)
_TRAILER = len(MAGIC) + 128
_OFF = ("0", "off", "false", "no")
SUBDIR = "compiled"
TARGET_PREFIX = "cuda-"  # compiled/cuda-<runtime>/: CUDA entries and the runtime they link


class CacheWarning(UserWarning):
    """The compile cache could not be read or written; the compile went on."""


@dataclasses.dataclass
class CacheStats:
    """What this process's compiles did with the cache (timing-free signal)."""
    hits: int = 0
    misses: int = 0
    writes: int = 0
    corrupt: int = 0       # entries found damaged, removed and rebuilt
    errors: int = 0        # reads/writes that failed (unwritable directory, no cc, ...)

    def reset(self) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, 0)


stats = CacheStats()


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=4)


warn = _warn


# --- where -------------------------------------------------------------------

def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "gradir"


def cache_dir(cache=None) -> Path | None:
    """The folder holding compiled entries, None when the cache is off.

    ``cache``: the ``compile`` argument (None: the environment decides;
    False: off; True: on; a path: that directory)."""
    if cache is False:
        return None
    if cache is not None and cache is not True:
        return Path(cache) / SUBDIR
    if cache is None and os.environ.get("GRADIR_CACHE", "1").strip().lower() in _OFF:
        return None
    root = os.environ.get("GRADIR_CACHE_DIR")
    if root is not None and not root.strip():
        return None if cache is None else default_dir() / SUBDIR
    return (Path(root) if root else default_dir()) / SUBDIR


# --- the key -------------------------------------------------------------------

_FINGERPRINT: str | None = None


def _fingerprint() -> str:
    """gradir's code, MLIR's and LLVM's versions (once per process)."""
    global _FINGERPRINT
    if _FINGERPRINT is not None:
        return _FINGERPRINT
    from .. import _compat
    from ..ir import DIALECT_FILES
    from .toolchain import runtime_library_dir
    h = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    files = sorted(p for p in package.rglob("*")
                   if p.suffix in (".py", ".mlir", ".in") and "__pycache__" not in p.parts)
    for path in [*files, *map(Path, DIALECT_FILES)]:
        try:
            data = path.read_bytes()
        except OSError:
            data = b"?"
        h.update(f"{path.name}:{len(data)}:".encode())
        h.update(data)
    # MLIR's and LLVM's builds: the shared libraries that lower and compile
    # (name, size, mtime: a reinstall or another version changes them;
    # cheaper than importlib.metadata, ~30 ms).
    site = runtime_library_dir().parent.parent          # .../site-packages
    h.update(_compat.MLIR_VERSION.encode())
    for lib in sorted([*(site / "mlir" / "_mlir_libs").glob("*.so"),
                       *(site / "llvm" / "lib").glob("libLLVM*.so*")]):
        try:
            st = lib.stat()
        except OSError:
            continue
        h.update(f"{lib.name}:{st.st_size}:{st.st_mtime_ns};".encode())
    _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


def cache_key(module_text: str, options, functions=None, extra: dict | None = None) -> str:
    """SHA-256 (hex) of everything the compiled code depends on; ``extra``:
    what else a target's code depends on (target "cuda": the binary
    format, ``sm_count``, the ptxas version, the CUDA runtime; ``cuda_cache``)."""
    from ..conversion.cpu.host import resolve
    target = resolve(options.cpu) if options.target == "cpu" else None
    h = hashlib.sha256()
    h.update(json.dumps({
        "format": FORMAT,
        "code": _fingerprint(),
        "options": {k: list(v) if isinstance(v, tuple) else v
                    for k, v in dataclasses.asdict(options).items()},
        "functions": sorted(functions) if functions is not None else None,
        "cpu": repr(target),
        **({"switches": switches} if (switches := _switches()) else {}),
        **({"target": extra} if extra else {}),
    }, sort_keys=True, default=str).encode())
    h.update(b"\0")
    h.update(module_text.encode())
    return h.hexdigest()


# The packages whose module constants steer the lowering (``_switches``).
_SWITCH_PACKAGES = ("gradir.conversion.", "gradir.transforms.", "gradir.autodiff.",
                    "gradir.simplify.")
_SIMPLE = (bool, int, float, str, type(None))
_ASSIGNED = re.compile(r"^([A-Z][A-Z0-9_]*)\s*(?::[^=\n]*)?=\s*([^\n]+)$", re.M)
_source_values: dict[str, dict] = {}
_MAX_LINES = 12          # lines an assignment's value may continue over


def _simple(value) -> bool:
    if isinstance(value, (tuple, list, frozenset)):
        return all(_simple(v) for v in value)
    return isinstance(value, _SIMPLE)


def _constant(node):
    """The value of a constant expression (literals, tuples, unary and
    binary arithmetic of them: ``1 << 17``); ValueError otherwise."""
    import ast
    import operator
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv, ast.Pow: operator.pow,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Mod: operator.mod}
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        return ops[type(node.op)](_constant(node.left), _constant(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_constant(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_constant(e) for e in node.elts)
    if isinstance(node, ast.Constant):
        return node.value
    raise ValueError("not a constant")


def _assigned(module) -> dict:
    """``module``'s one-line upper-case constant assignments, as its source
    file gives them (read once per module and process)."""
    name = module.__name__
    if name not in _source_values:
        import ast
        values = {}
        try:
            text = Path(module.__file__).read_text()
        except (OSError, TypeError):
            text = ""
        for m in _ASSIGNED.finditer(text):
            # a value over several lines (a tuple of tuples: the GEMM tiles):
            # the next lines joined while its brackets are open
            lines = [m.group(2)]
            more = iter(text[m.end():].split("\n", _MAX_LINES + 1)[1:_MAX_LINES + 1])
            while True:
                source = "\n".join(line.split("  #")[0].strip() for line in lines)
                try:
                    values[m.group(1)] = _constant(ast.parse(source, mode="eval").body)
                except SyntaxError:
                    opened = sum(map(source.count, "([{")) - sum(map(source.count, ")]}"))
                    line = next(more, None) if opened > 0 else None
                    if line is not None:
                        lines.append(line)
                        continue
                except (ValueError, TypeError, ArithmeticError):
                    pass
                break
        _source_values[name] = values
    return _source_values[name]


def _switches() -> list:
    """(module, name, value) of each lowering switch (``_SWITCH_PACKAGES``'
    upper-case module constants of simple values) that differs from its
    source's assignment, in imported modules (one not imported has its
    source's values)."""
    import sys
    changed = []
    for mod_name, module in sorted(sys.modules.items()):
        if module is None or not mod_name.startswith(_SWITCH_PACKAGES):
            continue
        source = _assigned(module)
        for var, default in source.items():
            value = getattr(module, var, default)
            if _simple(value) and (tuple(value) if isinstance(value, list) else value) != default:
                changed.append((mod_name, var, repr(value)))
    return changed


# --- reading --------------------------------------------------------------------

def _entry(directory: Path, key: str) -> Path:
    return directory / f"{key}.so"


def _digest(data: bytes, key: str) -> bytes:
    return hashlib.sha256(data + b"\0" + key.encode()).hexdigest().encode()


def verify(path: Path, key: str) -> str | None:
    """Why the entry cannot be used for ``key`` (None: it is whole and its own)."""
    return _problem(path.read_bytes(), key)


def _problem(data: bytes, key: str) -> str | None:
    if len(data) <= _TRAILER or data[-_TRAILER:-128] != MAGIC:
        return "is truncated or corrupt (no trailer)"
    stored_key = data[-128:-64].decode("ascii", "replace")
    if _digest(data[:-_TRAILER], stored_key) != data[-64:]:
        return "is truncated or corrupt (its digest does not match)"
    if stored_key != key:
        return (f"was compiled from another program (its key is {stored_key[:12]}..., "
                f"not {key[:12]}...)")
    return None


def library_bytes(path: Path, key: str) -> bytes:
    """The library the entry at ``path`` holds (its trailer cut off);
    ``LibraryError`` when it is not whole or not ``key``'s."""
    from .errors import LibraryError
    data = path.read_bytes()
    why = _problem(data, key)
    if why is not None:
        raise LibraryError(f"{path} {why}")
    return data[:-_TRAILER]


# Runtime libraries checked by this process: path -> (size, mtime_ns) when found whole.
_checked_libraries: dict[str, tuple[int, int]] = {}


def _record(lib: Path) -> Path:
    return lib.with_name(lib.name + ".sha256")


def _check_runtime_libraries(directory: Path) -> bool:
    """True if every runtime library beside the entries matches its
    ``.sha256`` record.  A lookup that gets False is a miss: the entry is not
    ``dlopen``ed (a truncated library raises SIGBUS there) and the write after
    the compile replaces the library (``_copy_runtime_libraries``).  Nothing
    is deleted here, so a reader racing a writer (a library renamed into
    place before its record) costs one recompile, not another process's
    library."""
    whole = True
    for lib in directory.glob("lib*.so"):
        try:
            st = lib.stat()
            if _checked_libraries.get(str(lib)) == (st.st_size, st.st_mtime_ns):
                continue
            try:
                want = _record(lib).read_bytes().strip()
            except FileNotFoundError:
                want = None                     # written by an older gradir: rewritten silently
            ok = want is not None and hashlib.sha256(lib.read_bytes()).hexdigest().encode() == want
        except OSError:
            whole = False
            continue
        if ok:
            _checked_libraries[str(lib)] = (st.st_size, st.st_mtime_ns)
            continue
        whole = False
        if want is not None:
            stats.corrupt += 1
            _warn(f"gradir compile cache: the runtime library {lib} does not match its "
                  "record (truncated or edited); recompiling, the next write replaces it")
    return whole


def _discard(path: Path, why: str) -> None:
    stats.corrupt += 1
    _warn(f"gradir compile cache: {path} {why}; removed, recompiling")
    try:
        path.unlink()
    except OSError:
        pass


def discard_entry(directory: Path, key: str, why: str) -> None:
    """Deletes the entry of ``key`` (with a CacheWarning saying ``why``); the
    caller compiles and stores it anew."""
    _discard(_entry(directory, key), why)
    stats.hits -= 1
    stats.misses += 1


def lookup(directory: Path, key: str, reader=None):
    """The cached ``Library`` for ``key``, or None (a miss).  ``reader``:
    what opens a whole entry instead of ``gradir.runtime.load`` (a CUDA
    entry is read, not loaded: ``cuda_cache``); its ``LibraryError`` or
    ``OSError`` discards the entry."""
    from .loader import LibraryError, load
    from .target_check import TargetMismatchError
    reader = reader or load
    path = _entry(directory, key)
    try:
        if not path.is_file():
            stats.misses += 1
            return None
        why = verify(path, key)
        libraries_whole = why is not None or _check_runtime_libraries(directory)
    except FileNotFoundError:               # evicted by another process meanwhile
        stats.misses += 1
        return None
    except OSError as err:
        stats.errors += 1
        stats.misses += 1
        _warn(f"gradir compile cache: cannot read {path}: {err.strerror or err}")
        return None
    if why is not None:
        _discard(path, why)
        stats.misses += 1
        return None
    if not libraries_whole:                 # the entry is rewritten with its libraries
        stats.misses += 1
        return None
    try:
        lib = reader(path)
    except FileNotFoundError:
        stats.misses += 1
        return None
    except TargetMismatchError as err:      # the key names the CPU: should not happen
        _discard(path, f"does not fit this CPU ({err})")
        stats.misses += 1
        return None
    except (LibraryError, OSError) as err:
        _discard(path, f"was refused by the loader ({err})")
        stats.misses += 1
        return None
    try:
        os.utime(path)                      # least-recently-used order for the cap
    except OSError:
        pass
    stats.hits += 1
    return lib


# --- writing --------------------------------------------------------------------

_pending: list[threading.Thread] = []
_lock = threading.Lock()


def store(directory: Path, key: str, exe, engine) -> None:
    """Writes ``exe`` (compiled by ``engine``, a PIC ExecutionEngine whose
    functions were looked up, or a list of them: a split executable's
    parts) as the entry ``key``.  The object files are dumped now; linking,
    the trailer and the rename run in a thread."""
    from .export import unexportable_names
    if unexportable_names(exe.signatures):
        return      # no library can hold it (each process rewrote and refused the entry)
    work = work_folder(directory)
    if work is None:
        return
    try:
        engines = engine if isinstance(engine, (list, tuple)) else [engine]
        obj = [work / f"module{i}.o" for i in range(len(engines))]
        for e, o in zip(engines, obj):
            e.dump_to_object_file(str(o))
    except Exception as err:  # noqa: BLE001 - a cache write must never fail the compile
        _cleanup(work)
        stats.errors += 1
        _warn(f"gradir compile cache: no object file to cache ({err}); not cached")
        return
    thread = threading.Thread(target=_link, args=(directory, key, exe, obj, work),
                              name=f"gradir-cache-{key[:8]}", daemon=False)
    with _lock:
        _pending.append(thread)
    thread.start()


def work_folder(directory: Path) -> Path | None:
    """A new temporary folder in ``directory`` (created) to build an entry
    in, or None (with a CacheWarning) when the directory cannot be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not os.access(directory, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
        return Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
    except OSError as err:
        stats.errors += 1
        _warn(f"gradir compile cache: cannot write to {directory}: "
              f"{err.strerror or err}; not cached")
        return None


def _cleanup(work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)


def _link(directory: Path, key: str, exe, obj: Path, work: Path) -> None:
    from .export import export_library
    try:
        # This thread and the linker it starts yield to the caller's first run
        # (Linux: a thread's priority is its own, and children inherit it).
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass
    try:
        built = export_library(exe, work / "lib.so", object_file=obj)
        _copy_runtime_libraries(work, directory, exclude="lib.so")
        _write_entry(directory, key, built.read_bytes())
    except Exception as err:  # noqa: BLE001 - a cache write must never fail the compile
        stats.errors += 1
        _warn(f"gradir compile cache: writing the entry for {key[:12]} failed: {err}")
    finally:
        _cleanup(work)
        with _lock:
            if threading.current_thread() in _pending:
                _pending.remove(threading.current_thread())


def _copy_runtime_libraries(folder: Path, directory: Path, exclude: str) -> None:
    """The runtime libraries an entry needs (libomp.so, the kernels'
    library: found through its RUNPATH $ORIGIN) go beside the entries, each
    with its ``.sha256`` record; one already there is replaced unless its
    record matches the library being stored."""
    for lib in folder.glob("lib*.so"):
        if lib.name == exclude:
            continue
        data = lib.read_bytes()
        digest = hashlib.sha256(data).hexdigest().encode()
        target = directory / lib.name
        try:
            if _record(target).read_bytes().strip() == digest and \
                    hashlib.sha256(target.read_bytes()).hexdigest().encode() == digest:
                continue
        except OSError:
            pass
        tag = f"{os.getpid()}.{uuid.uuid4().hex[:8]}"
        tmp = directory / f".{lib.name}.{tag}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, target)
        rec = directory / f".{lib.name}.sha256.{tag}.tmp"
        rec.write_bytes(digest + b"\n")
        os.replace(rec, _record(target))


def _write_entry(directory: Path, key: str, data: bytes) -> None:
    tmp = directory / f".{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.write(MAGIC + key.encode() + _digest(data, key))
    os.replace(tmp, _entry(directory, key))     # atomic: a whole entry or none
    stats.writes += 1
    try:
        _prune(directory.parent if directory.name.startswith(TARGET_PREFIX) else directory)
    except OSError as err:                      # the entry is written: only pruning failed
        stats.errors += 1
        _warn(f"gradir compile cache: pruning {directory} failed: {err.strerror or err}")


def store_library(directory: Path, key: str, library: Path) -> bool:
    """Writes the entry ``key`` from an already linked library (the LLVM
    tools path, ``llvm_tools.build_library``; a CUDA library) and the
    runtime libraries beside it; nothing left to link.  False (with a
    CacheWarning) when it could not be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _copy_runtime_libraries(Path(library).parent, directory, exclude=Path(library).name)
        _write_entry(directory, key, Path(library).read_bytes())
        return True
    except Exception as err:  # noqa: BLE001 - a cache write must never fail the compile
        stats.errors += 1
        _warn(f"gradir compile cache: writing the entry for {key[:12]} failed: {err}")
        return False


def wait() -> None:
    """Joins the writes still in flight (tests; the interpreter does it at exit)."""
    while True:
        with _lock:
            threads = list(_pending)
        if not threads:
            return
        for t in threads:
            t.join()


_DEFAULT_MAX_MB = 1024.0


def _max_bytes() -> float:
    """``GRADIR_CACHE_MAX_MB`` in bytes: a number of MiB, ``inf`` (no cap);
    anything else (not a number, negative, NaN) warns and takes the default."""
    text = os.environ.get("GRADIR_CACHE_MAX_MB", "").strip()
    if not text:
        return _DEFAULT_MAX_MB * (1 << 20)
    try:
        mb = float(text)
    except ValueError:
        mb = float("nan")
    if not mb >= 0:                             # NaN and negatives
        _warn(f"gradir compile cache: GRADIR_CACHE_MAX_MB={text!r} is not a size in MiB "
              f"(a number >= 0, or inf); using {_DEFAULT_MAX_MB:g}")
        return _DEFAULT_MAX_MB * (1 << 20)
    return mb * (1 << 20)


def _folders(directory: Path) -> list[Path]:
    """``directory`` (``compiled/``) and its CUDA entries' folders."""
    return [directory, *sorted(p for p in directory.glob(TARGET_PREFIX + "*") if p.is_dir())]


def _prune(directory: Path) -> None:
    """Deletes least recently used entries (CPU and CUDA ones together)
    until the folder is under the cap, and temporary files that crashed
    writers left behind (older than an hour)."""
    import time
    entries, total, now = [], 0, time.time()
    for path in (p for folder in _folders(directory) for p in folder.iterdir()):
        try:
            st = path.stat()
        except OSError:
            continue
        if path.name.startswith(TARGET_PREFIX):
            continue
        if path.name.startswith("."):
            if now - st.st_mtime > 3600:
                if path.is_dir():
                    _cleanup(path)
                else:
                    path.unlink(missing_ok=True)
            continue
        if path.suffix == ".so" and not path.name.startswith("lib"):   # libomp.so stays
            entries.append((st.st_mtime, st.st_size, path))
            total += st.st_size
    cap = _max_bytes()
    for _, size, path in sorted(entries):
        if total <= cap:
            break
        try:
            path.unlink()
            total -= size
        except OSError:
            pass


def clear(cache=None) -> int:
    """Deletes every compiled entry of the cache directory; returns how many."""
    directory = cache_dir(True if cache is None else cache)
    count = 0
    if directory is None or not directory.is_dir():
        return 0
    for path in (p for folder in _folders(directory) for p in folder.iterdir()):
        if path.suffix == ".so":
            path.unlink(missing_ok=True)
            _record(path).unlink(missing_ok=True)
            # (the runtime libraries stored beside the entries, libomp and
            # the matmul kernels', are no entries)
            count += not path.name.startswith("lib")
    return count


"""Loading an exported gradir library with numpy and ctypes only.

This module must not import ``mlir``: an exported gradient runs where MLIR
is not installed.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from .abi import BOUNDARY_DTYPES, Function, FunctionTable, signatures_from_json
from .elf import STT_FUNC, ElfError, ElfImage, read_elf
from .errors import LibraryError
from .heap import keep_freed_memory
from .target_check import check_record, read_image_target

__all__ = ["Library", "LibraryError", "load", "read_signatures"]

SIGNATURE_SYMBOL = "gradir_signatures"
DIGEST_SYMBOL = "gradir_signatures_sha256"


_MAX_ELEMENTS = 1 << 40


def _valid_tree(tree, n: int, seen: set, where: str) -> None:
    if isinstance(tree, bool) or not isinstance(tree, (int, tuple)):
        raise LibraryError(f"{where}: malformed argument/result tree")
    if isinstance(tree, int):
        if not 0 <= tree < n or tree in seen:
            raise LibraryError(f"{where}: tree index {tree} out of range or repeated")
        seen.add(tree)
        return
    for t in tree:
        _valid_tree(t, n, seen, where)


def _valid_specs(specs, where: str) -> None:
    for spec in specs:
        if spec.dtype not in BOUNDARY_DTYPES.values():
            raise LibraryError(f"{where}: unsupported dtype {spec.dtype!r}")
        count = 1
        for d in spec.shape:
            if isinstance(d, bool) or not isinstance(d, int) or d < 0:
                raise LibraryError(f"{where}: bad shape {list(spec.shape)!r}")
            count *= d
        if count > _MAX_ELEMENTS:
            raise LibraryError(f"{where}: shape {list(spec.shape)} is too large")


def read_signatures(image: ElfImage) -> dict:
    """The library's signatures, checked against its symbols before any of
    its code runs: the metadata is a NUL-terminated string inside the file,
    matches its SHA-256 digest (so an edited shape or dtype is caught), names
    only supported dtypes and sane shapes, and every function it lists is a
    defined function in executable code."""
    name = image.path.name

    def blob(symbol: str) -> bytes:
        sym = image.symbols.get(symbol)
        if sym is None or not sym.defined or sym.size == 0:
            raise LibraryError(f"{name} is not a gradir library (no '{symbol}' symbol)")
        where = image.file_range(sym.value, sym.size)
        if where is None:
            raise LibraryError(f"{name}: symbol '{symbol}' lies outside the file")
        raw = image.data[where[0]:where[1]]
        if not raw.endswith(b"\0"):
            raise LibraryError(f"{name}: symbol '{symbol}' is not a NUL-terminated string")
        return raw[:-1]

    text = blob(SIGNATURE_SYMBOL)
    digest = blob(DIGEST_SYMBOL).decode("ascii", "replace")
    if hashlib.sha256(text).hexdigest() != digest:
        raise LibraryError(f"{name}: signature metadata does not match its digest "
                           "(the file was modified or is corrupt)")
    try:
        sigs = signatures_from_json(text.decode("utf-8"))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
        raise LibraryError(f"{name}: malformed signature metadata: {err}") from None
    for fname, sig in sigs.items():
        where = f"{name}: @{fname}"
        if not isinstance(fname, str) or not fname.replace("_", "a").isalnum():
            raise LibraryError(f"{name}: bad function name {fname!r}")
        _valid_specs(sig.inputs, where)
        _valid_specs(sig.outputs, where)
        for tree, specs in ((sig.input_tree, sig.inputs), (sig.output_tree, sig.outputs)):
            seen: set = set()
            _valid_tree(tuple(tree), len(specs), seen, where)
            if len(seen) != len(specs):
                raise LibraryError(f"{where}: tree does not cover every tensor")
        sym = image.symbols.get("_mlir_ciface_" + fname)
        if sym is None or not sym.defined or sym.kind != STT_FUNC \
                or not image.executable(sym.value):
            raise LibraryError(f"{where}: no function '_mlir_ciface_{fname}' in its code")
    return sigs


def _fresh_copy(path: Path) -> tuple[Path, Path | None]:
    """A copy of ``path`` under a unique name, so ``dlopen`` (which caches by
    path) loads a re-exported library anew.  Next to the original when the
    directory is writable (``$ORIGIN`` then finds the runtime libraries
    beside it), else in a private directory with links to them."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".so", dir=path.parent)
        os.close(fd)
        shutil.copyfile(path, tmp)
        return Path(tmp), None
    except OSError:
        pass
    directory = Path(tempfile.mkdtemp(prefix="gradir-load-"))
    for sibling in path.parent.glob("lib*.so*"):
        if sibling != path:
            (directory / sibling.name).symlink_to(sibling)
    tmp = directory / f"{path.stem}-{os.getpid()}.so"
    shutil.copyfile(path, tmp)
    return tmp, directory


class Library(FunctionTable):
    """The functions of an exported library: ``lib["main_adjoint"](x, w)``."""

    def _where(self) -> str:
        return f"{self.path.name} has"

    def __init__(self, path: Path):
        self.path = path
        try:
            image = read_elf(path)
        except ElfError as err:
            raise LibraryError(f"{path}: {err}") from None
        except OSError as err:
            raise LibraryError(f"cannot read {path}: {err.strerror or err}") from None
        self.signatures = read_signatures(image)
        check_record(read_image_target(image), path)     # issue 14: before dlopen
        from .gomp import preload_for    # issue 43: on PyTorch's libgomp, where it runs
        preload_for(path)
        copy, directory = _fresh_copy(path)
        try:
            self._dll = ctypes.CDLL(str(copy), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        except OSError as err:
            raise LibraryError(f"cannot load gradir library {path}: {err}") from None
        except UnicodeDecodeError as err:     # dlerror's message is not UTF-8 (a bad DT_NEEDED)
            raise LibraryError(f"cannot load gradir library {path}: the loader's message "
                               f"is not text ({err.object[:200]!r})") from None
        finally:
            copy.unlink(missing_ok=True)      # the mapping stays; the name goes
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)
        from .openmp import configure    # issue 14: libomp's defaults (multi-threaded code)
        configure(self._dll)
        from .check_hook import install_library
        install_library(self._dll)      # the code's run-time checks report to Python
        self._functions = {}
        for name, sig in self.signatures.items():
            try:
                cfn = getattr(self._dll, "_mlir_ciface_" + name)
            except AttributeError:      # listed by the ELF symbol table, not found by dlsym
                raise LibraryError(f"{path} does not define _mlir_ciface_{name}, which its "
                                   f"signatures list (a damaged library)") from None
            cfn.restype = None
            n = len(sig.inputs) + len(sig.outputs)
            cfn.argtypes = [ctypes.c_void_p] * n
            self._functions[name] = Function(sig, _direct_caller(cfn), keepalive=self._dll)


def _direct_caller(cfn):
    def call(desc_ptrs):
        cfn(*desc_ptrs)
    return call


def load(path) -> Library:
    """Loads a library written by ``Executable.export_library``.

    Loading a library runs its code (``dlopen`` runs its constructors):
    load only files you trust.  Before that, ``load`` checks the file (a
    complete ELF library whose signature metadata matches its digest and its
    functions) and raises ``LibraryError`` (an ``OSError``) otherwise.  Each
    call loads the file anew (through a uniquely named copy), so a library
    re-exported to the same path is seen."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load expects a path, not {type(path).__name__}")
    path = Path(path).resolve()
    if not path.exists():
        raise FileNotFoundError(f"no gradir library at {path}")
    keep_freed_memory()
    return Library(path)

"""Loading an exported gradir library with numpy and ctypes only.

This module must not import ``mlir``: an exported gradient runs where MLIR
is not installed.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from .abi import Function, FunctionTable, signatures_from_json

__all__ = ["Library", "load"]

SIGNATURE_SYMBOL = "gradir_signatures"


def _check_elf(path: Path) -> None:
    """Refuses a file that is not a complete 64-bit ELF shared object:
    dlopen maps a truncated one and the process dies (SIGBUS) on first use."""
    import struct
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            raise OSError(f"{path} is not a 64-bit little-endian ELF shared library")
        phoff, shoff = struct.unpack_from("<QQ", head, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 54)
        if phoff + phnum * phentsize > size or shoff + shnum * shentsize > size:
            raise OSError(f"{path} is truncated or corrupt (its headers point past its "
                          f"{size} bytes)")
        f.seek(phoff)
        table = f.read(phnum * phentsize)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type == 1 and p_offset + p_filesz > size:      # PT_LOAD
            raise OSError(f"{path} is truncated or corrupt (a segment ends past its "
                          f"{size} bytes)")


class Library(FunctionTable):
    """The functions of an exported library: ``lib["main_adjoint"](x, w)``."""

    def _where(self) -> str:
        return f"{self.path.name} has"

    def __init__(self, path: Path):
        self.path = path
        _check_elf(path)
        try:
            self._dll = ctypes.CDLL(str(path), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        except OSError as err:
            raise OSError(f"cannot load gradir library {path}: {err}") from None
        from .target_check import check_library_target   # issue 14: CPU features
        check_library_target(self._dll, path)
        try:
            start = ctypes.c_char.in_dll(self._dll, SIGNATURE_SYMBOL)
        except ValueError:
            raise OSError(f"{path} is not a gradir library (no '{SIGNATURE_SYMBOL}' "
                          "symbol)") from None
        # The symbol is a NUL-terminated char array, not a pointer.
        raw = ctypes.string_at(ctypes.addressof(start))
        self.signatures = signatures_from_json(raw.decode())
        self._functions = {}
        for name, sig in self.signatures.items():
            cfn = getattr(self._dll, "_mlir_ciface_" + name)
            cfn.restype = None
            n = len(sig.inputs) + len(sig.outputs)
            cfn.argtypes = [ctypes.c_void_p] * n
            self._functions[name] = Function(sig, _direct_caller(cfn), keepalive=self._dll)


def _direct_caller(cfn):
    def call(desc_ptrs):
        cfn(*desc_ptrs)
    return call


def load(path) -> Library:
    """Loads a library written by ``Executable.export_library``."""
    path = Path(path).resolve()
    if not path.exists():
        raise FileNotFoundError(f"no gradir library at {path}")
    return Library(path)

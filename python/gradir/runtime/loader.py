"""Loading an exported gradir library with numpy and ctypes only.

This module must not import ``mlir``: an exported gradient runs where MLIR
is not installed.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from .abi import Function, signatures_from_json

__all__ = ["Library", "load"]

SIGNATURE_SYMBOL = "gradir_signatures"


class Library:
    """The functions of an exported library: ``lib["main_adjoint"](x, w)``."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self._dll = ctypes.CDLL(str(path), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        except OSError as err:
            raise OSError(f"cannot load gradir library {path}: {err}") from None
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

    def __getitem__(self, name: str) -> Function:
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"no function @{name} in {self.path.name}; it has: "
                           f"{', '.join(sorted(self._functions))}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._functions

    @property
    def functions(self) -> list[str]:
        return list(self._functions)


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

"""Running compiled gradir code from Python.

  gradir.compile(module, target="cpu") -> Executable  (needs MLIR; JIT)
  Executable.export_library("model.so")               (AOT, needs a C linker)
  gradir.runtime.load("model.so") -> Library          (numpy + ctypes only)

Importing this package (or ``load``) never imports ``mlir``.
"""

from __future__ import annotations

from .abi import ArgumentError, Function, Signature, TensorSpec
from .errors import TargetMismatchError
from .loader import Library, LibraryError, load

__all__ = ["ArgumentError", "Function", "Library", "LibraryError", "Signature", "TargetMismatchError",
           "TensorSpec", "compile",
           "load"]


def compile(module, target: str = "cpu", **options):
    """See ``gradir.runtime.jit.compile``."""
    from .jit import compile as _compile
    return _compile(module, target, **options)

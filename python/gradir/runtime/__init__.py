"""Running compiled gradir code from Python.

  gradir.compile(module, target="cpu") -> Executable  (needs MLIR; JIT)
  Executable.export_library("model.so")               (AOT, needs a C linker)
  gradir.runtime.load("model.so") -> Library          (numpy + ctypes only)

A call whose run-time check fails (an ``scf.for`` step computed from the
inputs that is not positive) raises ``ExecutionError`` naming the function
and the op's location.

Importing this package (or ``load``) never imports ``mlir``.
"""

from __future__ import annotations

from .abi import ArgumentError, Function, Signature, TensorSpec
from .errors import ExecutionError, TargetMismatchError
from .loader import Library, LibraryError, load

__all__ = ["ArgumentError", "ExecutionError", "Function", "Library", "LibraryError", "Signature",
           "TargetMismatchError", "TensorSpec", "compile", "load"]


def compile(module, target: str = "cpu", **options):
    """See ``gradir.runtime.jit.compile``."""
    from .jit import compile as _compile
    return _compile(module, target, **options)

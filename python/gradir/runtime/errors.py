"""The exceptions ``gradir.runtime.load`` raises for a file it refuses.

Imports nothing (the loader and the CPU-target check both raise them, and
neither may import ``mlir``)."""

from __future__ import annotations

__all__ = ["LibraryError", "TargetMismatchError"]


class LibraryError(OSError):
    """``load`` refuses the file: not a complete gradir library, its
    signature metadata does not match its code, or it was built for a CPU
    this machine is not.  The only exception ``load`` raises for a bad file
    (``FileNotFoundError`` when there is none)."""


class TargetMismatchError(LibraryError):
    """The library needs CPU features (or an architecture) this machine
    lacks; raised before any of its code is loaded."""

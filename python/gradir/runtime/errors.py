"""The exceptions ``gradir.runtime.load`` raises for a file it refuses, and
the one a compiled function raises when a run-time check of its code fails.

Imports nothing (the loader and the CPU-target check both raise them, and
neither may import ``mlir``)."""

from __future__ import annotations

__all__ = ["ExecutionError", "LibraryError", "TargetMismatchError"]


class LibraryError(OSError):
    """``load`` refuses the file: not a complete gradir library, its
    signature metadata does not match its code, or it was built for a CPU
    this machine is not.  The only exception ``load`` raises for a bad file
    (``FileNotFoundError`` when there is none)."""


class TargetMismatchError(LibraryError):
    """The library needs CPU features (or an architecture) this machine
    lacks; raised before any of its code is loaded."""


class ExecutionError(RuntimeError):
    """A run-time check of the compiled code failed (an ``scf.for`` step
    computed from the inputs was not positive); the call returns nothing.
    ``function``: the function called; ``location``: ``file:line:col`` of
    the op that failed; ``message``: what failed, in the words of
    ``rlx-verify`` and the interpreter."""

    def __init__(self, function: str, report: str):
        at = report.rfind(": '")        # the message starts with the op's quoted name
        location, message = (report[:at], report[at + 2:]) if at > 0 else ("", report)
        self.function, self.location, self.message = function, location, message
        super().__init__(f"@{function}: {report}")

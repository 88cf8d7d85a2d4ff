"""The receiving end of the compiled code's run-time checks
(``conversion/cpu/runtime_checks.py``), with ctypes only (no MLIR).

A failing check calls ``HOOK_ADDRESS`` (a ctypes callback) with its
message, ``"file:line:col: 'scf.for' op step must be positive, got "``,
and the offending value; the callback keeps the first failure of the
calling thread, and ``abi.Function`` raises it as ``ExecutionError`` when
the call returns (``take``).  The compiled code goes on, safely (the loop
runs no trip), to its end: the results of that call are not returned.

Each compiled module holds the hook's address in a global of its own, set
once: ``install_packed`` through the setter's packed wrapper in an
ExecutionEngine, ``install_library`` in a loaded library.
"""

from __future__ import annotations

import ctypes
import threading

__all__ = ["HOOK_SYMBOL", "HOOK_ADDRESS", "install_library", "install_packed", "take"]

HOOK_SYMBOL = "gradir_check_hook"     # runtime_checks.HOOK


class _Failed(threading.local):
    first = None        # the default as a class attribute: reading it is 0.1 us, where
                        # getattr(local, "first", None) raising inside took 0.6 us a call


_failed = _Failed()


@ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int64)
def _report(message: bytes, value: int) -> None:
    if _failed.first is None:
        _failed.first = (message or b"").decode("utf-8", "replace") + str(value)


HOOK_ADDRESS = ctypes.cast(_report, ctypes.c_void_p).value


def take() -> str | None:
    """The first check that failed in this thread since the last ``take``
    (its message with the value), or None."""
    first = _failed.first
    if first is not None:
        _failed.first = None
    return first


def install_packed(setter: int) -> None:
    """Calls ExecutionEngine's packed wrapper ``setter`` (the address of
    ``_mlir_gradir_check_set_hook_<tag>``) with the hook's address."""
    hook = ctypes.c_void_p(HOOK_ADDRESS)
    args = (ctypes.c_void_p * 1)(ctypes.addressof(hook))
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(setter)(args)


def install_library(dll: ctypes.CDLL) -> None:
    """Sets the hook of a loaded library whose code has run-time checks
    (one global for all its parts); a library without any has no such
    symbol."""
    try:
        slot = ctypes.c_void_p.in_dll(dll, HOOK_SYMBOL)
    except ValueError:
        return
    slot.value = HOOK_ADDRESS

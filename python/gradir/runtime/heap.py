"""The process heap under compiled code: keep freed buffers for reuse.

Compiled functions allocate their intermediate tensors with ``malloc`` and
free each after its last use (``rlx-early-dealloc``).  With glibc's
defaults, buffers of a few hundred KiB and more are ``mmap``-ed per call,
or sit at the top of the heap that ``free`` trims back to the system, so
every call faults their pages in again: measured on a LeNet-5 gradient
step (batch 64, AMD EPYC Zen 5, one thread), about 2,260 page faults per
call and a third of its time in the kernel; with the heap kept, almost none
after the first call.
``keep_freed_memory()`` raises glibc's mmap and trim thresholds once per
process (``mallopt``), as allocator-owning runtimes do with their own pools;
the price is that the process keeps its peak heap.  It does nothing
elsewhere than glibc, or with ``GRADIR_KEEP_HEAP=0`` in the environment.

This module must not import ``mlir`` (exported libraries run without it).
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["keep_freed_memory", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Allocations up to this size come from the heap (glibc's own dynamic
# threshold stops at 32 MiB on 64-bit; larger buffers amortize a fault per page).
MMAP_THRESHOLD = 256 << 20
# Free memory kept at the top of the heap before trimming.
TRIM_THRESHOLD = 1 << 30

_state: list[bool] = []


def keep_freed_memory() -> bool:
    """Raises glibc's thresholds (once per process); True when they are set."""
    if not _state:
        _state.append(_set_thresholds())
    return _state[0]


def _set_thresholds() -> bool:
    if os.environ.get("GRADIR_KEEP_HEAP", "1") == "0":
        return False
    try:
        # The process's own symbols (libc among them): ctypes.util.find_library
        # would run ldconfig in a subprocess (2.5 ms of every first compile).
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version                   # glibc only
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
                and mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))

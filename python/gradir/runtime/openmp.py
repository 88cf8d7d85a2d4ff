"""How gradir sets up LLVM's OpenMP runtime (libomp.so) for its parallel loops.

Imports neither mlir nor the rest of gradir: the loader of exported libraries
uses it.

libomp's worker threads spin for ``KMP_BLOCKTIME`` (200 ms by default) after
each parallel region before they sleep.  On a machine whose cores are busy
with other processes, a spinning worker uses up its time slice and is then
descheduled, and the next region waits for it for a whole slice (~10 ms),
while a sleeping worker that is woken gets a core at once
(``bench/cpu_runtimes.py``: 2K-element regions 12 ms with the default, 24 us
with a block time of 0, at load 8 on 2 cores).  gradir therefore makes 0 the
default (``kmp_set_defaults`` before the first region) unless
``KMP_BLOCKTIME`` is in the environment, e.g. ``KMP_BLOCKTIME=200`` (libomp's
default) on an otherwise idle machine, where spinning saves the wake-up of
each region.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["DEFAULTS", "configure"]

DEFAULTS = b"KMP_BLOCKTIME=0"


def configure(lib: ctypes.CDLL) -> None:
    """Gives the libomp that ``lib`` (libomp itself, or a library linked
    against it) resolves to gradir's defaults, unless the environment sets
    them (libomp's ``kmp_set_defaults`` would override the environment)."""
    if "KMP_BLOCKTIME" in os.environ:
        return
    try:
        fn = lib.kmp_set_defaults
    except AttributeError:
        return
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = None
    fn(DEFAULTS)

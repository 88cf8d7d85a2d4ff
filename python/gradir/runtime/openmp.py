"""How gradir sets up LLVM's OpenMP runtime (libomp.so) for its parallel loops.

Imports neither mlir nor the rest of gradir: the loader of exported libraries
uses it.

libomp's worker threads spin for ``KMP_BLOCKTIME`` (200 ms by default) after
each parallel region before they sleep.  On a machine whose cores are busy
with other processes, a spinning worker uses up its time slice and is then
descheduled, and the next region waits for it for a whole slice (~10 ms),
while a sleeping worker that is woken gets a core at once
(``bench/cpu_runtimes.py``: 2K-element regions 12 ms with the default, 24 us
with a block time of 0, at load 8 on 2 cores).  gradir makes that its
default (``kmp_set_defaults`` before the first region: ``KMP_BLOCKTIME=0``)
unless the environment sets it, e.g. ``KMP_BLOCKTIME=200`` (libomp's
default) on an otherwise idle machine, where spinning saves the wake-up of
each region.  ``OMP_DYNAMIC`` keeps libomp's default (false: every region
gets the compiled thread count).  Turning it on is not a good default: its
load-balance mode counts the system's running threads, including the
calling process's own, so on an idle 2-core machine it ran GEMM 1024^3 on
one thread (12.1 ms at threads=2 against 12.7 at threads=1; with it off
6.6 ms; load 0.65).  Results do not depend on the team size (each iteration
computes its own elements in the sequential order), so it changes speed only.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["DEFAULTS", "configure"]

DEFAULTS = {"KMP_BLOCKTIME": "0"}


def configure(lib: ctypes.CDLL) -> None:
    """Gives the libomp that ``lib`` (libomp itself, or a library linked
    against it) resolves to gradir's defaults, unless the environment sets
    them (libomp's ``kmp_set_defaults`` would override the environment)."""
    settings = "|".join(f"{k}={v}" for k, v in DEFAULTS.items() if k not in os.environ)
    if not settings:
        return
    try:
        fn = lib.kmp_set_defaults
    except AttributeError:
        return
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = None
    fn(settings.encode())

"""How gradir sets up LLVM's OpenMP runtime (libomp.so) for its parallel loops.

Imports neither mlir nor the rest of gradir: the loader of exported libraries
uses it.

libomp's worker threads spin for ``KMP_BLOCKTIME`` (200 ms by default) after
each parallel region before they sleep.  On a machine whose cores are busy
with other processes, a spinning worker uses up its time slice and is then
descheduled, and the next region waits for it for a whole slice (~10 ms),
while a sleeping worker that is woken gets a core at once
(``bench/cpu_runtimes.py``: 2K-element regions 12 ms with the default, 24 us
with a block time of 0, at load 8 on 2 cores).  And with ``OMP_DYNAMIC``
libomp gives a region fewer threads than asked when the machine's cores are
busy (its load-balance mode counts the running threads of the system, once
a second): a region then runs on the free cores only instead of waiting for
a busy one (bench/cpu.py's same-process comparison at load ~9: MLP 64 step
2 threads / 1 thread 1.04x with it, 0.75-0.84x without).  Results do not
depend on the team size (each iteration computes its own elements in the
sequential order), so this changes speed only.  gradir makes both its
defaults (``kmp_set_defaults`` before the first region: ``KMP_BLOCKTIME=0``,
``OMP_DYNAMIC=true``), each unless the environment sets it, e.g.
``KMP_BLOCKTIME=200`` (libomp's default) on an otherwise idle machine, where
spinning saves the wake-up of each region, or ``OMP_DYNAMIC=false`` to get
exactly the compiled thread count.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["DEFAULTS", "configure"]

DEFAULTS = {"KMP_BLOCKTIME": "0", "OMP_DYNAMIC": "true"}


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

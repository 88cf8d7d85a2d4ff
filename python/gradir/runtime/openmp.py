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

Hot workers while the machine is idle (issue 14, 2-core targets): a
sleeping worker costs each parallel region its wake-up, and the master's
at the join: ~50 us per region on this VM (MLP 784-512-512-10 step, batch
64, 6 regions: 0.90 ms at a block time of 0, 0.60 ms with workers spinning
between regions; batch 256 2.39 -> 2.0 ms; LeNet-5 2.13 -> 1.96 ms; idle
2-core EPYC, ``kmp_set_blocktime`` interleaved in one process).  But any
nonzero block time (50 us as well as 200 ms) is a disaster as soon as
another process wants a core: at load ~6 (four busy processes) the MLP step
took 12 ms at best, 52 ms median (1.1 / 1.9 ms at 0), a spinning worker
being runnable but not running when its region starts.  So the block time
follows the machine: ``before_call`` (every call of a compiled function
from Python, ``abi.Function``) sets the calling thread's block time to
``HOT_BLOCKTIME_MS`` while the other processes used less than
``IDLE_OTHERS`` of a core over the last ``SAMPLE_S`` seconds (and until
``BUSY_SAMPLES`` samples in a row say otherwise) (``/proc/stat``
busy time minus this process's own CPU time and its finished children's,
so our spinning workers and the opt/llc processes of a compile just before
do not count), and to 0 otherwise.  ``KMP_BLOCKTIME`` in the environment turns
this off (its value holds); so does a missing ``/proc/stat``.  A library
loaded from C keeps the block time of 0.  The compiled code reads the
block time too: loops too short to pay two wake-ups run on the threads
only while it is nonzero (``rlx_parallel_loops.PIPELINE_HOT_MIN_WORK``).
"""

from __future__ import annotations

import ctypes
import os
import time

__all__ = ["DEFAULTS", "HOT_BLOCKTIME_MS", "IDLE_OTHERS", "SAMPLE_S", "configure",
           "before_call", "blocktime_ms"]

DEFAULTS = {"KMP_BLOCKTIME": "0"}

# Block time while the machine is otherwise idle: long enough for the gaps
# between the regions of a call and between calls in a loop (50 us to 5 ms
# measured the same), short enough to stop spinning soon after a call.
HOT_BLOCKTIME_MS = 1
# Cores the other processes may use (average over the last sample) with
# workers still spinning: half a core, whatever the machine's size
# (conservative on machines with more cores than gradir's threads).  The
# estimate counts clock ticks (/proc/stat, os.times: 10 ms) over ~0.1 s on
# two or more CPUs, so it wobbles by +-0.2 core on an idle machine (a
# threshold of 0.2 let that put the workers to sleep for a sample now and
# then: LeNet-5's step at 2 threads 2.08 instead of 1.52 ms); one busy
# process is a whole core (MLP step at 2 threads, one busy loop beside it:
# 1.28 ms spinning, 1.09 ms asleep).
IDLE_OTHERS = 0.5
# Busy samples in a row that put spinning workers to sleep (2: one blip
# does not; a machine that stays busy costs 0.2 s of spinning at most).
BUSY_SAMPLES = 2
# Seconds between two looks at /proc/stat (each costs ~20 us).
SAMPLE_S = 0.1

_adaptive = None


class _Adaptive:
    """The block time ``before_call`` sets, from the CPU time the other
    processes used since the last sample."""

    def __init__(self, lib: ctypes.CDLL):
        self.set = lib.kmp_set_blocktime
        self.set.argtypes = [ctypes.c_int]
        self.set.restype = None
        self.hot = False
        self.busy_samples = 0     # busy samples in a row
        self.last = None          # (time, busy seconds of all CPUs, ours)
        self.next = 0.0

    @staticmethod
    def _busy() -> float | None:
        """CPU seconds all CPUs spent not idle (steal included), or None."""
        try:
            with open("/proc/stat", "rb") as f:
                fields = f.readline().split()
        except OSError:
            return None
        if len(fields) < 5 or fields[0] != b"cpu":
            return None
        ticks = [int(v) for v in fields[1:]]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
        # guest times are already counted in user/nice
        return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def sample(self, now: float, busy: float | None, ours: float) -> bool:
        """Takes a sample (seconds: monotonic time, CPU busy time of the
        machine, CPU time of this process); returns whether workers spin.
        The first sample, and any without ``busy``, say no."""
        if busy is None:
            self.hot = False
            self.busy_samples = 0
        elif self.last is not None and now > self.last[0]:
            others = ((busy - self.last[1]) - (ours - self.last[2])) / (now - self.last[0])
            # one busy sample in a row may be a blip (a daemon waking up, the
            # estimate's tick wobble): the workers go to sleep on the second
            self.busy_samples = self.busy_samples + 1 if others >= IDLE_OTHERS else 0
            if others < IDLE_OTHERS:
                self.hot = True
            elif self.busy_samples >= BUSY_SAMPLES:
                self.hot = False
        self.last = (now, busy, ours) if busy is not None else None
        return self.hot

    def update(self) -> int:
        now = time.monotonic()
        if now >= self.next:
            self.next = now + SAMPLE_S
            t = os.times()
            # our own finished child processes (opt/llc of a compile) are no
            # other process competing for the cores: counted as ours
            self.sample(now, self._busy(),
                        t.user + t.system + t.children_user + t.children_system)
        ms = HOT_BLOCKTIME_MS if self.hot else 0
        self.set(ms)
        return ms


def configure(lib: ctypes.CDLL) -> None:
    """Gives the libomp that ``lib`` (libomp itself, or a library linked
    against it) resolves to gradir's defaults, unless the environment sets
    them (libomp's ``kmp_set_defaults`` would override the environment)."""
    global _adaptive
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
    if "KMP_BLOCKTIME" not in os.environ and _adaptive is None \
            and hasattr(lib, "kmp_set_blocktime"):
        _adaptive = _Adaptive(lib)


def before_call() -> None:
    """Sets the calling thread's libomp block time for the call it is about
    to make (see the module's docstring); nothing before ``configure`` or
    when the environment sets ``KMP_BLOCKTIME``."""
    if _adaptive is not None:
        _adaptive.update()


def blocktime_ms() -> int | None:
    """The block time ``before_call`` last chose (None: it chooses none)."""
    if _adaptive is None:
        return None
    return HOT_BLOCKTIME_MS if _adaptive.hot else 0

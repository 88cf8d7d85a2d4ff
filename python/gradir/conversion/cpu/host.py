"""The CPU a program is compiled for: vector ISA, register file, caches.

``detect_host()`` reads the machine this process runs on (``/proc/cpuinfo``
flags on Linux x86, ``platform.machine()`` for aarch64, cache sizes from
``/sys/devices/system/cpu/cpu0/cache``); ``resolve(cpu)`` turns the ``cpu=``
option of ``gradir.compile`` / ``rlx-lower-to-llvm`` ("host", "x86-64-v3",
"x86-64-v4", "skylake-avx512", ...) into a ``CpuTarget``.  The schedule
(``schedule.py``) derives its register tiles from it, and the LLVM code
generator gets its ``llvm_cpu``/``llvm_features``.

This module imports neither ``mlir`` nor any other part of gradir: the
loader of exported libraries uses it to check that a library's recorded
features are present where it is loaded.

    >>> t = resolve("x86-64-v3")
    >>> t.isa, t.vector_bits, t.vector_registers
    ('avx2', 256, 16)
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field

__all__ = ["CpuTarget", "NAMED_TARGETS", "ISA_FEATURES", "detect_host", "parse_cpuinfo",
           "read_cache_sizes", "resolve", "missing_features", "default_threads",
           "resolve_threads", "max_threads", "LIBOMP_MAX_THREADS"]

# Features (as /proc/cpuinfo spells them) that decide which code LLVM may
# emit; the ones recorded in an exported library and checked by the loader.
_X86_V2 = ("sse3", "ssse3", "sse4_1", "sse4_2", "popcnt", "cx16")
_X86_V3 = _X86_V2 + ("avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "lzcnt", "movbe")
_X86_V4 = _X86_V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
_X86_EXTRA = ("avx512ifma", "avx512vbmi", "avx512_vbmi2", "avx512_vnni", "avx512_bf16",
              "avx512_fp16", "avx512_bitalg", "avx512_vpopcntdq", "avx_vnni", "gfni",
              "vaes", "vpclmulqdq", "adx", "sha_ni")
ISA_FEATURES = _X86_V4 + _X86_EXTRA

# Older names /proc/cpuinfo uses for some of them.
_CPUINFO_ALIAS = {"pni": "sse3", "abm": "lzcnt"}

# /proc/cpuinfo spelling -> LLVM's feature name where they differ.
_LLVM_NAME = {"sse4_1": "sse4.1", "sse4_2": "sse4.2", "bmi1": "bmi", "avx512_vbmi2": "avx512vbmi2",
              "avx512_vnni": "avx512vnni", "avx512_bf16": "avx512bf16",
              "avx512_fp16": "avx512fp16", "avx512_bitalg": "avx512bitalg",
              "avx512_vpopcntdq": "avx512vpopcntdq", "avx_vnni": "avxvnni", "sha_ni": "sha"}


@dataclass(frozen=True)
class CpuTarget:
    """What code generation needs to know about a CPU.

    ``name``: the LLVM CPU name ("x86-64-v3", "skylake-avx512", "generic" ...)
    or "host"; ``features``: ISA features in /proc/cpuinfo spelling (sorted);
    ``vector_bits``: the widest vector register; ``vector_registers``: how many
    of them; ``l1d``/``l2`` cache bytes (0: unknown); ``vendor``: the
    host's ``vendor_id`` ("GenuineIntel", "AuthenticAMD"; "" for a named
    target), for tuning that differs between the two makers' cores."""

    name: str
    arch: str                       # "x86_64" or "aarch64"
    features: tuple[str, ...] = ()
    vector_bits: int = 128
    vector_registers: int = 16
    l1d: int = 32 * 1024
    l2: int = 1024 * 1024
    model: str = field(default="", compare=False)
    vendor: str = ""                # /proc/cpuinfo's vendor_id ("" for named targets)

    @property
    def isa(self) -> str:
        """The widest vector ISA: "avx512", "avx2", "sse", "neon"."""
        if self.arch == "aarch64":
            return "neon"
        if "avx512f" in self.features:
            return "avx512"
        if "avx2" in self.features and "fma" in self.features:
            return "avx2"
        return "sse"

    def lanes(self, bits: int) -> int:
        """Vector lanes of an element of ``bits`` bits."""
        return self.vector_bits // bits

    @property
    def llvm_cpu(self) -> str | None:
        """The ``target-cpu`` given to LLVM; None keeps the JIT's host CPU."""
        return None if self.name == "host" else self.name

    @property
    def llvm_features(self) -> tuple[str, ...]:
        """``target-features`` for LLVM: every known ISA feature, + or -, so
        nothing of the JIT's host feature string leaks into the code."""
        if self.arch != "x86_64" or self.name == "host":
            return ()
        have = set(self.features)
        return tuple(("+" if f in have else "-") + _LLVM_NAME.get(f, f) for f in ISA_FEATURES)

    def describe(self) -> str:
        return (f"{self.model or self.name} ({self.arch}, {self.isa}, {self.vector_bits}-bit "
                f"x {self.vector_registers} registers, L1d {self.l1d // 1024} KiB)")


def _x86(name: str, features: tuple[str, ...]) -> CpuTarget:
    wide = "avx512f" in features
    return CpuTarget(name, "x86_64", tuple(sorted(features)),
                     512 if wide else 256 if "avx" in features else 128, 32 if wide else 16)


NAMED_TARGETS = {
    "x86-64-v2": _x86("x86-64-v2", _X86_V2),
    "x86-64-v3": _x86("x86-64-v3", _X86_V3),
    "haswell": _x86("haswell", _X86_V3),
    "znver2": _x86("znver2", _X86_V3 + ("adx", "sha_ni")),
    "x86-64-v4": _x86("x86-64-v4", _X86_V4),
    "skylake-avx512": _x86("skylake-avx512", _X86_V4 + ("adx",)),
    "znver4": _x86("znver4", _X86_V4 + ("adx", "sha_ni", "avx512ifma", "avx512vbmi",
                                        "avx512_vbmi2", "avx512_vnni", "avx512_bf16",
                                        "avx512_bitalg", "avx512_vpopcntdq", "gfni", "vaes",
                                        "vpclmulqdq")),
    "neoverse-n1": CpuTarget("neoverse-n1", "aarch64", ("asimd", "fp"), 128, 32),
}


def parse_cpuinfo(text: str, machine: str = "x86_64", name: str = "host",
                  caches: tuple[int, int] | None = None) -> CpuTarget:
    """A CpuTarget from the text of /proc/cpuinfo (its first processor) on a
    machine of ``platform.machine()`` ``machine``."""
    flags, model, vendor = [], "", ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("flags", "features") and not flags:
            flags = value.split()
        elif key in ("model name", "cpu model") and not model:
            model = value.strip()
        elif key == "vendor_id" and not vendor:
            vendor = value.strip()
    l1d, l2 = caches or (32 * 1024, 1024 * 1024)
    if machine in ("aarch64", "arm64"):
        # Every AArch64 core has NEON: 32 registers of 128 bits (SVE not used).
        return CpuTarget(name, "aarch64", tuple(sorted(f for f in flags if f in
                                                      ("asimd", "fp", "sve", "sve2"))),
                         128, 32, l1d, l2, model)
    flags = [_CPUINFO_ALIAS.get(f, f) for f in flags]
    have = tuple(sorted(set(f for f in flags if f in ISA_FEATURES)))
    base = _x86(name, have)
    return CpuTarget(name, "x86_64", have, base.vector_bits, base.vector_registers, l1d, l2,
                     model, vendor)


def _size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
    return int(text.rstrip("KMG") or 0) * scale


def _read_sys(root: str, entry: str, name: str) -> str:
    with open(os.path.join(root, entry, name)) as f:
        return f.read().strip()


def read_cache_sizes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> tuple[int, int]:
    """(L1 data, L2) bytes from sysfs; 32 KiB / 1 MiB where it says nothing."""
    l1d, l2 = 32 * 1024, 1024 * 1024
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return l1d, l2
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            level, kind, size = (_read_sys(root, entry, "level"), _read_sys(root, entry, "type"),
                                 _size(_read_sys(root, entry, "size")))
        except (OSError, ValueError):
            continue
        if level == "1" and kind == "Data" and size:
            l1d = size
        elif level == "2" and size:
            l2 = size
    return l1d, l2


_HOST: list[CpuTarget] = []


def detect_host() -> CpuTarget:
    """The CPU this process runs on (read once)."""
    if not _HOST:
        machine = platform.machine().lower()
        try:
            with open("/proc/cpuinfo") as f:
                text = f.read()
        except OSError:
            text = ""
        _HOST.append(parse_cpuinfo(text, machine, "host", read_cache_sizes()))
    return _HOST[0]


def resolve(cpu: str | CpuTarget = "host") -> CpuTarget:
    """The target named by ``cpu``: "host", or a name of ``NAMED_TARGETS``
    (the host's cache sizes are assumed for named targets)."""
    if isinstance(cpu, CpuTarget):
        return cpu
    if cpu == "host":
        return detect_host()
    if cpu not in NAMED_TARGETS:
        raise ValueError(f"unknown cpu '{cpu}' (expected host or one of: "
                         f"{', '.join(sorted(NAMED_TARGETS))})")
    host = detect_host()
    t = NAMED_TARGETS[cpu]
    return CpuTarget(t.name, t.arch, t.features, t.vector_bits, t.vector_registers,
                     host.l1d, host.l2, t.name)


def missing_features(required, host: CpuTarget | None = None) -> list[str]:
    """The features of ``required`` that ``host`` (default: this machine) lacks."""
    have = set((host or detect_host()).features)
    return sorted(f for f in required if f not in have)


# --- issue 14: every core ---------------------------------------------------

# Most threads libomp runs a parallel region on (its KMP_MAX_NTH on Linux):
# asked for more, it ended the process ("OMP: Error #34 ... Aborted";
# 20000 threads ran here, 40000 aborted).
LIBOMP_MAX_THREADS = 32768


def max_threads() -> int:
    """The most threads compiled code may be given: libomp's limit, or this
    system's limit on threads (``/proc/sys/kernel/threads-max``, the
    process limit ``RLIMIT_NPROC``) where that is lower."""
    limit = LIBOMP_MAX_THREADS
    try:
        with open("/proc/sys/kernel/threads-max") as f:
            limit = min(limit, int(f.read().strip()))
    except (OSError, ValueError):
        pass
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            limit = min(limit, soft)
    except (ImportError, OSError, ValueError):
        pass
    return max(1, limit)


def _check_count(value: int, what: str) -> int:
    top = max_threads()
    if value > top:
        raise ValueError(f"{what}: {value} threads is more than this system runs in one "
                         f"OpenMP region (at most {top})")
    return value


def _env_threads(name: str) -> int | None:
    """A positive thread count from environment variable ``name`` (OpenMP's
    form: "4" or a nested list "4,2", whose first entry counts), or None."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    first = text.split(",")[0].strip()
    try:
        value = int(first)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not a positive thread count") from None
    if value < 1:
        raise ValueError(f"{name}={text!r} is not a positive thread count")
    return _check_count(value, f"{name}={text!r}")


def default_threads() -> int:
    """The thread count compiled code uses when none is given:
    ``$GRADIR_NUM_THREADS``, else ``$OMP_NUM_THREADS`` (its first entry),
    else the cores this process may run on (its CPU affinity)."""
    for name in ("GRADIR_NUM_THREADS", "OMP_NUM_THREADS"):
        value = _env_threads(name)
        if value is not None:
            return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: int | None) -> int:
    """``threads`` checked (a positive int), or ``default_threads()`` for None."""
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, not {threads!r}")
    return _check_count(threads, "threads")

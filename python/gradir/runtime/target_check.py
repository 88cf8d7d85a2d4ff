"""The CPU an exported library was built for, recorded in the library and
checked where it is loaded.

``export_library`` writes ``target_record(cpu)`` (JSON: LLVM CPU name,
architecture, the ISA features the code may use) into the NUL-terminated
symbol ``gradir_cpu_target`` (CUDA libraries have their own
``gradir_target``, a chip name); ``gradir.runtime.load`` calls
``check_library_target`` before it touches a function, so a library built
for AVX-512 refuses to load on an AVX2-only CPU with an error naming the
missing features, instead of dying of SIGILL on its first call.  Libraries
without the symbol (exported before it existed) load unchecked.

Imports no ``mlir``: the loader runs where MLIR is not installed.
"""

from __future__ import annotations

import ctypes
import json

from ..conversion.cpu.host import CpuTarget, detect_host, missing_features, resolve

__all__ = ["TARGET_SYMBOL", "TargetMismatchError", "target_record", "check_library_target"]

TARGET_SYMBOL = "gradir_cpu_target"


class TargetMismatchError(OSError):
    """The library needs CPU features this machine lacks."""


def target_record(cpu: str | CpuTarget = "host") -> str:
    """The JSON recorded in a library compiled for ``cpu``."""
    t = resolve(cpu)
    name = t.name if t.name != "host" else "host:" + (t.model or "unknown")
    return json.dumps({"cpu": name, "arch": t.arch, "features": sorted(t.features)},
                      sort_keys=True)


def read_library_target(dll) -> dict | None:
    """The record of a loaded library (ctypes.CDLL), None when it has none."""
    try:
        start = ctypes.c_char.in_dll(dll, TARGET_SYMBOL)
    except ValueError:
        return None
    return json.loads(ctypes.string_at(ctypes.addressof(start)).decode())


def check_library_target(dll, path, host: CpuTarget | None = None) -> None:
    """Raises TargetMismatchError when ``host`` (default: this machine)
    cannot run the code of the loaded library ``dll`` (read from ``path``)."""
    try:
        record = read_library_target(dll)
    except ValueError:
        raise OSError(f"{path} has a corrupt CPU target record ({TARGET_SYMBOL})") from None
    if record is None:
        return
    host = host or detect_host()
    if record.get("arch") and record["arch"] != host.arch:
        raise TargetMismatchError(f"{path} was compiled for {record['arch']} "
                                  f"(cpu {record.get('cpu')}), this machine is {host.arch}")
    missing = missing_features(record.get("features", ()), host)
    if missing:
        raise TargetMismatchError(
            f"{path} was compiled for cpu {record.get('cpu')} and needs CPU features this "
            f"machine ({host.model or host.name}) lacks: {', '.join(missing)}; re-export it "
            f"with gradir.compile(..., cpu='x86-64-v3') or another cpu this machine has")

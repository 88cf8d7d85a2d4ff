"""The CPU an exported library was built for, recorded in the library and
checked where it is loaded.

``export_library`` writes ``target_record(cpu)`` (JSON: LLVM CPU name,
architecture, the ISA features the code may use) into the NUL-terminated
symbol ``gradir_cpu_target`` (CUDA libraries have their own
``gradir_target``, a chip name); ``gradir.runtime.load`` reads it from the
file (``read_image_target``) and calls ``check_record`` before ``dlopen``
runs any of the library's code, so a library built for AVX-512 refuses to
load on an AVX2-only CPU with a ``TargetMismatchError`` (a ``LibraryError``)
naming the missing features, instead of dying of SIGILL in a constructor or
on its first call.  Libraries without the symbol (exported before it
existed) load unchecked.

Imports no ``mlir``: the loader runs where MLIR is not installed.
"""

from __future__ import annotations

import ctypes
import json

from ..conversion.cpu.host import CpuTarget, detect_host, missing_features, resolve
from .errors import LibraryError, TargetMismatchError

__all__ = ["TARGET_SYMBOL", "TargetMismatchError", "target_record", "check_library_target",
           "read_image_target", "check_record"]

TARGET_SYMBOL = "gradir_cpu_target"


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


def read_image_target(image) -> dict | None:
    """The record of a library read with ``elf.read_elf`` (not loaded), None
    when it has none; ``LibraryError`` when the record is not in the file
    or not JSON."""
    sym = image.symbols.get(TARGET_SYMBOL)
    if sym is None or not sym.defined:
        return None
    span = image.file_range(sym.value, max(sym.size, 1))
    if span is None:
        raise LibraryError(f"{image.path}: symbol '{TARGET_SYMBOL}' lies outside the file")
    start, end = span
    raw = image.data[start:end].split(b"\0", 1)[0]
    try:
        record = json.loads(raw.decode())
    except (UnicodeDecodeError, ValueError):
        raise LibraryError(f"{image.path} has a corrupt CPU target record "
                           f"({TARGET_SYMBOL})") from None
    if not isinstance(record, dict):
        raise LibraryError(f"{image.path} has a corrupt CPU target record ({TARGET_SYMBOL})")
    return record


def check_record(record: dict | None, path, host: CpuTarget | None = None) -> None:
    """Raises TargetMismatchError when ``host`` (default: this machine)
    cannot run code compiled for ``record`` (None: unchecked)."""
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


def check_library_target(dll, path, host: CpuTarget | None = None) -> None:
    """``check_record`` on the record of the loaded library ``dll`` (read
    from ``path``)."""
    try:
        record = read_library_target(dll)
    except ValueError:
        raise LibraryError(f"{path} has a corrupt CPU target record ({TARGET_SYMBOL})") from None
    check_record(record, path, host)

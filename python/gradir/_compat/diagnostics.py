"""Locations and diagnostics: ``file:line:col`` as mlir-opt prints it,
MLIRError's diagnostics flattened, and the warnings and remarks the
bindings cannot emit."""

from __future__ import annotations

import re
from typing import Callable

from mlir import ir


_FILE_LOC = re.compile(r'^loc\("(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+):(?P<col>\d+)')


def format_location(loc: ir.Location) -> str:
    """``file:line:col`` for a location, as mlir-opt prints it."""
    text = str(loc)
    m = _FILE_LOC.match(text)
    if m:
        return f"{m['file']}:{m['line']}:{m['col']}"
    inner = re.search(r'"(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+):(?P<col>\d+)', text)
    if inner:
        return f"{inner['file']}:{inner['line']}:{inner['col']}"
    if text.startswith("loc(") and text.endswith(")"):
        text = text[4:-1]
    return text


def diagnostic_records(diags) -> list[tuple[str, str, str, list]]:
    """Flattens ``DiagnosticInfo`` objects (an MLIRError's error_diagnostics)
    into ``(severity, location, message, notes)`` tuples."""
    out = []
    for d in diags:
        sev = str(d.severity).rsplit(".", 1)[-1].lower()
        notes = diagnostic_records(d.notes)
        out.append((sev, format_location(d.location), d.message, notes))
    return out


# --- warnings and remarks ----------------------------------------------------
# The MLIR 22 Python bindings can emit errors (``Location.emit_error``) but
# not warnings, notes or remarks.  gradir routes those through a sink: the
# tools install one that prints them like MLIR and feeds --verify-diagnostics;
# without one they go to stderr in MLIR's format.

_SINKS: list = []


def push_diagnostic_sink(sink: Callable[[str, str, str], None]) -> None:
    _SINKS.append(sink)


def pop_diagnostic_sink() -> None:
    _SINKS.pop()


def emit(loc: ir.Location, severity: str, message: str) -> None:
    """Emits a diagnostic of ``severity`` (error, warning, remark, note)."""
    if severity == "error":
        loc.emit_error(message)
        return
    if _SINKS:
        _SINKS[-1](severity, format_location(loc), message)
        return
    import sys
    print(f"{format_location(loc)}: {severity}: {message}", file=sys.stderr)


def format_mlir_error(err: "ir.MLIRError") -> str:
    """An MLIRError as mlir-opt would print it: ``loc: error: msg`` lines."""
    lines = [err.message] if not err.error_diagnostics else []
    for sev, loc, msg, notes in diagnostic_records(err.error_diagnostics):
        lines.append(f"{loc}: {sev}: {msg}")
        lines += [f"{nloc}: {nsev}: {nmsg}" for nsev, nloc, nmsg, _ in notes]
    return "\n".join(lines)

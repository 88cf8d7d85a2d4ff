"""MLIR bytecode input for the tools, read in a child process.

MLIR's bytecode reader trusts its input: a damaged file (one flipped byte
of ``gradir-opt --emit-bytecode`` output) fails an assertion in the reader
and aborts the process (SIGABRT), asks a ``SmallVector`` for 2^41 elements
("LLVM ERROR: SmallVector unable to grow"), or yields strings that are not
UTF-8.  So the tools read bytecode in a child Python (``python -m
gradir.tools.bytecode``, about a second) that prints it back as text with its
locations; a child that dies is a damaged file, never a dead tool.  The
text then goes through the same checks and parser as any text input.
"""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["MAGIC", "bytecode_as_text"]

MAGIC = b"ML\xefR"
# A reader that hangs on a damaged file is as broken as one that crashes.
_TIMEOUT_S = 600


def bytecode_as_text(raw: bytes) -> tuple[str | None, str]:
    """``(text, "")``: ``raw`` (MLIR bytecode) printed as generic-enough text
    with debug locations and rlx's segment attributes; or ``(None, reason)``
    when it cannot be read."""
    import gradir
    root = os.path.dirname(os.path.dirname(os.path.abspath(gradir.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        r = subprocess.run([sys.executable, "-m", "gradir.tools.bytecode"], input=raw,
                           capture_output=True, env=env, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"MLIR's bytecode reader did not finish in {_TIMEOUT_S} s (damaged file?)"
    except OSError as err:
        return None, f"could not start a reader for it ({err.strerror or err})"
    if r.returncode == 0:
        try:
            return r.stdout.decode("utf-8"), ""
        except UnicodeDecodeError as err:
            return None, f"it holds text that is not UTF-8 (byte {err.start} of its text form)"
    if r.returncode == 2:
        return None, r.stdout.decode("utf-8", "replace").strip() or "malformed"
    how = (f"signal {-r.returncode}" if r.returncode < 0 else f"exit code {r.returncode}")
    detail = r.stderr.decode("utf-8", "replace").strip().splitlines()
    detail = next((line for line in detail if "Assertion" in line or "ERROR" in line), "")
    return None, (f"malformed (MLIR's bytecode reader crashed on it: {how}"
                  + (f"; {detail.strip()[:200]}" if detail else "") + ")")


def _child() -> int:
    """Reads bytecode on stdin; prints its text (exit 0) or why it cannot
    be read (exit 2)."""
    from mlir import ir

    from .. import _compat
    from ..ir import as_operation, make_context

    raw = sys.stdin.buffer.read()
    with make_context() as ctx:
        ctx.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(raw)
        except ir.MLIRError as err:
            records = _compat.diagnostic_records(err.error_diagnostics)
            reason = "; ".join([r[2] for r in records] + [n[2] for r in records for n in r[3]])
            sys.stdout.write(reason or "malformed")
            return 2
        except RuntimeError as err:     # a diagnostic that is not UTF-8, ...
            sys.stdout.write(f"malformed ({err})")
            return 2
        # binary: bytes as printed (strings that are not UTF-8 are refused by
        # the parent, not a conversion error here)
        text = as_operation(module).get_asm(binary=True, enable_debug_info=True,
                                            assume_verified=True)
    sys.stdout.buffer.write(text)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_child())

"""The pass manager: Python-defined passes (the pass callable's signature),
textual pipeline elements, MLIR's crash reproducer and pipeline runs with
the GIL released, both through the C API (``capi``)."""

from __future__ import annotations

from typing import Callable

from mlir import ir
from mlir.passmanager import PassManager

from . import capi
from .capi import _CAPSULE_POINTER, _OP_CAPSULE, _PM_CAPSULE, _capi_lib, _released_lib


def add_python_pass(pm: PassManager, run: Callable[[ir.Operation], None],
                    name: str, description: str) -> None:
    """Adds a Python-defined pass.  ``run(op)`` raises to fail the pass; the
    MLIR 22 callable receives ``(op, pass_)`` and signals failure itself."""

    def _run(op, pass_):
        try:
            run(op)
        except PassFailure:
            pass_.signal_pass_failure()

    _run.__name__ = name.replace("-", "_")
    pm.add(_run, name=name, argument=name, description=description)


def add_textual_pass(pm: PassManager, text: str) -> None:
    """Adds upstream pipeline elements given as text (``canonicalize``,
    ``func.func(cse)``); raises ``ValueError`` when they do not parse."""
    pm.add(text)


class PassFailure(Exception):  # noqa: N818
    """Raised inside a Python pass after its diagnostics were emitted."""


# --- crash recovery for pass pipelines (gradir-opt, upstream crashes) ---

# mlir::PassManager::enableCrashReproducerGeneration(llvm::StringRef, bool)
_CRASH_REPRODUCER_SYMBOL = ("_ZN4mlir11PassManager31enableCrashReproducerGeneration"
                            "EN4llvm9StringRefEb")


def enable_crash_recovery(pm, reproducer_path: str) -> bool:
    """MLIR's local crash reproducer on ``pm`` (``mlir-opt
    --mlir-pass-pipeline-crash-reproducer=PATH
    --mlir-pass-pipeline-local-reproducer``): a pass that crashes (e.g.
    upstream ``buffer-results-to-out-params`` on a function returning one
    buffer twice: SIGSEGV) makes ``pm.run`` raise ``MLIRError`` naming the
    pass, and the IR it was given is written to ``reproducer_path``.  The
    context must run single-threaded (MLIR's requirement for local
    reproducers; gradir-opt's contexts do).

    The Python bindings of MLIR 22 do not expose it: this calls
    ``mlir::PassManager::enableCrashReproducerGeneration(StringRef, bool)``
    of the bindings' C API library through ctypes (``MlirPassManager``
    wraps the ``mlir::PassManager*``; ``StringRef`` is passed as its
    pointer and length, the Itanium C++ ABI on x86-64 and AArch64 Linux).
    Returns False, changing nothing, where the symbol is missing."""
    import ctypes
    from pathlib import Path
    import mlir._mlir_libs as libs
    global _ENABLE_REPRODUCER
    if _ENABLE_REPRODUCER is None:
        try:
            lib = ctypes.CDLL(str(Path(libs.__file__).parent / "libMLIRPythonCAPI.so"))
            fn = getattr(lib, _CRASH_REPRODUCER_SYMBOL)
        except (OSError, AttributeError):
            _ENABLE_REPRODUCER = False
            return False
        fn.restype = None
        fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_bool]
        _ENABLE_REPRODUCER = fn
    if _ENABLE_REPRODUCER is False:
        return False
    ptr = _CAPSULE_POINTER(pm._CAPIPtr, b"mlir.passmanager.PassManager._CAPIPtr")
    path = str(reproducer_path).encode()
    _ENABLE_REPRODUCER(ptr, path, len(path), True)
    return True


_ENABLE_REPRODUCER = None


# --- pipeline runs with the GIL released (issue 14, parallel compile; see capi) ---

def run_pass_manager_released(pm, op, diagnostics: list | None = None) -> bool:
    """``pm.run(op)`` with the GIL released; False when the pipeline failed.
    Its diagnostics are kept from MLIR's default handler (which prints them
    to stderr: the caller re-runs through the bindings to report them, once)
    and appended, as text, to ``diagnostics`` when given.  The handler is a
    ctypes callback: it takes the GIL for the few diagnostics a failing
    pass emits, never on the way of a passing one."""
    lib = _released_lib()
    _, ptr, _ = _capi_lib()
    op = op.operation if hasattr(op, "operation") else op
    raw_op = ptr(_CAPSULE_POINTER(op._CAPIPtr, _OP_CAPSULE))
    context = lib.mlirOperationGetContext(raw_op)
    sink = diagnostics if diagnostics is not None else []
    handler = capi._DIAGNOSTIC_HANDLER(lambda diag, _data: _keep_diagnostic(lib, diag, sink))
    handler_id = lib.mlirContextAttachDiagnosticHandler(context, handler, None, None)
    try:
        return bool(lib.mlirPassManagerRunOnOp(ptr(_CAPSULE_POINTER(pm._CAPIPtr, _PM_CAPSULE)),
                                               raw_op))
    finally:
        lib.mlirContextDetachDiagnosticHandler(context, handler_id)


def _keep_diagnostic(lib, diag, sink: list) -> int:
    parts = []
    printer = capi._STRING_CALLBACK(lambda ref, _data: parts.append(
        ref.data[:ref.length].decode(errors="replace") if ref.data else ""))
    lib.mlirDiagnosticPrint(diag, printer, None)
    sink.append("".join(parts))
    return 1        # handled: not passed on to the default handler

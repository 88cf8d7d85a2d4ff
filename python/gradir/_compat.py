"""Every MLIR-version-specific call gradir makes, in one place.

gradir is pinned to upstream MLIR 22.1.8 through ``xtc-mlir-python-bindings``.
The pieces below are the ones whose signature or convention changed between
MLIR releases (parsing with a source name, the Python pass callable, pattern
callbacks, the ExecutionEngine ABI).  Moving to the next MLIR release should
touch this file only.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from mlir import ir
from mlir.dialects import builtin
from mlir.passmanager import PassManager
from mlir import rewrite

__all__ = [
    "MLIR_VERSION",
    "parse_module",
    "add_python_pass",
    "add_textual_pass",
    "apply_patterns",
    "format_location",
    "diagnostic_records",
]

MLIR_VERSION = "22.1.8"

_SINGLE_TOP_LEVEL = "source must contain a single top-level operation"


def _wrap_in_module(text: str) -> str:
    """Wraps ``text`` in ``module { ... }`` without moving any line or column.

    Attribute and type aliases (``#map = ...``, ``!t = ...``) must stay
    outside the module.  The opening ``module {`` replaces the last blank or
    comment-only line between the aliases and the first operation; when
    there is none, it goes in front of the first operation on its line (that
    line's columns shift)."""
    lines = text.split("\n")
    free, last_alias = None, -1
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped == "" or stripped.startswith("//"):
            free = i
            continue
        if stripped[0] in "#!" and "=" in stripped:
            last_alias, free = i, None
            continue
        if free is not None and free > last_alias:
            lines[free] = "module {" + " " * max(0, len(lines[free]) - 8)
        else:
            lines[i] = "module { " + line
        return "\n".join(lines) + "\n}\n"
    return text + "\nmodule {\n}\n"


class ParseError(Exception):
    """A parse failure MLIR reported without any diagnostic (IRDL dialects
    have no custom assembly, and MLIR 22 fails silently on it)."""

    def __init__(self, location: str, message: str):
        super().__init__(f"{location}: error: {message}")
        self.records = [("error", location, message, [])]


_CUSTOM_FORM = re.compile(r"^(?P<pre>\s*(?:%[\w.$#:, ]+=\s*)?)(?P<op>(?:rlx|grad)\.\w+)\b")


def _locate_custom_form(text: str, source_name: str) -> ParseError:
    for i, line in enumerate(text.split("\n"), start=1):
        m = _CUSTOM_FORM.match(line)
        if m:
            col = len(m["pre"]) + 1
            return ParseError(f"{source_name}:{i}:{col}",
                              f"custom assembly format is not supported for '{m['op']}'; "
                              f"IRDL ops use the generic form \"{m['op']}\"(...) : (...) -> ...")
    return ParseError(f"{source_name}:1:1", "unable to parse the input (no diagnostic "
                                            "was reported by MLIR)")


def parse_module(text: str, source_name: str, context: ir.Context) -> builtin.ModuleOp:
    """Parses ``text`` into a ``builtin.module``, naming locations after
    ``source_name`` (``file:line:col``).  Several top-level operations are
    wrapped in an implicit module, as ``mlir-opt`` does."""
    try:
        op = _parse_op(text, source_name, context)
    except ir.MLIRError as err:
        if not any(_SINGLE_TOP_LEVEL in d.message for d in err.error_diagnostics):
            raise
        op = _parse_op(_wrap_in_module(text), source_name, context)
    if op.operation.name == "builtin.module":
        return op.operation.opview
    with context, ir.Location.file(source_name, 1, 1):
        module = builtin.ModuleOp()
    module.body.append(op.operation)
    return module


def _parse_op(text: str, source_name: str, context: ir.Context):
    try:
        return ir.Operation.parse(text, source_name=source_name, context=context)
    except ir.MLIRError as err:
        if err.error_diagnostics:
            raise
        raise _locate_custom_form(text, source_name) from None


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


def apply_patterns(op: ir.Operation,
                   patterns: Iterable[tuple[str, Callable]]) -> None:
    """Applies ``(root op name, fn(op, rewriter))`` patterns greedily.

    In MLIR 22 a callback that returns a falsy value has matched."""
    pset = rewrite.RewritePatternSet(op.context)
    for root, fn in patterns:
        pset.add(root, fn)
    rewrite.apply_patterns_and_fold_greedily(op, pset.freeze())


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


# --- execution (runtime) -------------------------------------------------------

def format_mlir_error(err: "ir.MLIRError") -> str:
    """An MLIRError as mlir-opt would print it: ``loc: error: msg`` lines."""
    lines = [err.message] if not err.error_diagnostics else []
    for sev, loc, msg, notes in diagnostic_records(err.error_diagnostics):
        lines.append(f"{loc}: {sev}: {msg}")
        lines += [f"{nloc}: {nsev}: {nmsg}" for nsev, nloc, nmsg, _ in notes]
    return "\n".join(lines)


def execution_engine(module: ir.Module, opt_level: int, shared_libs: list[str],
                     pic: bool = False):
    """An ExecutionEngine over an LLVM-dialect module (MLIR 22 signature)."""
    from mlir.execution_engine import ExecutionEngine
    return ExecutionEngine(module, opt_level=opt_level, shared_libs=shared_libs,
                           enable_object_dump=True, enable_pic=pic)


# --- greedy pattern application with a configuration --------------------------
# (appended for rlx-simplify-gradient)

def apply_patterns_configured(op: ir.Operation, patterns: Iterable[tuple[str, Callable]], *,
                              fold: bool = False, max_iterations: int = 16) -> bool:
    """Applies ``(root op name, fn(op, rewriter))`` patterns greedily, like
    ``apply_patterns``, with MLIR's folding, constant CSE (which hoists and
    merges ``arith.constant``s) and region simplification off unless
    ``fold``.  Returns False when the driver stopped before a fixpoint
    (MLIR 22 raises "failed to converge"); the IR is valid either way.

    Ops that a Python callback creates (not through the rewriter) are not
    put on the driver's worklist: they are visited on the next sweep, so
    chains of rewrites need several iterations."""
    pset = rewrite.RewritePatternSet(op.context)
    for root, fn in patterns:
        pset.add(root, fn)
    config = rewrite.GreedyRewriteConfig()
    config.enable_folding = fold
    config.enable_constant_cse = fold
    config.max_iterations = max_iterations
    if not fold:
        config.region_simplification_level = rewrite.GreedySimplifyRegionLevel.DISABLED
    try:
        rewrite.apply_patterns_and_fold_greedily(op, pset.freeze(), config)
    except RuntimeError as err:
        if "failed to converge" not in str(err):
            raise
        return False
    return True


# --- dialect module lookup (appended for rlx-simplify-gradient) -----------------

def skip_dialect_module_lookup(namespaces: Iterable[str]) -> None:
    """Makes wrapping ops of the IRDL dialects ``namespaces`` cheap.

    MLIR 22's bindings look for a Python module ``mlir.dialects.<ns>`` each
    time they wrap an op of dialect ``ns`` (``value.owner``, ``block.operations``)
    and, when there is none (IRDL dialects have none), do not remember the
    miss: every wrap re-runs Python's import machinery (~20 us).  An empty
    placeholder module per namespace makes the first lookup succeed; ops then
    wrap as generic ``OpView``s, as before."""
    import sys
    import types
    for ns in namespaces:
        sys.modules.setdefault(f"mlir.dialects.{ns}", types.ModuleType(f"mlir.dialects.{ns}"))


# --- GPU dialect builders (appended for the NVVM pipeline) ----------------------

def gpu_launch(grid, block, workgroup_types=()):
    """A ``gpu.launch`` at the current insertion point with its body block
    (12 index arguments, then one per workgroup attribution).  ``grid`` and
    ``block`` are 3 index Values or ints.  Returns ``(op, body)``; the caller
    fills the body and ends it with ``gpu.terminator``.  (MLIR 22's Python
    ``LaunchOp`` takes the sizes as tuples and creates the body itself.)"""
    from mlir.dialects import gpu
    op = gpu.LaunchOp(tuple(grid), tuple(block))
    body = op.regions[0].blocks[0]
    for t in workgroup_types:
        body.add_argument(t, ir.Location.unknown())
    if workgroup_types:
        op.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), len(workgroup_types))
    return op, body


# --- CUDA execution (appended for the NVVM pipeline) ------------------------------

# ORC (MLIR 22's ExecutionEngine) turns llvm.global_ctors/dtors -- the GPU
# module loading/unloading of gpu.binary -- into these functions of the
# object file it compiles; ``dump_to_object_file`` keeps them, but no
# .init_array, so an exported library must call them itself.
ORC_INIT_PREFIX = "__orc_init_func."
ORC_DEINIT_PREFIX = "__orc_deinit_func."


def initialize_engine(engine) -> None:
    """Runs the global constructors of an ExecutionEngine's module (loads
    the GPU binaries); MLIR 22 runs them only when asked."""
    engine.initialize()


def stub_engine_symbols(engine, names) -> list:
    """Resolves ``names`` to a do-nothing function in ``engine`` so that code
    referring to a runtime library that cannot be loaded here (the CUDA
    runtime without a driver) still compiles; never call into it.  Returns
    the ctypes objects to keep alive as long as the engine."""
    import ctypes
    keep = []
    for name in names:
        cb = ctypes.CFUNCTYPE(None)(lambda: None)
        keep.append(cb)
        engine.raw_register_runtime(name, ctypes.cast(cb, ctypes.c_void_p))
    return keep


# --- stable op identity (appended for the simplifier's worklist driver) ----------

def _capsule_pointer():
    import ctypes
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get


_CAPSULE_POINTER = _capsule_pointer()
_OP_CAPSULE = b"mlir.ir.Operation._CAPIPtr"


def op_key(op) -> int:
    """The address of ``op`` (an Operation or OpView): a dictionary key that
    stays valid while the op lives.  MLIR 22's ``Operation.__hash__`` is
    structural (it changes when an operand is replaced), so the Python
    objects themselves are no stable keys."""
    return _CAPSULE_POINTER(op.operation._CAPIPtr, _OP_CAPSULE)


# --- walking without wrapping (appended for issue 14, compile time) -------------

def collect_ops(op, keep: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """The ops nested in ``op`` (pre-order, ``op`` excluded) for which
    ``keep(op)`` is true, found by MLIR's own walk.

    The walk hands each op to Python as a plain ``ir.Operation``: no
    ``OpView`` wrapping, hence no look-up (and first-time import) of the op's
    dialect module, which ``block.operations`` does for every op; on IR that
    Python has not seen yet (a pass's output) that is ~40x cheaper than
    ``gradir.ir.walk`` (2300 bufferized LeNet ops: 1.3 ms against 54 ms)."""
    root = op.operation if hasattr(op, "operation") else op
    found = []

    def visit(inner):
        if keep(inner):
            found.append(inner)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    if found and found[0] == root:
        found.pop(0)
    return found


# --- LLVM IR of an LLVM-dialect module, in process (issue 14, compile time) ---

def translate_to_llvm_ir(module) -> str:
    """``mlir-translate --mlir-to-llvmir`` of ``module`` (an LLVM-dialect
    module or its operation) without printing it and starting the tool: the
    LeNet step's 11 ms against 30 ms of printing plus ~100 ms of the
    process.  Raises ``mlir.ir.MLIRError``-like RuntimeError on failure.
    The native function itself: ``mlir.dialects.llvm`` would import its
    generated op classes first (14 ms) for nothing."""
    from mlir._mlir_libs._mlirDialectsLLVM import translate_module_to_llvmir
    op = module.operation if hasattr(module, "operation") else module
    return translate_module_to_llvmir(op)


# --- crash recovery for pass pipelines (appended: gradir-opt, upstream crashes) ---

_CRASH_REPRODUCER_SYMBOL = "_ZN4mlir11PassManager31enableCrashReproducerGenerationEN4llvm9StringRefEb"


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

"""Every MLIR-version-specific call gradir makes, in one place.

gradir is pinned to upstream MLIR 22.1.8 through ``xtc-mlir-python-bindings``.
The pieces below are the ones whose signature or convention changed between
MLIR releases (parsing with a source name, the Python pass callable, pattern
callbacks, the ExecutionEngine ABI).  Moving to the next MLIR release should
touch this file only.
"""

from __future__ import annotations

import re
import threading
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

def collect_ops(op, keep: Callable[[ir.Operation], bool],
                post_order: bool = False) -> list[ir.Operation]:
    """The ops nested in ``op`` (pre-order, ``op`` excluded) for which
    ``keep(op)`` is true, found by MLIR's own walk.

    The walk hands each op to Python as a plain ``ir.Operation``: no
    ``OpView`` wrapping, hence no look-up (and first-time import) of the op's
    dialect module, which ``block.operations`` does for every op; on IR that
    Python has not seen yet (a pass's output) that is ~40x cheaper than
    ``gradir.ir.walk`` (2300 bufferized LeNet ops: 1.3 ms against 54 ms)."""
    root = op.operation if hasattr(op, "operation") else op
    found = []
    append, go = found.append, ir.WalkResult.ADVANCE

    def visit(inner):
        if keep(inner):
            append(inner)
        return go

    if post_order:                      # nested ops before the op holding them
        root.walk(visit, ir.WalkOrder.POST_ORDER)
        if found and found[-1] == root:
            found.pop()
        return found
    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    if found and found[0] == root:
        found.pop(0)
    return found


def count_ops(op, limit: int) -> int:
    """The number of ops nested in ``op`` (``op`` excluded), counted by
    MLIR's walk up to ``limit + 1`` (the walk stops there: a large region
    costs no more than a small one)."""
    root = op.operation if hasattr(op, "operation") else op
    seen = [0]
    stop, go = ir.WalkResult.INTERRUPT, ir.WalkResult.ADVANCE

    def visit(_inner):
        seen[0] += 1
        return stop if seen[0] > limit + 1 else go

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return seen[0] - 1


def child_ops(op, keep: Callable[[ir.Operation], bool],
              descend: Callable[[ir.Operation], bool] = lambda inner: False) -> list[ir.Operation]:
    """The ops directly in the regions of ``op`` for which ``keep(op)`` is
    true, in order, and (pre-order) those nested in a kept-or-not child for
    which ``descend(child)`` is true; plain ``ir.Operation``s from MLIR's
    walk (see ``collect_ops``), which visits no op inside a child it does not
    descend into."""
    root = op.operation if hasattr(op, "operation") else op
    found = []
    first = [True]

    def visit(inner):
        if first[0]:                    # the walk's first op is the root
            first[0] = False
            return ir.WalkResult.ADVANCE
        if keep(inner):
            found.append(inner)
        return ir.WalkResult.ADVANCE if descend(inner) else ir.WalkResult.SKIP

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def terminator(block: ir.Block) -> ir.Operation | None:
    """The terminator of ``block`` as a plain ``ir.Operation``, None when its
    last op is none (or it is empty).  ``block.operations[-1]`` would wrap it
    in an ``OpView``, which imports the op's dialect module the first time
    (11 ms for ``mlir.dialects.llvm``)."""
    try:
        return ir.InsertionPoint.at_block_terminator(block).ref_operation
    except ValueError:      # "Block has no terminator"
        return None


def _capi():
    import ctypes
    import os
    from mlir import _mlir_libs

    class Ptr(ctypes.Structure):            # MlirOperation, MlirAttribute
        _fields_ = [("ptr", ctypes.c_void_p)]

    class StringRef(ctypes.Structure):      # MlirStringRef
        _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

    lib = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), "libMLIRPythonCAPI.so"))
    lib.mlirArrayAttrGetElement.argtypes = [Ptr, ctypes.c_ssize_t]
    lib.mlirArrayAttrGetElement.restype = Ptr
    lib.mlirOperationSetAttributeByName.argtypes = [Ptr, StringRef, Ptr]
    lib.mlirOperationSetAttributeByName.restype = None
    lib.mlirValueIsAOpResult.argtypes = [Ptr]
    lib.mlirValueIsAOpResult.restype = ctypes.c_bool
    lib.mlirOpResultGetOwner.argtypes = [Ptr]
    lib.mlirOpResultGetOwner.restype = Ptr
    for fn, args, res in (("mlirValueGetFirstUse", [Ptr], Ptr),
                          ("mlirOpOperandIsNull", [Ptr], ctypes.c_bool),
                          ("mlirOpOperandGetOwner", [Ptr], Ptr),
                          ("mlirOpOperandGetOperandNumber", [Ptr], ctypes.c_uint),
                          ("mlirOpOperandGetNextUse", [Ptr], Ptr),
                          ("mlirOperationGetParentOperation", [Ptr], Ptr),
                          ("mlirBlockGetFirstOperation", [Ptr], Ptr),
                          ("mlirOperationGetNextInBlock", [Ptr], Ptr),
                          ("mlirOperationGetNumResults", [Ptr], ctypes.c_ssize_t),
                          ("mlirOperationGetNumOperands", [Ptr], ctypes.c_ssize_t),
                          ("mlirOperationGetResult", [Ptr, ctypes.c_ssize_t], Ptr),
                          ("mlirOperationGetOperand", [Ptr, ctypes.c_ssize_t], Ptr),
                          ("mlirValueGetType", [Ptr], Ptr),
                          ("mlirTypeIsAVector", [Ptr], ctypes.c_bool),
                          ("mlirOperationClone", [Ptr], Ptr),
                          ("mlirAttributeIsADenseResourceElements", [Ptr], ctypes.c_bool),
                          ("mlirOperationGetBlock", [Ptr], Ptr),
                          ("mlirBlockInsertOwnedOperationBefore", [Ptr, Ptr, Ptr], None)):
        getattr(lib, fn).argtypes = args
        getattr(lib, fn).restype = res
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    lib.new_capsule = new_capsule
    return lib, Ptr, StringRef


def _capi_lib():
    global _CAPI
    if _CAPI is None:
        with _CAPI_LOCK:    # one set of ctypes types: threads compile at once (partition.py)
            if _CAPI is None:
                _CAPI = _capi()
    return _CAPI


_CAPI_LOCK = threading.Lock()


_ATTR_CAPSULE = b"mlir.ir.Attribute._CAPIPtr"


def set_attribute_from(ops, name: str, holder: ir.ArrayAttr, index: int = 0) -> None:
    """Sets the attribute ``name`` (inherent or discardable, as
    ``op.attributes[name] = ...``) of every op of ``ops`` to
    ``holder[index]`` without handing that element to Python: a dialect
    attribute reaching Python (``ir.Attribute.parse``, ``holder[index]``) is
    down-cast, which imports its dialect's Python module the first time
    (``mlir.dialects.llvm``: 11 ms, issue 14, compile time).  The builtin
    ``holder`` keeps it alive; MLIR's C API sets it."""
    if not ops:
        return
    lib, ptr, string_ref = _capi_lib()
    holder = ir.ArrayAttr(holder)
    if not 0 <= index < len(holder):
        raise IndexError(f"attribute index {index} out of range")
    attr = lib.mlirArrayAttrGetElement(
        ptr(_CAPSULE_POINTER(holder._CAPIPtr, _ATTR_CAPSULE)), index)
    key = name.encode()
    for op in ops:
        op = op.operation
        lib.mlirOperationSetAttributeByName(
            ptr(_CAPSULE_POINTER(op._CAPIPtr, _OP_CAPSULE)), string_ref(key, len(key)), attr)


_CAPI = None
_VALUE_CAPSULE = b"mlir.ir.Value._CAPIPtr"


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The op that defines ``value`` as a plain ``ir.Operation``, None for a
    block argument.  ``value.owner`` wraps the op in an ``OpView``, which
    imports its dialect's Python module the first time (``mlir.dialects.linalg``:
    ~28 ms); this asks MLIR's C API and wraps nothing."""
    lib, ptr, _ = _capi_lib()
    raw = ptr(_CAPSULE_POINTER(value._CAPIPtr, _VALUE_CAPSULE))
    if not lib.mlirValueIsAOpResult(raw):
        return None
    return _operation(lib, lib.mlirOpResultGetOwner(raw))


def _operation(lib, raw) -> ir.Operation | None:
    """The Python ``ir.Operation`` of a C API ``MlirOperation`` (None for null)."""
    if not raw.ptr:
        return None
    return ir.Operation._CAPICreate(lib.new_capsule(raw.ptr, _OP_CAPSULE, None))


_BLOB = re.compile(r'("(?:[^"\\]|\\.)*"|[\w.$-]+)\s*:\s*"0x([0-9A-Fa-f]*)"')


def resource_blobs(op) -> dict[str, bytes]:
    """The ``builtin`` dialect-resource blobs of the module holding ``op``,
    by key, their data without the leading 4-byte alignment word.  The
    bindings give no accessor: the top-level op is printed and its
    ``{-# dialect_resources #-}`` section read back (for a module without
    ``dense_resource`` attributes, the caller should not ask)."""
    top = op.operation if hasattr(op, "operation") else op
    while True:
        try:
            parent = top.parent
        except ValueError:          # a detached op: the top itself
            break
        if parent is None:
            break
        top = parent.operation if hasattr(parent, "operation") else parent
    text = top.get_asm(print_generic_op_form=True)
    start = text.rfind("{-#")
    if start < 0:
        return {}
    section = text[start:]
    at = section.find("builtin:")
    if at < 0:
        return {}
    return {key: bytes.fromhex(hexa)[4:]
            for key, hexa in _BLOB.findall(section[at:section.find("}", at)])}


def is_dense_resource(attr: ir.Attribute) -> bool:
    """Whether ``attr`` is a ``dense_resource`` elements attribute (the
    bindings do not down-cast those, and their ``static_typeid`` raises)."""
    lib, ptr, _ = _capi_lib()
    return bool(lib.mlirAttributeIsADenseResourceElements(
        ptr(_CAPSULE_POINTER(attr._CAPIPtr, _ATTR_CAPSULE))))


def clone_before(op, anchor) -> None:
    """Inserts a copy of ``op`` just before ``anchor`` (an op in a block).
    ``op.clone(ip=...)`` hands the copy to Python as an ``OpView``, which
    imports its dialect's module the first time (``mlir.dialects.llvm``:
    ~13 ms); MLIR's C API copies and inserts it, nothing is wrapped."""
    lib, ptr, _ = _capi_lib()
    raw_anchor = ptr(_CAPSULE_POINTER(anchor.operation._CAPIPtr, _OP_CAPSULE))
    copy = lib.mlirOperationClone(ptr(_CAPSULE_POINTER(op.operation._CAPIPtr, _OP_CAPSULE)))
    lib.mlirBlockInsertOwnedOperationBefore(lib.mlirOperationGetBlock(raw_anchor), raw_anchor,
                                            copy)


def uses_of(value: ir.Value) -> list[tuple[ir.Operation, int]]:
    """``(owner, operand number)`` of every use of ``value``, owners as
    plain ``ir.Operation``s (``value.uses`` hands out ``OpView``s, see
    ``defining_op``)."""
    lib, ptr, _ = _capi_lib()
    use = lib.mlirValueGetFirstUse(ptr(_CAPSULE_POINTER(value._CAPIPtr, _VALUE_CAPSULE)))
    out = []
    while not lib.mlirOpOperandIsNull(use):
        out.append((_operation(lib, lib.mlirOpOperandGetOwner(use)),
                    lib.mlirOpOperandGetOperandNumber(use)))
        use = lib.mlirOpOperandGetNextUse(use)
    return out


def parent_op(op) -> ir.Operation | None:
    """The op holding ``op`` as a plain ``ir.Operation`` (``op.parent`` is an
    ``OpView``), None at the top."""
    lib, ptr, _ = _capi_lib()
    return _operation(lib, lib.mlirOperationGetParentOperation(
        ptr(_CAPSULE_POINTER(op.operation._CAPIPtr, _OP_CAPSULE))))


_BLOCK_CAPSULE = b"mlir.ir.Block._CAPIPtr"


def value_is_vector(op: ir.Operation, index: int, operand: bool = False) -> bool:
    """Whether result ``index`` (``operand``: operand ``index``) of ``op`` is
    a vector, read through the C API: ``op.results[i]`` builds a Python
    value whose owner is wrapped in an ``OpView``, which imports the op's
    dialect module the first time (``mlir.dialects.llvm``: 16 ms in
    rlx-loop-hints; issue 14, compile time)."""
    lib, ptr, _ = _capi_lib()
    raw = ptr(_CAPSULE_POINTER(op._CAPIPtr, _OP_CAPSULE))
    count = lib.mlirOperationGetNumOperands(raw) if operand else lib.mlirOperationGetNumResults(raw)
    if not 0 <= index < count:
        return False
    value = (lib.mlirOperationGetOperand if operand else lib.mlirOperationGetResult)(raw, index)
    return bool(lib.mlirTypeIsAVector(lib.mlirValueGetType(value)))


def block_ops(block: ir.Block) -> list[ir.Operation]:
    """The ops of ``block`` in order, as plain ``ir.Operation``s
    (``block.operations`` wraps each in an ``OpView``)."""
    lib, ptr, _ = _capi_lib()
    out = []
    raw = lib.mlirBlockGetFirstOperation(ptr(_CAPSULE_POINTER(block._CAPIPtr, _BLOCK_CAPSULE)))
    while raw.ptr:
        out.append(_operation(lib, raw))
        raw = lib.mlirOperationGetNextInBlock(raw)
    return out


# --- linalg builders without opdsl (appended for issue 14, compile time) ----------

def _linalg_namespace():
    """Builds ``linalg`` (see the class) on first use: importing the op
    classes takes ~4 ms, which only a lowering needs."""

    class linalg:  # noqa: N801  (a namespace standing in for mlir.dialects.linalg)
        """The linalg ops rlx-to-linalg builds, from the generated op classes and
        ``fill_builtin_region``, giving the IR that ``mlir.dialects.linalg``'s
        helpers give.  Importing ``mlir.dialects.linalg`` runs its opdsl module
        ``core_named_ops`` (~28 ms, a third of the MLP step's rlx-to-linalg);
        these builders import only ``mlir.dialects._linalg_ops_gen`` (~4 ms).
        Named structured ops get their region as upstream's builders make it;
        ``copy`` gets the ``cast`` attribute opdsl sets, the pooling ops the
        ``strides``/``dilations`` given (as ``DenseElementsAttr`` of i64)."""

        from mlir.dialects._linalg_ops_gen import (  # noqa: F401
            BatchMatmulOp, BroadcastOp, ContractOp, CopyOp, FillOp, GenericOp, IndexOp, MatmulOp,
            PoolingNchwMaxOp, PoolingNchwSumOp, ReduceOp, TransposeOp, YieldOp)
        from mlir._mlir_libs._mlirDialectsLinalg import fill_builtin_region

        @staticmethod
        def _result_types(outs) -> list:
            return [v.type for v in outs if isinstance(v.type, ir.RankedTensorType)]

        @classmethod
        def _named(cls, op):
            cls.fill_builtin_region(op.operation)
            return op

        @classmethod
        def fill(cls, value, *, outs):
            """``linalg.fill``: the result Value (one tensor out) or the op."""
            op = cls._named(cls.FillOp(cls._result_types(outs), [value], list(outs)))
            return op.result if len(op.results) == 1 else op

        @classmethod
        def copy(cls, value, *, outs):
            op = cls.CopyOp(cls._result_types(outs), [value], list(outs))
            set_attribute_from([op], "cast", ir.Attribute.parse("[#linalg.type_fn<cast_signed>]"))
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def _matmul_like(cls, op_class, ins, outs, indexing_maps, cast):
            op = op_class(result_tensors=cls._result_types(outs), inputs=list(ins),
                          outputs=list(outs), indexing_maps=indexing_maps, cast=cast)
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def matmul(cls, *ins, outs, indexing_maps=None, cast=None):
            return cls._matmul_like(cls.MatmulOp, ins, outs, indexing_maps, cast)

        @classmethod
        def contract(cls, *ins, outs, indexing_maps):
            """``linalg.contract`` (``indexing_maps``: AffineMaps)."""
            maps = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in indexing_maps])
            op = cls.ContractOp(result_tensors=cls._result_types(outs), inputs=list(ins),
                                outputs=list(outs), indexing_maps=maps)
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def batch_matmul(cls, *ins, outs, indexing_maps=None, cast=None):
            return cls._matmul_like(cls.BatchMatmulOp, ins, outs, indexing_maps, cast)

        @classmethod
        def transpose(cls, value, *, outs, permutation):
            """``linalg.transpose``: the op."""
            return cls._named(cls.TransposeOp(result=cls._result_types(outs[:1]), input=value,
                                              init=outs[0], permutation=permutation))

        @classmethod
        def broadcast(cls, value, *, outs, dimensions):
            """``linalg.broadcast``: the op."""
            return cls._named(cls.BroadcastOp(result=cls._result_types(outs[:1]), input=value,
                                              init=outs[0], dimensions=dimensions))

        @classmethod
        def _pooling(cls, op_class, ins, outs, strides, dilations):
            import numpy as np
            op = op_class(cls._result_types(outs), list(ins), list(outs))
            for name, values in (("strides", strides), ("dilations", dilations)):
                if values:
                    op.operation.attributes[name] = ir.DenseElementsAttr.get(
                        np.array(values, dtype=np.int64))
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def pooling_nchw_max(cls, *ins, outs, strides=None, dilations=None):
            return cls._pooling(cls.PoolingNchwMaxOp, ins, outs, strides, dilations)

        @classmethod
        def pooling_nchw_sum(cls, *ins, outs, strides=None, dilations=None):
            return cls._pooling(cls.PoolingNchwSumOp, ins, outs, strides, dilations)

    return linalg


def __getattr__(name: str):
    """``_compat.linalg``, built on first access (PEP 562)."""
    if name == "linalg":
        value = globals()["linalg"] = _linalg_namespace()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


# --- MLIR's C API with the GIL released (appended for issue 14, parallel compile) ---
# The bindings' ``PassManager.run`` and ``ExecutionEngine`` hold the GIL for
# the whole pipeline / LLVM run, so two Python threads lowering two modules
# (each in its own context) take turns.  ctypes releases the GIL around a
# foreign call: the same C API functions called through ``ctypes.CDLL`` run
# at once on two cores.  A pass manager run this way must hold upstream
# passes only: a Python-defined pass called back without the GIL crashes.

_RELEASED = None
_PM_CAPSULE = b"mlir.passmanager.PassManager._CAPIPtr"
_MODULE_CAPSULE = b"mlir.ir.Module._CAPIPtr"


_DIAGNOSTIC_HANDLER = _STRING_CALLBACK = None     # ctypes callback types (_released_lib)


def _released_lib():
    global _RELEASED, _DIAGNOSTIC_HANDLER, _STRING_CALLBACK
    if _RELEASED is not None:
        return _RELEASED
    import ctypes
    lib, ptr, string_ref = _capi_lib()      # the argtypes set below are per CDLL object
    with _CAPI_LOCK:        # threads compile at once (partition.py): one set of types
        if _RELEASED is not None:
            return _RELEASED
        _DIAGNOSTIC_HANDLER, _STRING_CALLBACK = _diagnostic_types()
        fns = (("mlirPassManagerRunOnOp", [ptr, ptr], ctypes.c_int8),
               ("mlirExecutionEngineCreate",
                [ptr, ctypes.c_int, ctypes.c_int, ctypes.POINTER(string_ref), ctypes.c_bool,
                 ctypes.c_bool], ptr),
               ("mlirExecutionEngineDestroy", [ptr], None),
               ("mlirExecutionEngineLookupPacked", [ptr, string_ref], ctypes.c_void_p),
               ("mlirExecutionEngineDumpToObjectFile", [ptr, string_ref], None),
               ("mlirOperationGetContext", [ptr], ptr),
               ("mlirContextAttachDiagnosticHandler",
                [ptr, _DIAGNOSTIC_HANDLER, ctypes.c_void_p, ctypes.c_void_p], ctypes.c_uint64),
               ("mlirContextDetachDiagnosticHandler", [ptr, ctypes.c_uint64], None),
               ("mlirDiagnosticPrint", [ctypes.c_void_p, _STRING_CALLBACK, ctypes.c_void_p],
                None))
        for name, args, res in fns:
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = res
        _RELEASED = lib
    return _RELEASED


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
    handler = _DIAGNOSTIC_HANDLER(lambda diag, _data: _keep_diagnostic(lib, diag, sink))
    handler_id = lib.mlirContextAttachDiagnosticHandler(context, handler, None, None)
    try:
        return bool(lib.mlirPassManagerRunOnOp(ptr(_CAPSULE_POINTER(pm._CAPIPtr, _PM_CAPSULE)),
                                               raw_op))
    finally:
        lib.mlirContextDetachDiagnosticHandler(context, handler_id)


def _diagnostic_types():
    import ctypes
    _, _, string_ref = _CAPI
    # MlirLogicalResult (a struct of one int8) comes back in a register, as an
    # int8 does; MlirDiagnostic (a struct of one pointer) goes in as a pointer.
    return (ctypes.CFUNCTYPE(ctypes.c_int8, ctypes.c_void_p, ctypes.c_void_p),
            ctypes.CFUNCTYPE(None, string_ref, ctypes.c_void_p))


def _keep_diagnostic(lib, diag, sink: list) -> int:
    parts = []
    printer = _STRING_CALLBACK(lambda ref, _data: parts.append(
        ref.data[:ref.length].decode(errors="replace") if ref.data else ""))
    lib.mlirDiagnosticPrint(diag, printer, None)
    sink.append("".join(parts))
    return 1        # handled: not passed on to the default handler


_ENGINE_LOCK = threading.Lock()
_ENGINE_READY = False   # LLVM's native target registered (by a first engine)


class ReleasedEngine:
    """MLIR's ExecutionEngine over an LLVM-dialect module, created (LLVM's IR
    optimization) and looked up (code generation) with the GIL released.
    ``raw_lookup`` and ``dump_to_object_file`` as the bindings' engine."""

    def __init__(self, module: ir.Module, opt_level: int, shared_libs: list[str],
                 pic: bool = True):
        global _ENGINE_READY
        lib = _released_lib()
        _, ptr, string_ref = _capi_lib()
        self._lib = lib
        self._module = module       # the engine reads the module while it lives
        encoded = [s.encode() for s in shared_libs]
        refs = (string_ref * max(1, len(encoded)))(*[string_ref(s, len(s)) for s in encoded])
        raw = ptr(_CAPSULE_POINTER(module._CAPIPtr, _MODULE_CAPSULE))
        # The first engine of the process registers LLVM's native target
        # (a global list, not thread-safe): one at a time until that is done.
        if _ENGINE_READY:
            self._engine = lib.mlirExecutionEngineCreate(raw, opt_level, len(encoded), refs,
                                                         True, pic)
        else:
            with _ENGINE_LOCK:
                ready = _ENGINE_READY
                if not ready:
                    self._engine = lib.mlirExecutionEngineCreate(raw, opt_level, len(encoded),
                                                                 refs, True, pic)
                    _ENGINE_READY = True
            if ready:       # another thread's engine registered it meanwhile: no lock
                self._engine = lib.mlirExecutionEngineCreate(raw, opt_level, len(encoded), refs,
                                                             True, pic)
        if not self._engine.ptr:
            raise RuntimeError("ExecutionEngine could not be created (LLVM translation failed)")

    def raw_lookup(self, name: str) -> int:
        _, _, string_ref = _capi_lib()
        key = name.encode()
        return self._lib.mlirExecutionEngineLookupPacked(self._engine, string_ref(key, len(key))) \
            or 0

    def dump_to_object_file(self, path: str) -> None:
        _, _, string_ref = _capi_lib()
        key = str(path).encode()
        self._lib.mlirExecutionEngineDumpToObjectFile(self._engine, string_ref(key, len(key)))

    def __del__(self):
        engine = getattr(self, "_engine", None)
        if engine is not None and engine.ptr:
            self._lib.mlirExecutionEngineDestroy(engine)
            engine.ptr = None


# --- contexts made without the GIL (issue 14, compile time) ---
# ``ir.Context()`` loads every registered dialect (4-5 ms) and gradir's IRDL
# dialects take ~2.5 ms more, all with the GIL held: the parallel compile's
# contexts were made one after the other, while the main thread waited to
# split the program.  The same C API calls through ctypes run without the
# GIL, in threads, while the main thread works; ``wrap_context`` hands the
# result to the bindings (which then own it).

_CONTEXT_CAPSULE = b"mlir.ir.Context._CAPIPtr"
_REGISTRY_CAPSULE = b"mlir.ir.DialectRegistry._CAPIPtr"
_RAW = None


def _raw_lib():
    global _RAW
    if _RAW is not None:
        return _RAW
    import ctypes
    lib, ptr, string_ref = _capi_lib()
    with _CAPI_LOCK:
        if _RAW is None:
            for name, args, res in (
                    ("mlirContextCreateWithThreading", [ctypes.c_bool], ptr),
                    ("mlirContextAppendDialectRegistry", [ptr, ptr], None),
                    ("mlirContextLoadAllAvailableDialects", [ptr], None),
                    ("mlirRegisterAllLLVMTranslations", [ptr], None),
                    ("mlirContextDestroy", [ptr], None),
                    ("mlirLocationUnknownGet", [ptr], ptr),
                    ("mlirModuleCreateEmpty", [ptr], ptr),
                    ("mlirModuleCreateParse", [ptr, string_ref], ptr),
                    ("mlirModuleDestroy", [ptr], None),
                    ("mlirLoadIRDLDialects", [ptr], ctypes.c_int8)):
                getattr(lib, name).argtypes = args
                getattr(lib, name).restype = res
            new_capsule = ctypes.pythonapi.PyCapsule_New
            new_capsule.restype = ctypes.py_object
            new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            _RAW = (lib, new_capsule)
    return _RAW


def context_recipe(irdl_files) -> tuple:
    """What ``raw_context`` needs, read with the GIL: the bindings' dialect
    registry (every upstream dialect) and the IRDL files' text."""
    from mlir._mlir_libs import get_dialect_registry
    _, ptr, _ = _capi_lib()
    _raw_lib()
    registry = get_dialect_registry()
    raw = ptr(_CAPSULE_POINTER(registry._CAPIPtr, _REGISTRY_CAPSULE))
    texts = [open(path, "rb").read() for path in irdl_files]
    return registry, raw, texts


def raw_context(recipe: tuple, threading: bool = False):
    """A new MLIR context as ``ir.Context()`` makes it (the registry's
    dialects loaded, LLVM translations registered) plus the IRDL dialects
    of ``recipe``, made through the C API with the GIL released (call it in
    a thread).  Returns the C handle: ``wrap_context`` or ``drop_context``."""
    lib, _ = _raw_lib()
    _, _, string_ref = _capi_lib()
    _, registry, texts = recipe
    ctx = lib.mlirContextCreateWithThreading(threading)
    lib.mlirContextAppendDialectRegistry(ctx, registry)
    lib.mlirContextLoadAllAvailableDialects(ctx)
    lib.mlirRegisterAllLLVMTranslations(ctx)
    for text in texts:
        module = lib.mlirModuleCreateParse(ctx, string_ref(text, len(text)))
        loaded = bool(module.ptr) and lib.mlirLoadIRDLDialects(module)
        if module.ptr:
            lib.mlirModuleDestroy(module)
        if not loaded:
            lib.mlirContextDestroy(ctx)
            raise RuntimeError("gradir's IRDL dialects did not load into a new context")
    return ctx


def wrap_context(raw) -> ir.Context:
    """The bindings' context for a ``raw_context`` handle (they own it from
    now on: it is destroyed with the Python object)."""
    _, new_capsule = _raw_lib()
    return ir.Context._CAPICreate(new_capsule(raw.ptr, _CONTEXT_CAPSULE, None))


def drop_context(raw) -> None:
    """Destroys a ``raw_context`` handle that was never wrapped."""
    _raw_lib()[0].mlirContextDestroy(raw)


def parse_module_released(text: str, context: ir.Context) -> ir.Module:
    """``ir.Module.parse(text)`` in ``context`` with the GIL released for
    the parse; RuntimeError (no diagnostics: MLIR's default handler prints
    them) when the text does not parse.  For text gradir printed itself."""
    lib, _ = _raw_lib()
    _, ptr, string_ref = _capi_lib()
    data = text.encode()
    raw_ctx = ptr(_CAPSULE_POINTER(context._CAPIPtr, _CONTEXT_CAPSULE))
    module = lib.mlirModuleCreateParse(raw_ctx, string_ref(data, len(data)))
    if not module.ptr:
        raise RuntimeError("a part of the program did not parse")
    _, new_capsule = _raw_lib()
    return ir.Module._CAPICreate(new_capsule(module.ptr, _MODULE_CAPSULE, None))


def warm_up_llvm_targets_released() -> None:
    """Registers LLVM's native target with a tiny engine (the first engine
    of a process does), so engines created later in threads need no lock.
    Without the GIL (a thread runs it while the main thread splits the
    program): the engine's module lives in a context of its own, made and
    destroyed through the C API."""
    global _ENGINE_READY
    if _ENGINE_READY:
        return
    lib, _ = _raw_lib()
    engine_lib = _released_lib()
    _, _, string_ref = _capi_lib()
    ctx = lib.mlirContextCreateWithThreading(False)
    try:
        module = lib.mlirModuleCreateEmpty(lib.mlirLocationUnknownGet(ctx))
        try:
            with _ENGINE_LOCK:
                if not _ENGINE_READY:
                    engine = engine_lib.mlirExecutionEngineCreate(
                        module, 0, 0, (string_ref * 1)(), True, True)
                    if engine.ptr:
                        _ENGINE_READY = True
                        engine_lib.mlirExecutionEngineDestroy(engine)
        finally:
            lib.mlirModuleDestroy(module)
    finally:
        lib.mlirContextDestroy(ctx)

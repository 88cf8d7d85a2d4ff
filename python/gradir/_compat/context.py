"""Contexts and parsing: modules parsed with a source name, the dialect
module look-up of the IRDL dialects, and contexts made through the C API
without the GIL."""

from __future__ import annotations

import re
from typing import Iterable

from mlir import ir
from mlir.dialects import builtin

from .capi import (_CAPSULE_POINTER, _CONTEXT_CAPSULE, _MODULE_CAPSULE, _REGISTRY_CAPSULE,
                   _capi_lib, _raw_lib)

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


# --- contexts made without the GIL (issue 14, compile time) ---
# ``ir.Context()`` loads every registered dialect (4-5 ms) and gradir's IRDL
# dialects take ~2.5 ms more, all with the GIL held: the parallel compile's
# contexts were made one after the other, while the main thread waited to
# split the program.  The same C API calls through ctypes run without the
# GIL, in threads, while the main thread works; ``wrap_context`` hands the
# result to the bindings (which then own it).


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

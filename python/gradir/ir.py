"""Contexts with gradir's dialects loaded; parse and print helpers; the
IR-generic walks every package shares (functions by name, nested ops and
blocks, function types).  Nothing here knows a dialect."""

from __future__ import annotations

from pathlib import Path

from mlir import ir
from mlir.dialects import builtin, irdl

from . import _compat

__all__ = ["DIALECT_FILES", "load_dialects", "make_context", "parse", "print_module",
           "as_operation", "symbol_name", "functions", "find_function", "function_type",
           "set_function_type", "walk", "blocks_of", "has_uses"]

_DIALECT_DIR = Path(__file__).resolve().parent / "dialect"
DIALECT_FILES = (_DIALECT_DIR / "rlx.irdl.mlir", _DIALECT_DIR / "grad.irdl.mlir")


def load_dialects(context: ir.Context | None = None) -> ir.Context:
    """Loads the rlx and grad dialects (IRDL) into ``context`` (default: the
    current one).  Loading twice is a no-op."""
    ctx = context or ir.Context.current
    _compat.skip_dialect_module_lookup(("rlx", "grad"))
    if ctx.is_registered_operation("rlx.add"):
        return ctx
    for path in DIALECT_FILES:
        irdl.load_dialects(ir.Module.parseFile(str(path), context=ctx))
    return ctx


def make_context() -> ir.Context:
    """A new context that knows the upstream dialects plus rlx and grad."""
    ctx = ir.Context()
    load_dialects(ctx)
    return ctx


def parse(text: str, *, source_name: str = "<string>",
          context: ir.Context | None = None) -> builtin.ModuleOp:
    """Parses gradir IR (a module, or several top-level ops) into a module.

    Raises ``mlir.ir.MLIRError`` with located diagnostics on bad input."""
    ctx = context
    if ctx is None:
        try:
            ctx = ir.Context.current
        except ValueError:
            ctx = None
        ctx = ctx or make_context()
    load_dialects(ctx)
    return _compat.parse_module(text, source_name, ctx)


def as_operation(module) -> ir.Operation:
    """The ``ir.Operation`` behind a Module, ModuleOp or any OpView."""
    if isinstance(module, ir.Module):
        return module.operation
    return module.operation if hasattr(module, "operation") else module


def print_module(module, *, generic: bool = False, debug_info: bool = False) -> str:
    """The textual IR of ``module`` (byte-identical for identical IR)."""
    return as_operation(module).get_asm(print_generic_op_form=generic,
                                        enable_debug_info=debug_info,
                                        assume_verified=True)


# --- walking the IR -----------------------------------------------------------------

def symbol_name(op) -> str:
    """The ``sym_name`` of a symbol op (``func.func``, ``gpu.module``, ...)."""
    return ir.StringAttr(op.attributes["sym_name"]).value


def functions(module) -> list:
    """The ``func.func`` ops directly in ``module`` (an Operation or OpView), in order."""
    out = []
    for region in module.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                if op.name == "func.func":
                    out.append(op)
    return out


def find_function(module, name: str):
    """The ``func.func`` named ``name`` directly in ``module``, or None."""
    for fn in functions(module):
        if symbol_name(fn) == name:
            return fn
    return None


def function_type(fn) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)


def set_function_type(fn, inputs, results) -> None:
    """Sets ``fn``'s type; ``arg_attrs``/``res_attrs``, when present, are cut or
    padded (with empty dictionaries) to the new counts."""
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(inputs),
                                                                         list(results)))
    for key, n in (("arg_attrs", len(inputs)), ("res_attrs", len(results))):
        if key in fn.attributes:
            old = list(ir.ArrayAttr(fn.attributes[key]))
            old = old[:n] + [ir.DictAttr.get({})] * (n - len(old))
            fn.attributes[key] = ir.ArrayAttr.get(old)


def walk(op, *, descend=None):
    """Every op nested in ``op`` (pre-order, ``op`` excluded).  With
    ``descend``, the ops nested in ``inner`` are visited only when
    ``descend(inner)`` is true."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                yield inner
                if descend is None or descend(inner):
                    yield from walk(inner, descend=descend)


def blocks_of(op):
    """Every block nested under ``op``, outer blocks before inner ones."""
    for region in op.regions:
        for block in region.blocks:
            yield block
            for inner in block.operations:
                yield from blocks_of(inner.operation)


def has_uses(op) -> bool:
    """Whether any result of ``op`` is used."""
    return any(True for r in op.results for _ in r.uses)

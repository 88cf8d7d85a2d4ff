"""Contexts with gradir's dialects loaded; parse and print helpers."""

from __future__ import annotations

from pathlib import Path

from mlir import ir
from mlir.dialects import builtin, irdl

from . import _compat

__all__ = ["DIALECT_FILES", "load_dialects", "make_context", "parse", "print_module",
           "as_operation"]

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

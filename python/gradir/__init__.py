"""gradir: reverse-mode automatic differentiation on MLIR's rlx dialect.

The public API:
  gradir.make_context() / gradir.load_dialects(ctx)
  gradir.parse(text) -> builtin.ModuleOp
  gradir.run_pipeline(module, "builtin.module(rlx-dce,canonicalize)")
  gradir.print_module(module)
  gradir.interpret(module, "main", *arrays) -> tuple of numpy arrays
  gradir.passes.add(pm, "rlx-dce")
  gradir.compile(module, target="cpu") -> executable (exe["main_adjoint"](x, w))
  gradir.runtime.load("model.so")        (an exported library; numpy + ctypes only)

Attributes load lazily: ``import gradir.runtime`` does not import MLIR.
"""

from __future__ import annotations

__all__ = ["load_dialects", "make_context", "parse", "print_module", "run_pipeline",
           "interpret", "compile", "passes", "runtime"]

_FROM_IR = ("load_dialects", "make_context", "parse", "print_module")


def run_pipeline(module, pipeline: str):
    """Runs a textual pipeline (gradir and upstream passes mixed) on
    ``module`` in place and returns it.  Raises ``PipelineError`` for a bad
    pipeline and ``mlir.ir.MLIRError`` (with located diagnostics) when a pass
    fails; ``TypeError`` when ``module`` is no module or ``pipeline`` no text."""
    from .ir import as_operation
    from .passes.pipeline import build_pass_manager

    if not isinstance(pipeline, str):
        raise TypeError(f"run_pipeline expects a pipeline string, not "
                        f"{type(pipeline).__name__}")
    op = as_operation(module)
    if not hasattr(op, "context") or not hasattr(op, "regions"):
        raise TypeError(f"run_pipeline expects an MLIR module, not {type(module).__name__}")
    build_pass_manager(pipeline, op.context).run(op)
    return module


def interpret(module, fn: str, *args):
    """Evaluates ``@fn`` of ``module`` on numpy arrays with the reference
    interpreter; returns a tuple of numpy arrays."""
    from .interp import interpret as _interpret
    from .interp.core import InterpreterError
    from .ir import as_operation
    op = as_operation(module)
    if not hasattr(op, "regions"):
        raise TypeError(f"interpret expects an MLIR module, not {type(module).__name__}")
    # The interpreter assumes valid ops (gradir.parse does not run rlx-verify):
    # a strided_slice with a repeated axis returned a result of another shape.
    from .dialects.verify import verify_module
    errors = verify_module(op)
    if errors:
        from ._compat import format_location
        loc, message = errors[0]
        raise InterpreterError(f"{format_location(loc)}: {message}")
    return _interpret(module, fn, *args)


def compile(module, target: str = "cpu", **options):
    """Compiles every public function of an rlx module to machine code;
    see ``gradir.runtime.jit.compile``."""
    from .runtime.jit import compile as _compile
    return _compile(module, target, **options)


def __getattr__(name):
    import importlib
    if name in _FROM_IR:
        return getattr(importlib.import_module(".ir", __name__), name)
    if name in ("passes", "runtime"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'gradir' has no attribute '{name}'")

"""gradir: reverse-mode automatic differentiation on MLIR's rlx dialect.

The public API:
  gradir.make_context() / gradir.load_dialects(ctx)
  gradir.parse(text) -> builtin.ModuleOp
  gradir.run_pipeline(module, "builtin.module(rlx-dce,canonicalize)")
  gradir.print_module(module)
  gradir.interpret(module, "main", *arrays) -> tuple of numpy arrays
  gradir.passes.add(pm, "rlx-dce")
"""

from __future__ import annotations

from .ir import load_dialects, make_context, parse, print_module

__all__ = ["load_dialects", "make_context", "parse", "print_module", "run_pipeline",
           "interpret", "passes"]


def run_pipeline(module, pipeline: str):
    """Runs a textual pipeline (gradir and upstream passes mixed) on
    ``module`` in place and returns it.  Raises ``PipelineError`` for a bad
    pipeline and ``mlir.ir.MLIRError`` (with located diagnostics) when a pass
    fails."""
    from .ir import as_operation
    from .transforms.pipeline import build_pass_manager

    op = as_operation(module)
    build_pass_manager(pipeline, op.context).run(op)
    return module


def interpret(module, fn: str, *args):
    """Evaluates ``@fn`` of ``module`` on numpy arrays with the reference
    interpreter; returns a tuple of numpy arrays."""
    from .interp import interpret as _interpret
    return _interpret(module, fn, *args)


def __getattr__(name):
    if name == "passes":
        import importlib
        return importlib.import_module(".passes", __name__)
    raise AttributeError(name)

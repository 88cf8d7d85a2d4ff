"""gradir passes inside your own MLIR pipelines.

    ctx = mlir.ir.Context(); gradir.load_dialects(ctx)
    pm = mlir.passmanager.PassManager.parse("builtin.module(canonicalize)", ctx)
    gradir.passes.add(pm, "rlx-dce")
    gradir.passes.add(pm, "rlx-gradient", func="main", wrt=[0, 2])
    pm.run(module.operation)
"""

from __future__ import annotations

from mlir.passmanager import PassManager

from .. import _compat
from .pipeline import (PipelineError, _instantiate, _make_runner,
                                  add_to_pass_manager, parse_pipeline)
from .registry import PASSES, get_pass_class, pass_names

__all__ = ["add", "create", "PASSES", "pass_names", "get_pass_class", "describe", "show_default"]


def create(name: str, **options):
    """An instance of the gradir pass ``name`` with typed Python options
    (``wrt=[0, 2]``) or a pipeline element string (``"rlx-gradient{func=f}"``)."""
    if "{" in name and not options:
        (elem,) = parse_pipeline(name)
        if elem.name not in PASSES:
            raise PipelineError(f"'{elem.name}' is not a gradir pass", elem.column)
        return _instantiate(elem)
    if name not in PASSES:
        raise PipelineError(f"'{name}' is not a gradir pass (known: {', '.join(pass_names())})")
    cls = get_pass_class(name)
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    text_opts = {k.replace("_", "-"): _to_text(v) for k, v in kwargs.items()}
    return cls.from_options(text_opts)


def _to_text(value) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def add(pm: PassManager, name_or_pipeline: str, **options) -> None:
    """Adds a gradir pass (with options) to a user's PassManager.

    ``name_or_pipeline`` may also be a pipeline fragment mixing gradir and
    upstream passes (``"rlx-dce,canonicalize"``)."""
    if options or name_or_pipeline in PASSES:
        instance = create(name_or_pipeline, **options)
        expanded = instance.expand()
        if expanded is not None:                 # e.g. gpu-rlx-to-nvvm{stage=nvvm}
            add_to_pass_manager(pm, parse_pipeline(expanded))
            return
        _compat.add_python_pass(pm, _make_runner(instance, ()), instance.name,
                                instance.description())
        return
    add_to_pass_manager(pm, parse_pipeline(name_or_pipeline))


def show_default(default) -> str:
    """An option's default as the pipeline text spells it."""
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, tuple):
        return ",".join(map(str, default))
    return str(default)


def describe() -> str:
    """Every gradir pass with its description and options (for --list-passes)."""
    lines = []
    for name in pass_names():
        cls = get_pass_class(name)
        lines.append(f"  --{name}  -  {cls.description()}")
        for opt, tname, default, help_ in cls.options():
            shown = show_default(default)
            if "(default:" not in help_ and shown:
                help_ += f" (default: {shown})"
            lines.append(f"      {opt}=<{tname}>  -  {help_}")
    return "\n".join(lines)

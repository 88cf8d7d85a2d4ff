"""Every MLIR-version-specific call gradir makes, in one package.

gradir is pinned to upstream MLIR 22.1.8 through ``xtc-mlir-python-bindings``.
The pieces below are the ones whose signature or convention changed between
MLIR releases (parsing with a source name, the Python pass callable, pattern
callbacks, the ExecutionEngine ABI) or that reach past the bindings into
MLIR's C API.  Moving to the next MLIR release should touch this package
only: the rest of gradir imports these names from ``gradir._compat``, never
from a submodule, so a call can move between submodules freely.

Submodules, by the binding surface they wrap:

- ``capi``: the bindings' C API library through ctypes (C signatures,
  capsule names), which the others build on;
- ``context``: parsing with a source name, dialect module look-up, contexts
  made without the GIL;
- ``diagnostics``: locations and diagnostics, warnings and remarks;
- ``passes``: Python-defined passes, textual pipeline elements, the crash
  reproducer, pipeline runs without the GIL;
- ``patterns``: Python rewrite patterns and the greedy driver;
- ``engine``: the ExecutionEngine and its ABI, LLVM IR translation;
- ``ops``: ops reached without ``OpView`` wrapping (walks, uses, attributes);
- ``builders``: ``gpu.launch`` and the ``linalg`` builders without opdsl.
"""

from __future__ import annotations

from .builders import _linalg_namespace, gpu_launch
from .capi import _CAPSULE_POINTER, _VALUE_CAPSULE, op_key, value_key
from .context import (ParseError, context_recipe, drop_context, parse_module,
                      parse_module_released, raw_context, skip_dialect_module_lookup,
                      wrap_context)
from .diagnostics import (diagnostic_records, emit, format_location, format_mlir_error,
                          pop_diagnostic_sink, push_diagnostic_sink)
from .engine import (ORC_DEINIT_PREFIX, ORC_INIT_PREFIX, ReleasedEngine, execution_engine,
                     initialize_engine, stub_engine_symbols, translate_to_llvm_ir,
                     warm_up_llvm_targets_released)
from .ops import (block_ops, child_ops, clone_before, collect_ops, count_ops, defining_op,
                  is_dense_resource, parent_op, resource_blobs, set_attribute_from, terminator,
                  uses_of, value_is_vector)
from .passes import (PassFailure, add_python_pass, add_textual_pass, enable_crash_recovery,
                     run_pass_manager_released)
from .patterns import apply_patterns, apply_patterns_configured

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


def __getattr__(name: str):
    """``_compat.linalg``, built on first access (PEP 562)."""
    if name == "linalg":
        value = globals()["linalg"] = _linalg_namespace()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The rlx/grad verifier core: what the IRDL definitions cannot check
(element types, axes, broadcasting, inferred result types, attribute kinds).
Used by the ``rlx-verify`` pass, by ``rlx-to-linalg`` and by the tools."""

from __future__ import annotations

from mlir import ir

from ..ir import walk
from .infer import ATTRS, INFER, KIND_SPELLING, ShapeError, attribute_kind_ok
from .infer import _py_value, raw_attributes

__all__ = ["verify_module", "verify_op"]


def verify_op(op: ir.Operation) -> list[str]:
    """The error messages for one rlx/grad op (empty when it is valid).

    Each message starts with ``'<op name>' op ``, like MLIR verifiers."""
    op = op.operation if hasattr(op, "operation") else op
    name = op.name
    infer = INFER.get(name)
    if infer is None:
        return []
    prefix = f"'{name}' op "
    errors = []
    attrs = raw_attributes(op)
    for attr_name, (kind, required) in ATTRS.get(name, {}).items():
        attr = attrs.get(attr_name)
        if attr is None:
            if required:
                errors.append(f"{prefix}requires attribute '{attr_name}'")
            continue
        if not attribute_kind_ok(kind, attr):
            errors.append(f"{prefix}attribute '{attr_name}' must be {KIND_SPELLING[kind]}, "
                          f"got {attr}")
    if errors:
        return errors
    py = {k: _py_value(v) for k, v in attrs.items()}
    declared = [r.type for r in op.results]
    try:
        inferred = infer([o.type for o in op.operands], py, declared)
    except ShapeError as err:
        return [f"{prefix}{err}"]
    if len(inferred) != len(declared):
        return [f"{prefix}has {len(declared)} result(s), inferred {len(inferred)}"]
    for i, (d, t) in enumerate(zip(declared, inferred)):
        if d != t:
            what = "result type" if len(declared) == 1 else f"result #{i} type"
            errors.append(f"{prefix}{what} {d} does not match inferred {t}")
    return errors


def verify_module(module_op) -> list[tuple[ir.Location, str]]:
    """Every rlx/grad verification error under ``module_op`` (a Module,
    ModuleOp or Operation), as ``(location, message)`` in IR order."""
    if isinstance(module_op, ir.Module):
        module_op = module_op.operation
    module_op = module_op.operation if hasattr(module_op, "operation") else module_op
    out = []
    with module_op.context, module_op.location:  # inference builds types
        for op in walk(module_op):
            for message in verify_op(op):
                out.append((op.location, message))
    return out

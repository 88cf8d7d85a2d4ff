"""The rlx/grad verifier core: what the IRDL definitions cannot check
(element types, axes, broadcasting, inferred result types, attribute kinds).
Used by the ``rlx-verify`` pass, by ``rlx-to-linalg`` and by the tools."""

from __future__ import annotations

import re

from mlir import ir

from ..ir import walk
from .infer import ATTRS, INFER, KIND_SPELLING, ShapeError, attribute_kind_ok
from .infer import _py_value, raw_attributes

__all__ = ["constant_index", "verify_module", "verify_op", "resource_problems", "RESOURCE_OPS"]


def verify_op(op: ir.Operation) -> list[str]:
    """The error messages for one rlx/grad op, or an ``scf.for`` (empty when
    it is valid).

    Each message starts with ``'<op name>' op ``, like MLIR verifiers."""
    op = op.operation if hasattr(op, "operation") else op
    name = op.name
    if name == "scf.for":
        return _for_problems(op)
    infer = INFER.get(name)
    if infer is None:
        return []
    prefix = f"'{name}' op "
    errors = []
    for what, values in (("operand", op.operands), ("result", op.results)):
        for i, v in enumerate(values):
            t = v.type
            if isinstance(t, ir.RankedTensorType) and t.encoding is not None:
                # rlx tensors are plain dense tensors (lowering one failed
                # later with an internal type mismatch)
                errors.append(f"{prefix}{what} #{i} has a tensor encoding, which rlx does not "
                              f"support: {t}")
    if errors:
        return errors
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


def constant_index(value: ir.Value) -> int | None:
    """The integer an ``arith.constant`` of index or integer type gives
    ``value``, or None."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _for_problems(op: ir.Operation) -> list[str]:
    """A constant step of ``scf.for`` must be positive: MLIR accepts any,
    the interpreter refused a step <= 0 and the compiled code ran no trip
    (its adjoint divided by a step of 0: SIGSEGV).  A step computed at run
    time is checked when the code runs (``conversion/cpu/runtime_checks.py``)."""
    if len(op.operands) < 3:
        return []
    step = constant_index(op.operands[2])
    if step is not None and step <= 0:
        return [f"'scf.for' op step must be positive, got {step}"]
    return []


def verify_module(module_op) -> list[tuple[ir.Location, str]]:
    """Every rlx/grad verification error under ``module_op`` (a Module,
    ModuleOp or Operation), as ``(location, message)`` in IR order."""
    if isinstance(module_op, ir.Module):
        module_op = module_op.operation
    module_op = module_op.operation if hasattr(module_op, "operation") else module_op
    out, holders = [], []
    with module_op.context, module_op.location:  # inference builds types
        for op in walk(module_op):
            for message in verify_op(op):
                out.append((op.location, message))
            if op.operation.name in RESOURCE_OPS:
                holders.append(op.operation)
        out += resource_problems(module_op, holders)
    return out


# --- dense_resource constants (hostile-input review) ---------------------------------

# Ops whose elements attribute may be a dense_resource.
RESOURCE_OPS = frozenset(("arith.constant", "memref.global", "ml_program.global"))
_KEY = re.compile(r'dense_resource<("(?:[^"\\]|\\.)*"|[^>]*)>')


def _element_bytes(t: ir.Type) -> int | None:
    if isinstance(t, ir.ComplexType):
        inner = _element_bytes(ir.ComplexType(t).element_type)
        return None if inner is None else 2 * inner
    if isinstance(t, ir.IndexType):
        return 8
    for cls in (ir.IntegerType, ir.FloatType):
        if isinstance(t, cls):
            return -(-cls(t).width // 8)
    return None


def resource_problems(module_op, holders) -> list[tuple[ir.Location, str]]:
    """Errors for the ``dense_resource`` elements of ``holders`` (ops of
    ``module_op`` among ``RESOURCE_OPS``) whose blob is missing from the
    module's ``dialect_resources`` or has not the bytes their type needs.
    MLIR parses both and verifies them; LLVM's translation then reports
    "resource does not exist" / "raw data size does not match" and the
    bindings read a null module (SIGSEGV).  The module is printed (its
    resource section read back) only when such an attribute is there."""
    from .. import _compat
    found = []
    for op in holders:
        for name in ("value", "initial_value"):
            if name in op.attributes and _compat.is_dense_resource(op.attributes[name]):
                found.append((op, op.attributes[name]))
    if not found:
        return []
    blobs = {key: len(data) for key, data in _compat.resource_blobs(module_op).items()}
    out = []
    for op, attr in found:
        match = _KEY.search(str(attr))
        key = match.group(1) if match else "?"
        shaped = ir.ShapedType(attr.type)
        width = _element_bytes(shaped.element_type)
        if key not in blobs:
            out.append((op.location, f"'{op.name}' op dense_resource<{key}> has no data: the "
                                     f"module's dialect_resources hold no blob '{key}'"))
        elif width is not None and shaped.has_static_shape:
            need = width
            for n in shaped.shape:
                need *= n
            if blobs[key] != need:
                out.append((op.location, f"'{op.name}' op dense_resource<{key}> has "
                                         f"{max(blobs[key], 0)} byte(s) of data, its type "
                                         f"{attr.type} needs {need}"))
    return out

"""Ops reached without ``OpView`` wrapping: MLIR's walk and C API hand
them to Python as plain ``ir.Operation``s.  The bindings wrap every op they
hand out (``block.operations``, ``value.owner``, ``op.parent``) in an
``OpView``, which imports the op's dialect module the first time (issue 14,
compile time); what the bindings do not expose is read through the C API
(``capi``)."""

from __future__ import annotations

import re
from typing import Callable

from mlir import ir

from .capi import (_ATTR_CAPSULE, _BLOCK_CAPSULE, _CAPSULE_POINTER, _OP_CAPSULE,
                   _VALUE_CAPSULE, _capi_lib, _operation)


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

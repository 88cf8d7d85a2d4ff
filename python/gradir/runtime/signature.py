"""Signatures of an rlx module's public functions, read before lowering."""

from __future__ import annotations

from mlir import ir

from .abi import BOUNDARY_DTYPES, ArgumentError, Signature, TensorSpec, numpy_dtype

__all__ = ["CompileError", "public_functions", "signature_of", "select_functions"]


class CompileError(Exception):
    """A module cannot be compiled; ``location`` names the offending place."""

    def __init__(self, message: str, location=None):
        super().__init__(message)
        self.location = location


def public_functions(module_op: ir.Operation) -> list[ir.Operation]:
    """func.func ops with a body and without private visibility, in order."""
    out = []
    for op in module_op.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "func.func" or len(op.regions[0].blocks) == 0:
            continue
        vis = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
        if vis is not None and ir.StringAttr(vis).value == "private":
            continue
        out.append(op)
    return out


def _flatten_type(t, fn, what: str, flat: list):
    if isinstance(t, ir.TupleType):
        return tuple(_flatten_type(t.get_type(i), fn, what, flat) for i in range(t.num_types))
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        raise CompileError(f"cannot compile @{_name(fn)}: {what} has type {t}; only "
                           "statically shaped tensors (and tuples of them) cross the "
                           "numpy boundary", fn.location)
    elem = str(t.element_type)
    if elem not in BOUNDARY_DTYPES:
        raise CompileError(f"cannot compile @{_name(fn)}: {what} has element type {elem}, "
                           "which has no numpy equivalent", fn.location)
    try:
        numpy_dtype(BOUNDARY_DTYPES[elem])      # (bf16: ml_dtypes installed)
    except ArgumentError as err:
        raise CompileError(f"cannot compile @{_name(fn)}: {what}: {err}", fn.location) from None
    flat.append(TensorSpec(tuple(t.shape), BOUNDARY_DTYPES[elem]))
    return len(flat) - 1


def _name(fn: ir.Operation) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def signature_of(fn: ir.Operation) -> Signature:
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs: list = []
    in_tree = tuple(_flatten_type(t, fn, f"argument {i}", inputs)
                    for i, t in enumerate(ftype.inputs))
    outputs: list = []
    out_tree = tuple(_flatten_type(t, fn, f"result {i}", outputs)
                     for i, t in enumerate(ftype.results))
    return Signature(_name(fn), tuple(inputs), in_tree, tuple(outputs), out_tree,
                     largest_buffer_bytes(fn))


def _bytes(t) -> int:
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return 0
    width = t.element_type.width if hasattr(t.element_type, "width") else 64
    count = 1
    for d in t.shape:
        count *= d
    return count * max(1, (width + 7) // 8)


def largest_buffer_bytes(fn: ir.Operation) -> int:
    """Bytes of the largest tensor an op of ``fn`` (or of a function it
    calls) produces: a lower bound of what one call must allocate."""
    table = fn.parent if fn.parent is not None else None
    callees = {}
    if table is not None:
        for op in table.regions[0].blocks[0].operations if table.regions else []:
            op = op.operation
            if op.name == "func.func":
                callees[_name(op)] = op
    seen, todo, largest = set(), [fn], 0
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        stack = [f]
        while stack:
            op = stack.pop()
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        inner = inner.operation
                        for r in inner.results:
                            largest = max(largest, _bytes(r.type))
                        if inner.name == "func.call":
                            callee = ir.FlatSymbolRefAttr(inner.attributes["callee"]).value
                            if callee in callees:
                                todo.append(callees[callee])
                        stack.append(inner)
    return largest


def select_functions(module_op: ir.Operation, functions=None) -> dict:
    """Signatures of ``module_op``'s public functions, by name; with
    ``functions`` (names), only those: the others are made private in
    place (symbol-dce then drops them before lowering)."""
    sigs = {}
    for fn in public_functions(module_op):
        sig = signature_of(fn)
        if functions is not None and sig.name not in functions:
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
            continue
        sigs[sig.name] = sig
    return sigs


def interface_matches(module_op: ir.Operation, signatures: dict, functions=None) -> bool:
    """Whether ``signatures`` (of a library) are exactly the public
    functions of ``module_op`` (those of ``functions`` only, when given),
    with the same flattened argument and result tensors: a compile-cache
    entry is checked with it before its code is used.  Reads the function
    types only (``signature_of`` also walks the bodies)."""
    want = {}
    try:
        for fn in public_functions(module_op):
            name = _name(fn)
            if functions is not None and name not in functions:
                continue
            ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
            inputs, outputs = [], []
            in_tree = tuple(_flatten_type(t, fn, f"argument {i}", inputs)
                            for i, t in enumerate(ftype.inputs))
            out_tree = tuple(_flatten_type(t, fn, f"result {i}", outputs)
                             for i, t in enumerate(ftype.results))
            want[name] = (tuple(inputs), in_tree, tuple(outputs), out_tree)
    except CompileError:
        return False
    have = {name: (tuple(sig.inputs), tuple(sig.input_tree), tuple(sig.outputs),
                   tuple(sig.output_tree)) for name, sig in signatures.items()}
    return want == have

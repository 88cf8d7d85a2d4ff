"""The core of reverse-mode AD: clone a function, walk it backwards,
accumulate adjoints, and return gradients (Relax's Gradient, in MLIR).

This module knows nothing of passes or options; ``transforms/rlx_gradient.py``
is the pass that drives it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mlir import ir
from mlir.dialects import func

from ..dialects import rlx
from ..ir import (find_function, function_type, functions,  # noqa: F401  (re-exported)
                  set_function_type, symbol_name)
from .regions import CHECK, FINISH, PREPARE, REGION_RULES, region_inputs, walk_nested
from .rules import NON_DIFFERENTIABLE, get_rule, is_float_type

__all__ = ["GradientError", "differentiate", "find_function", "inline_calls",
           "clone_function", "clone_ops", "insertion_point_after", "Adjoints"]


class GradientError(Exception):
    """A refusal, reported as an MLIR error at ``where``'s location."""

    def __init__(self, where, message: str):
        super().__init__(message)
        self.where = where
        self.message = message


# ----------------------------------------------------------------------------
# Function-level helpers

def body_of(fn: ir.Operation) -> ir.Block:
    return fn.regions[0].blocks[0]


def clone_function(fn: ir.Operation, new_name: str) -> ir.Operation:
    """Clones ``fn`` right after itself under ``new_name`` (public)."""
    clone = fn.clone(ip=insertion_point_after(fn))
    clone.attributes["sym_name"] = ir.StringAttr.get(new_name)
    if "sym_visibility" in clone.attributes:
        del clone.attributes["sym_visibility"]
    return clone


def insertion_point_after(op) -> ir.InsertionPoint:
    """An insertion point right after ``op`` in its block."""
    op = op.operation
    ops = list(op.block.operations)
    for i, o in enumerate(ops):
        if o.operation == op and i + 1 < len(ops):
            return ir.InsertionPoint(ops[i + 1])
    return ir.InsertionPoint(op.block)


def clone_ops(ops, mapping: dict) -> None:
    """Clones ``ops`` in order at the current insertion point, replacing
    operands (also those used inside the ops' regions) through ``mapping`` and
    recording each result's clone in it."""
    for op in ops:
        new = op.clone()
        for i, v in enumerate(new.operands):
            if v in mapping:
                new.operands[i] = mapping[v]
        if new.regions:
            for inner in walk_nested(new):
                for i, v in enumerate(inner.operands):
                    if v in mapping:
                        inner.operands[i] = mapping[v]
        for old, nv in zip(op.results, new.results):
            mapping[old] = nv


def terminator(block: ir.Block) -> ir.Operation:
    return block.operations[-1].operation


# ----------------------------------------------------------------------------
# Inlining calls that have no custom VJP

_MAX_INLINE_DEPTH = 32
# Inlining a call graph that calls functions several times can grow
# exponentially (a diamond of N levels makes 2^N copies): stop well before.
_MAX_INLINED_OPS = 200_000


class _CallGraph:
    """The module's functions by name (the first of a name, as
    ``find_function``), and which of them reach themselves through calls
    without ``keep`` (also calls in loop and branch bodies): built as the
    inlining reaches them, once per ``inline_calls``, so a chain of N
    functions costs O(N) lookups and walks, not O(N^2) per depth."""

    def __init__(self, module: ir.Operation, keep: str):
        self.keep = keep
        self.table: dict = {}
        for f in functions(module):
            self.table.setdefault(symbol_name(f), f)
        self._index: dict = {}      # Tarjan's numbering of the visited functions
        self._low: dict = {}
        self._cyclic: set = set()   # names on a cycle of calls

    def find(self, name: str):
        return self.table.get(name)

    def recursive(self, name: str) -> bool:
        """Whether ``@name`` reaches itself through calls without ``keep``."""
        if name not in self._index:
            self._visit(name)
        return name in self._cyclic

    def _callees(self, name: str) -> list:
        f = self.table.get(name)
        if f is None or not len(f.regions[0].blocks):
            return []
        return [ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                for op in walk_nested(f)
                if op.name == "func.call" and self.keep not in op.attributes]

    def _visit(self, root: str) -> None:
        """Tarjan's strongly connected components from ``root``, without
        recursion (a chain of thousands of functions)."""
        index, low = self._index, self._low
        stack: list = []
        on_stack: set = set()
        work: list = []

        def push(v):
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
            callees = self._callees(v)
            if v in callees:
                self._cyclic.add(v)
            work.append((v, iter(callees)))

        push(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    push(w)
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        self._cyclic.update(component)


def inline_calls(module: ir.Operation, fn: ir.Operation, depth: int = 0,
                 keep: str = "grad.vjp", check=None, calls: _CallGraph | None = None) -> None:
    """Inlines every ``func.call`` in ``fn`` (also in loop and branch bodies)
    that has no ``keep`` attribute (a ``grad.vjp``; forward mode keeps the
    calls with a ``grad.jvp``), so the callee is differentiated through.
    ``check``: what refuses a callee (default ``check_supported``; forward
    mode's takes more).  ``calls``: the module's call graph (built here when
    first needed; passed on to the deeper levels)."""
    check = check or check_supported
    block = body_of(fn)
    inlined = False
    for op in list(walk_nested(fn)):
        if op.name != "func.call" or keep in op.attributes:
            continue
        inlined = True
        if calls is None:
            calls = _CallGraph(module, keep)
        callee_name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        callee = calls.find(callee_name)
        if callee is None or len(callee.regions[0].blocks) == 0:
            raise GradientError(op, f"cannot differentiate through '@{callee_name}': "
                                    f"it has no body (give the call a {keep} function)")
        if depth >= _MAX_INLINE_DEPTH:
            raise GradientError(op, f"cannot differentiate through '@{callee_name}': calls "
                                    f"nest more than {_MAX_INLINE_DEPTH} deep (give a call "
                                    f"a {keep} function to stop inlining there)")
        if calls.recursive(callee_name):
            raise GradientError(op, f"recursive call to '@{callee_name}' is not supported")
        check(callee)
        mapping: dict = {}
        cblock = body_of(callee)
        for arg, operand in zip(cblock.arguments, op.operands):
            mapping[arg] = operand
        body = [o.operation for o in cblock.operations]
        with ir.InsertionPoint(op):
            clone_ops(body[:-1], mapping)
        results = [mapping.get(v, v) for v in body[-1].operands]
        for old, nv in zip(op.results, results):
            old.replace_all_uses_with(nv)
        op.erase()
    n_ops = sum(1 for _ in block.operations)
    if n_ops > _MAX_INLINED_OPS:
        raise GradientError(fn, f"inlining the calls of '@{ir.StringAttr(fn.attributes['sym_name']).value}' "
                                f"makes more than {_MAX_INLINED_OPS} ops (functions called "
                                "many times over); give the repeated calls grad.vjp functions")
    # Calls brought in by inlining are inlined in turn.
    if inlined and any(o.name == "func.call" and keep not in o.attributes
                       for o in walk_nested(fn)):
        inline_calls(module, fn, depth + 1, keep, check, calls)


_ALLOWED_OPS = ("rlx.", "grad.")
_ALLOWED_EXACT = frozenset({"arith.constant", "func.call", "func.return"})


def check_supported(fn: ir.Operation) -> None:
    """Refuses what the pass cannot differentiate yet (control flow, ops of
    other dialects with regions)."""
    region = fn.regions[0]
    if len(region.blocks) != 1:
        raise GradientError(fn, "control flow is not supported: the function must have "
                                "exactly one block")
    for op in walk_nested(fn):
        if op.name.startswith(_ALLOWED_OPS) or op.name in _ALLOWED_EXACT:
            continue
        if any(check(op) for check in CHECK):   # control flow (autodiff/scf)
            continue
        if op.regions:
            raise GradientError(op, f"control flow is not supported: '{op.name}' has regions")
        raise GradientError(op, f"'{op.name}' is not supported by rlx-gradient "
                                "(only rlx, grad, arith.constant and func.call ops)")


# ----------------------------------------------------------------------------
# Adjoints: a Value, a list (for tuple-typed values, one entry per field),
# or None (zero).

def _tuple_types(t: ir.Type) -> list[ir.Type]:
    tt = ir.TupleType(t)
    return [tt.get_type(i) for i in range(tt.num_types)]


def fields_of(adj, t: ir.Type) -> list:
    """The per-field adjoints of a tuple-typed value's adjoint."""
    if adj is None:
        return [None] * ir.TupleType(t).num_types
    if isinstance(adj, list):
        return adj
    return [rlx.tuple_get_item(adj, i) for i in range(ir.TupleType(t).num_types)]


def add_adjoints(a, b, t: ir.Type):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(t, ir.TupleType):
        types = _tuple_types(t)
        return [add_adjoints(x, y, ft) for x, y, ft in zip(fields_of(a, t), fields_of(b, t), types)]
    return rlx.add(a, b)


def zeros_of(t: ir.Type) -> ir.Value:
    if isinstance(t, ir.TupleType):
        return rlx.tuple_([zeros_of(ft) for ft in _tuple_types(t)])
    rt = ir.RankedTensorType(t)
    return rlx.zeros(list(rt.shape), rt.element_type)


def materialize(adj, t: ir.Type) -> ir.Value:
    """An adjoint as a value of type ``t`` (zeros where it is None)."""
    if adj is None:
        return zeros_of(t)
    if isinstance(adj, list):
        return rlx.tuple_([materialize(a, ft) for a, ft in zip(adj, _tuple_types(t))])
    return adj


# ----------------------------------------------------------------------------
# The backward sweep

@dataclass
class Adjoints:
    """Accumulated adjoints keyed by forward value."""
    table: dict = field(default_factory=dict)
    _float: dict = field(default_factory=dict)     # type -> is_float_type(type)

    def get(self, v):
        return self.table.get(v)

    def accumulate(self, v: ir.Value, adj) -> None:
        if adj is None:
            return
        t = v.type
        is_float = self._float.get(t)
        if is_float is None:
            is_float = self._float[t] = is_float_type(t)
        if not is_float:
            return
        self.table[v] = add_adjoints(self.table.get(v), adj, t)


def _active_values(block: ir.Block, wrt_args, ops=None) -> set:
    """Values that depend differentiably on the ``wrt`` arguments (results
    of ``ops``, default the ops of ``block``)."""
    active = set(wrt_args)
    floats: dict = {}       # type -> is_float_type(type)
    for op in (block.operations if ops is None else ops):
        op = op.operation
        name = op.name
        if name in NON_DIFFERENTIABLE or name == "grad.no_grad":
            continue
        for v in (region_inputs(op) if len(op.regions) else op.operands):
            if v in active:
                break
        else:
            continue
        for r in op.results:
            t = r.type
            is_float = floats.get(t)
            if is_float is None:
                is_float = floats[t] = is_float_type(t)
            if is_float:
                active.add(r)
    return active


def backward(block: ir.Block, forward_ops: list, seeds: dict, wrt_args,
             call_vjp: Callable | None = None, straight: bool = False) -> Adjoints:
    """Runs the reverse sweep over ``forward_ops`` (ops of ``block``), with
    the insertion point at the end of ``block`` (before nothing).  ``seeds``
    maps forward values to their initial adjoints.  ``straight``: the
    forward ops are all the ops of ``block`` but ops without operands (a
    ``scan_straight`` body and its seeds), so activity is read from them."""
    active = _active_values(block, wrt_args, forward_ops if straight else None)
    adj = Adjoints()
    for v, s in seeds.items():
        if v in active:
            adj.accumulate(v, s)
    for op in reversed(forward_ops):
        grads = [adj.get(r) for r in op.results]
        if all(g is None for g in grads):
            continue
        if not any(v in active for v in region_inputs(op)):
            continue
        with op.location:
            _propagate(op, grads, adj, active, call_vjp)
    return adj


def _propagate(op: ir.Operation, grads: list, adj: Adjoints, active: set,
               call_vjp) -> None:
    name = op.name
    if name in ("grad.start_checkpoint", "grad.end_checkpoint"):
        adj.accumulate(op.operands[0], grads[0])
        return
    if name == "grad.no_grad" or name in NON_DIFFERENTIABLE:
        return
    if name in REGION_RULES:   # scf.for / scf.if / scf.while (autodiff/scf)
        REGION_RULES[name](op, grads, adj, active, call_vjp)
        return
    if name == "rlx.tuple":
        for operand, g in zip(op.operands, fields_of(grads[0], op.results[0].type)):
            adj.accumulate(operand, g)
        return
    if name == "rlx.tuple_get_item":
        src = op.operands[0]
        index = rlx.attributes_of(op)["index"]
        n = ir.TupleType(src.type).num_types
        fields = [None] * n
        fields[index] = grads[0]
        adj.accumulate(src, fields)
        return
    if name == "func.call":
        callee_adjs = call_vjp(op, grads)
        for operand, g in zip(op.operands, callee_adjs):
            if operand in active:
                adj.accumulate(operand, g)
        return
    rule = get_rule(name)
    if rule is None:
        raise GradientError(op, f"no gradient rule for '{name}' on the path to the target "
                                "(mark it with grad.no_grad or give a custom grad.vjp)")
    results = rule(op, grads)
    if len(results) != len(op.operands):
        raise GradientError(op, f"internal error: VJP rule of '{name}' returned "
                                f"{len(results)} adjoints for {len(op.operands)} operands")
    for operand, g in zip(op.operands, results):
        if g is not None and operand in active:
            adj.accumulate(operand, g)


def custom_vjp_caller(module: ir.Operation):
    """The ``func.call {grad.vjp = @f_vjp}`` convention: ``@f_vjp`` takes the
    call's operands followed by one cotangent per call result and returns one
    gradient per operand (Relax's call_tir_with_grad)."""

    def call(op: ir.Operation, grads: list) -> list:
        attr = op.attributes["grad.vjp"]
        if not isinstance(attr, ir.FlatSymbolRefAttr):
            raise GradientError(op, f"grad.vjp must name a function (grad.vjp = @f_vjp), "
                                    f"got {attr}")
        vjp_name = ir.FlatSymbolRefAttr(attr).value
        vjp_fn = find_function(module, vjp_name)
        if vjp_fn is None:
            raise GradientError(op, f"grad.vjp names '@{vjp_name}', which does not exist")
        operands = list(op.operands)
        cots = [materialize(g, r.type) for g, r in zip(grads, op.results)]
        ftype = function_type(vjp_fn)
        want_in = [v.type for v in operands] + [r.type for r in op.results]
        want_out = [v.type for v in operands]
        if list(ftype.inputs) != want_in or list(ftype.results) != want_out:
            sig = lambda ts: ", ".join(str(t) for t in ts)  # noqa: E731
            raise GradientError(op, f"grad.vjp function '@{vjp_name}' must have type "
                                    f"({sig(want_in)}) -> ({sig(want_out)}), "
                                    f"it has {ftype}")
        call_op = func.CallOp(list(ftype.results), ir.FlatSymbolRefAttr.get(vjp_name),
                              operands + cots)
        return list(call_op.results)

    return call


def scan_straight(block: ir.Block):
    """One read of a body of rlx ops ending in ``func.return`` (no regions,
    no calls: the common case): ``(its ops less the terminator, whether one
    carries a grad.* attribute, whether one carries a checkpoint pin)``;
    None for any other body.  Spares ``differentiate`` and rlx-gradient
    their separate walks of the body (checks, inlining, marks)."""
    ops = [o.operation for o in block.operations]
    if not ops or ops[-1].name != "func.return":
        return None
    ops.pop()
    graded = pinned = False
    for op in ops:
        if not op.name.startswith("rlx."):    # (rlx ops have no regions)
            return None
        attrs = op.attributes
        n = len(attrs)
        for i in range(n):
            name = attrs[i].name
            if name.startswith("grad."):
                graded = True
                if name in ("grad.save", "grad.recompute"):
                    pinned = True
    return ops, graded, pinned


def differentiate(module: ir.Operation, fn: ir.Operation, seeds_for: Callable,
                  wrt: list[int], scan=None) -> tuple[list, list]:
    """Differentiates ``fn`` in place (it should be a fresh clone).

    ``seeds_for(results) -> {value: adjoint}`` creates the seeds at the end of
    the block.  The return op is removed; returns ``(forward results,
    gradients of the wrt arguments)`` — values the caller returns.
    ``scan``: ``scan_straight`` of ``fn``'s body, when the caller has it."""
    if scan is None:
        check_supported(fn)
        inline_calls(module, fn)
    elif len(fn.regions[0].blocks) != 1:
        raise GradientError(fn, "control flow is not supported: the function must have "
                                "exactly one block")
    block = body_of(fn)
    ret = terminator(block)
    args = list(block.arguments)
    wrt_args = [args[i] for i in wrt]
    if scan is not None:    # rlx ops only: allowed, no calls, no regions
        forward_ops, has_regions, marked = list(scan[0]), False, scan[1]
    else:
        forward_ops = [o.operation for o in block.operations][:-1]
        has_regions = any(len(op.regions) for op in forward_ops)
        if has_regions:
            for prepare in PREPARE:   # loops record what their backward needs
                forward_ops = prepare(block, forward_ops, _active_values(block, wrt_args))
        # The FINISH hooks drop grad.* bookkeeping marks, which only loops and
        # the ops the user marked carry (the ops the rules build carry none).
        marked = has_regions or any(
            len(op.attributes) and any(op.attributes[i].name.startswith("grad.")
                                       for i in range(len(op.attributes)))
            for op in forward_ops)
    results = list(ret.operands)
    ret.erase()
    with ir.InsertionPoint(block):
        seeds = seeds_for(results)
        adj = backward(block, forward_ops, seeds, wrt_args, custom_vjp_caller(module),
                       straight=scan is not None)
        with fn.location:
            grads = [materialize(adj.get(a), a.type) for a in wrt_args]
    for finish in FINISH if marked else ():
        finish(fn)
    return results, grads

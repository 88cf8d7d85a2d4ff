"""The core of forward-mode AD: build a function that computes a function's
results and, beside every value, its tangent (JAX's ``jvp``, Enzyme's
forward mode).

    func.func @main(%x: T) -> R { %y = "rlx.exp"(%x) ; return %y }
becomes (``build_forward`` with a tangent argument per ``wrt`` argument)
    func.func @main_jvp(%x: T, %dx: T) -> (R, R) {
      %y = "rlx.exp"(%x) ; %dy = "rlx.multiply"(%dx, %y) ; return %y, %dy }

Tangents may carry leading *batch* dims (``batch``): a tangent of a value of
shape ``s`` has shape ``batch + s``.  A Jacobian pushes a whole basis through
at once that way (one vectorized program, not one call per basis vector).
Each op's tangent comes from its JVP rule (``autodiff/rules``, beside its VJP
rule); a rule registered with ``batched=False`` is called once per basis
vector and the pieces stacked.  ``scf.for``/``scf.while`` carry the tangents
of their float iter_args as extra iter_args, ``scf.if`` yields them as extra
results; calls are inlined first (a ``grad.vjp`` function is a reverse-mode
override: forward mode differentiates the callee's body), except those with a
``grad.jvp = @f_jvp``, whose function gives the results and their tangents.  Tuples carry a
tangent per field.  A zero tangent is ``None`` until something needs it
materialized (a loop-carried value, a result).

This module knows nothing of passes or options; ``transforms/rlx_gradient.py``
drives it (``autodiff/compose.py`` builds Jacobians and Hessians on it).
"""

from __future__ import annotations

from typing import Callable

from mlir import ir
from mlir.dialects import arith, func, scf

from ..dialects import rlx
from .gradient import (GradientError, body_of, clone_function, inline_calls,
                       insertion_point_after, set_function_type, terminator)
from .cleanup import copy_attributes
from .regions import region_inputs
from .rules import NON_DIFFERENTIABLE, get_jvp_rule, is_float_type

__all__ = ["build_forward", "tangent_type", "materialize_tangent", "prepared_clone"]


# ----------------------------------------------------------------------------
# Tangent types and values

def _tuple_types(t: ir.Type) -> list[ir.Type]:
    tt = ir.TupleType(t)
    return [tt.get_type(i) for i in range(tt.num_types)]


def tangent_type(t: ir.Type, batch=()) -> ir.Type:
    """The type of a tangent of a value of type ``t`` (batch dims first)."""
    if isinstance(t, ir.TupleType):
        return ir.TupleType.get_tuple([tangent_type(f, batch) for f in _tuple_types(t)])
    rt = ir.RankedTensorType(t)
    if not batch:
        return t
    return ir.RankedTensorType.get(list(batch) + list(rt.shape), rt.element_type)


def _zeros(t: ir.Type, batch=()) -> ir.Value:
    if isinstance(t, ir.TupleType):
        return rlx.tuple_([_zeros(f, batch) for f in _tuple_types(t)])
    rt = ir.RankedTensorType(tangent_type(t, batch))
    elt = rt.element_type
    if isinstance(elt, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        return rlx.zeros(list(rt.shape), elt)
    attr = ir.DenseElementsAttr.get_splat(rt, ir.IntegerAttr.get(elt, 0))
    return arith.ConstantOp(rt, attr).result


def _stack_tangent(v: ir.Value, batch) -> ir.Value:
    """The zero tangent of a dynamically sized value ``v``: only reverse
    mode's stacks of loop states have a dynamic shape (rlx values are
    static), and a stack's every slot is written before it is read, so an
    uninitialized ``tensor.empty`` of ``batch +`` its size serves."""
    from mlir.dialects import tensor
    rt = ir.RankedTensorType(v.type)
    dims = []
    for i, d in enumerate(rt.shape):
        if rt.is_dynamic_dim(i):
            dims.append(tensor.DimOp(v, arith.ConstantOp(ir.IndexType.get(), i).result).result)
    sizes = list(batch) + [dims.pop(0) if rt.is_dynamic_dim(i) else d
                           for i, d in enumerate(rt.shape)]
    return tensor.EmptyOp(sizes, rt.element_type).result


def materialize_tangent(t, primal_type: ir.Type, batch=()) -> ir.Value:
    """A tangent as a value (zeros where it is None; a tuple from fields)."""
    if t is None:
        return _zeros(primal_type, batch)
    if isinstance(t, list):
        return rlx.tuple_([materialize_tangent(f, ft, batch)
                           for f, ft in zip(t, _tuple_types(primal_type))])
    return t


def _field(t, i: int):
    if t is None:
        return None
    if isinstance(t, list):
        return t[i]
    return rlx.tuple_get_item(t, i)


# ----------------------------------------------------------------------------
# Preparing the source: calls inlined into a scratch clone

def prepared_clone(module: ir.Operation, fn: ir.Operation, name: str) -> ir.Operation:
    """A private clone of ``fn`` named ``name`` with every call inlined (also
    those with a ``grad.vjp``: a VJP says nothing of the forward derivative);
    refuses what cannot be differentiated.  The caller erases it."""
    from . import scf as _scf  # noqa: F401  (registers the scf checks)
    clone = clone_function(fn, name)
    clone.attributes["sym_visibility"] = ir.StringAttr.get("private")
    from ..ir import find_function
    from .regions import walk_nested
    for op in walk_nested(clone):
        if op.name != "func.call":
            continue
        if "grad.jvp" in op.attributes:
            _check_custom_jvp(module, op)
            continue
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        target = find_function(module, callee)
        if target is None or not len(target.regions[0].blocks):
            raise GradientError(op, f"forward mode cannot differentiate through '@{callee}': "
                                    "it has no body (give the call a grad.jvp function; a "
                                    "grad.vjp function serves reverse mode only)")
        if "grad.vjp" in op.attributes:
            del op.attributes["grad.vjp"]
    _check_forward(clone)
    inline_calls(module, clone, keep="grad.jvp", check=_check_forward)
    for op in walk_nested(clone):      # (also those the callees brought in)
        if op.name == "func.call" and "grad.jvp" in op.attributes:
            _check_custom_jvp(module, op)
    return clone


# What forward mode takes: rlx and grad ops, and the scf/arith/tensor/func
# ops of control flow and of reverse mode's own stacks (a gradient's
# dynamically sized stack of loop states is ordinary input here, unlike in
# reverse mode).
_FORWARD_OPS = ("rlx.", "grad.", "arith.", "tensor.", "scf.", "func.call", "func.return")
_REGION_OPS = frozenset({"scf.for", "scf.if", "scf.while"})


def _check_forward(fn: ir.Operation) -> None:
    if len(fn.regions[0].blocks) != 1:
        raise GradientError(fn, "control flow is not supported: the function must have "
                                "exactly one block")
    from .regions import walk_nested
    for op in walk_nested(fn):
        name = op.name
        if op.regions and name not in _REGION_OPS:
            raise GradientError(op, f"forward mode does not support '{name}' (regions other "
                                    "than scf.for, scf.if and scf.while)")
        if not name.startswith(_FORWARD_OPS):
            raise GradientError(op, f"'{name}' is not supported by forward mode (only rlx, "
                                    "grad, scf, arith, tensor and func.call ops)")


def _custom_jvp_name(op: ir.Operation) -> str:
    attr = op.attributes["grad.jvp"]
    if not isinstance(attr, ir.FlatSymbolRefAttr):
        raise GradientError(op, f"grad.jvp must name a function (grad.jvp = @f_jvp), got {attr}")
    return ir.FlatSymbolRefAttr(attr).value


def _check_custom_jvp(module: ir.Operation, op: ir.Operation) -> None:
    """``func.call {grad.jvp = @f_jvp}``: ``@f_jvp(operands..., one tangent per
    operand) -> (results..., one tangent per result)``, tangents of the
    operands' and results' own types (JAX's custom_jvp)."""
    from ..ir import find_function, function_type
    name = _custom_jvp_name(op)
    fn = find_function(module, name)
    if fn is None:
        raise GradientError(op, f"grad.jvp names '@{name}', which does not exist")
    ins = [v.type for v in op.operands]
    outs = [r.type for r in op.results]
    ftype = function_type(fn)
    if list(ftype.inputs) != ins + ins or list(ftype.results) != outs + outs:
        sig = lambda ts: ", ".join(str(t) for t in ts)  # noqa: E731
        raise GradientError(op, f"grad.jvp function '@{name}' must have type "
                                f"({sig(ins + ins)}) -> ({sig(outs + outs)}), it has {ftype}")


# ----------------------------------------------------------------------------
# The forward sweep

_IDENTITY = frozenset({"grad.start_checkpoint", "grad.end_checkpoint"})


class _Sweep:
    """Emits primal clones and tangents at the current insertion point.
    ``t`` maps source values to tangents (Values in the new function, lists
    for tuples, absent for zero)."""

    def __init__(self, batch):
        self.batch = tuple(batch)
        self.t: dict = {}

    def set(self, v: ir.Value, tangent) -> None:
        if tangent is None or not is_float_type(v.type):
            return
        if isinstance(tangent, list) and all(f is None for f in tangent):
            return
        self.t[v] = tangent

    def active(self, op: ir.Operation) -> bool:
        return any(v in self.t for v in region_inputs(op))

    def run(self, ops, mapping: dict) -> None:
        for op in ops:
            op = op.operation
            if op.regions:
                self._region(op, mapping)
                continue
            if op.name == "func.call" and any(v in self.t for v in op.operands):
                with op.location:       # (a call kept: it has a grad.jvp)
                    self._custom_call(op, mapping)
                continue
            new = op.clone()
            for i, v in enumerate(new.operands):
                if v in mapping:
                    new.operands[i] = mapping[v]
            for old, nv in zip(op.results, new.results):
                mapping[old] = nv
            if not len(op.results) or not any(v in self.t for v in op.operands):
                continue
            with op.location:
                self._tangent(op, new)

    # -- one op ---------------------------------------------------------------
    def _tangent(self, op: ir.Operation, new: ir.Operation) -> None:
        name = op.name
        ts = [self.t.get(v) for v in op.operands]
        if name in _IDENTITY:
            self.set(op.results[0], ts[0])
            return
        if name == "grad.no_grad" or name in NON_DIFFERENTIABLE:
            return
        if name == "rlx.tuple":
            self.set(op.results[0], list(ts))
            return
        if name == "rlx.tuple_get_item":
            self.set(op.results[0], _field(ts[0], rlx.attributes_of(op)["index"]))
            return
        found = get_jvp_rule(name)
        if found is None:
            raise GradientError(op, f"no forward-mode (JVP) rule for '{name}' on a path from "
                                    "the differentiated arguments (mark it with grad.no_grad)")
        rule, batched = found
        if self.batch and not batched:
            outs = self._per_basis_vector(rule, new, ts)
        else:
            outs = rule(new, ts, self.batch)
        if len(outs) != len(op.results):
            raise GradientError(op, f"internal error: JVP rule of '{name}' returned "
                                    f"{len(outs)} tangents for {len(op.results)} results")
        for r, t in zip(op.results, outs):
            self.set(r, t)

    def _custom_call(self, op: ir.Operation, mapping: dict) -> None:
        """One call of the ``grad.jvp`` function gives the results and their
        tangents; in a batch, one call per basis vector (the first one's
        results are the results)."""
        operands = [mapping[v] for v in op.operands]
        ts = [self.t.get(v) for v in op.operands]
        n = len(op.results)
        if not self.batch:
            results = self._jvp_call(op, operands, ts)
            for old, nv, t in zip(op.results, results[:n], results[n:]):
                mapping[old] = nv
                self.set(old, t)
            return
        if any(isinstance(v.type, ir.TupleType) for v in list(op.operands) + list(op.results)):
            raise GradientError(op, "a grad.jvp call with tuple operands or results cannot "
                                    "be batched (mode=jacobian, mode=hessian): pass the "
                                    "tuple's fields")
        (nb,) = self.batch
        pieces = []
        for k in range(nb):
            tk = [None if t is None else rlx.reshape(
                rlx.strided_slice(t, [0], [k], [k + 1]),
                list(ir.RankedTensorType(t.type).shape)[1:]) for t in ts]
            out = self._jvp_call(op, operands, tk)
            if k == 0:
                for old, nv in zip(op.results, out[:n]):
                    mapping[old] = nv
            pieces.append(out[n:])
        for i, old in enumerate(op.results):
            shape = list(ir.RankedTensorType(old.type).shape)
            rows = [rlx.reshape(p[i], [1] + shape) for p in pieces]
            self.set(old, rlx.concat(rows, axis=0) if len(rows) > 1 else rows[0])

    def _jvp_call(self, op: ir.Operation, operands: list, ts: list) -> list:
        name = _custom_jvp_name(op)
        tangents = [materialize_tangent(t, v.type) for t, v in zip(ts, operands)]
        types = [r.type for r in op.results]
        call = func.CallOp(types + types, ir.FlatSymbolRefAttr.get(name), operands + tangents)
        return list(call.results)

    def _per_basis_vector(self, rule: Callable, new: ir.Operation, ts: list) -> list:
        """Calls an unbatched rule once per basis vector and stacks."""
        (n,) = self.batch
        pieces = []
        for k in range(n):
            tk = []
            for t in ts:
                if t is None:
                    tk.append(None)
                    continue
                shape = list(ir.RankedTensorType(t.type).shape)
                s = rlx.strided_slice(t, [0], [k], [k + 1])
                tk.append(rlx.reshape(s, shape[1:]))
            pieces.append(rule(new, tk, ()))
        outs = []
        for i, r in enumerate(new.results):
            if all(p[i] is None for p in pieces):
                outs.append(None)
                continue
            shape = list(ir.RankedTensorType(r.type).shape)
            rows = [rlx.reshape(p[i] if p[i] is not None else _zeros(r.type), [1] + shape)
                    for p in pieces]
            outs.append(rlx.concat(rows, axis=0) if len(rows) > 1 else rows[0])
        return outs

    # -- region ops -----------------------------------------------------------
    def _clone_whole(self, op: ir.Operation, mapping: dict) -> None:
        from .gradient import clone_ops
        clone_ops([op], mapping)

    def _region(self, op: ir.Operation, mapping: dict) -> None:
        if not self.active(op):
            self._clone_whole(op, mapping)
            return
        with op.location:
            if op.name == "scf.for":
                self._for(op, mapping)
            elif op.name == "scf.if":
                self._if(op, mapping)
            elif op.name == "scf.while":
                self._while(op, mapping)
            else:
                raise GradientError(op, f"forward mode does not support '{op.name}'")

    def _tangents_of(self, values, positions, mapping) -> list:
        out = []
        for i in positions:
            v, t = values[i], self.t.get(values[i])
            rt = v.type
            if t is None and isinstance(rt, ir.RankedTensorType) and not rt.has_static_shape:
                t = _stack_tangent(mapping[v], self.batch)
            out.append(materialize_tangent(t, rt, self.batch))
        return out

    def _float_positions(self, values) -> list[int]:
        return [i for i, v in enumerate(values) if is_float_type(v.type)]

    def _bind(self, olds, news, positions, tangents, mapping) -> None:
        for o, n in zip(olds, news):
            mapping[o] = n
        for i, t in zip(positions, tangents):
            self.set(olds[i], t)

    def _for(self, op: ir.Operation, mapping: dict) -> None:
        lb, ub, step, *inits = list(op.operands)
        fp = self._float_positions(inits)
        new_inits = [mapping[v] for v in inits] + self._tangents_of(inits, fp, mapping)
        loop = scf.ForOp(mapping[lb], mapping[ub], mapping[step], new_inits)
        copy_attributes(op, loop.operation)
        body = op.regions[0].blocks[0]
        n = len(inits)
        with ir.InsertionPoint(loop.body):
            inner = list(loop.inner_iter_args)
            args = list(body.arguments)
            mapping[args[0]] = loop.induction_variable
            self._bind(args[1:], inner[:n], fp, inner[n:], mapping)
            ops = [o.operation for o in body.operations]
            self.run(ops[:-1], mapping)
            ys = list(ops[-1].operands)
            scf.YieldOp([mapping[v] for v in ys] + self._tangents_of(ys, fp, mapping))
        results = list(loop.results)
        self._bind(list(op.results), results[:n], fp, results[n:], mapping)

    def _if(self, op: ir.Operation, mapping: dict) -> None:
        res = list(op.results)
        fp = self._float_positions(res)
        types = [r.type for r in res] + [tangent_type(res[i].type, self.batch) for i in fp]
        if len(op.regions[1].blocks) == 0:      # no else: no results
            self._clone_whole(op, mapping)
            return
        new = scf.IfOp(mapping[op.operands[0]], types, has_else=True)
        copy_attributes(op, new.operation)
        for region, block in ((op.regions[0], new.then_block), (op.regions[1], new.else_block)):
            with ir.InsertionPoint(block):
                ops = [o.operation for o in region.blocks[0].operations]
                self.run(ops[:-1], mapping)
                ys = list(ops[-1].operands)
                scf.YieldOp([mapping[v] for v in ys] + self._tangents_of(ys, fp, mapping))
        results = list(new.results)
        self._bind(res, results[:len(res)], fp, results[len(res):], mapping)

    def _while(self, op: ir.Operation, mapping: dict) -> None:
        inits = list(op.operands)
        res = list(op.results)
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        fin, fres = self._float_positions(inits), self._float_positions(res)
        b = self.batch
        in_types = [v.type for v in inits] + [tangent_type(inits[i].type, b) for i in fin]
        out_types = [v.type for v in res] + [tangent_type(res[i].type, b) for i in fres]
        new = scf.WhileOp(out_types, [mapping[v] for v in inits]
                          + self._tangents_of(inits, fin, mapping))
        copy_attributes(op, new.operation)
        nb = new.regions[0].blocks.append(*in_types)
        na = new.regions[1].blocks.append(*out_types)
        n, m = len(inits), len(res)
        with ir.InsertionPoint(nb):
            args = list(nb.arguments)
            self._bind(list(before.arguments), args[:n], fin, args[n:], mapping)
            ops = [o.operation for o in before.operations]
            self.run(ops[:-1], mapping)
            cond, *vals = list(ops[-1].operands)
            scf.ConditionOp(mapping[cond], [mapping[v] for v in vals]
                            + self._tangents_of(vals, fres, mapping))
        with ir.InsertionPoint(na):
            args = list(na.arguments)
            self._bind(list(after.arguments), args[:m], fres, args[m:], mapping)
            ops = [o.operation for o in after.operations]
            self.run(ops[:-1], mapping)
            ys = list(ops[-1].operands)
            scf.YieldOp([mapping[v] for v in ys] + self._tangents_of(ys, fin, mapping))
        results = list(new.results)
        self._bind(res, results[:m], fres, results[m:], mapping)


def build_forward(module: ir.Operation, src: ir.Operation, name: str, arg_types: list,
                  bind: Callable, outputs: Callable, batch=()) -> ir.Operation:
    """Builds ``@name(arg_types)`` right after ``src`` (a ``prepared_clone``).

    ``bind(new_args) -> (primal per src argument, tangent per src argument)``
    runs at the new entry (tangents None for zero); the sweep then clones
    ``src``'s body with tangents; ``outputs(results, tangents, batch)`` (the
    source's returned values, as values of the new function, and their
    tangents, None for zero) returns the values to return."""
    loc = src.location
    with loc, insertion_point_after(src):
        fop = func.FuncOp(name, ir.FunctionType.get(list(arg_types), []))
        fop.add_entry_block()
    try:
        return _fill(fop.operation, src, arg_types, bind, outputs, batch)
    except BaseException:
        fop.operation.erase()          # no half-built function stays behind
        raise


def _fill(fop: ir.Operation, src: ir.Operation, arg_types: list, bind: Callable,
          outputs: Callable, batch) -> ir.Operation:
    loc = src.location
    block = body_of(fop)
    sweep = _Sweep(batch)
    src_block = body_of(src)
    mapping: dict = {}
    with ir.InsertionPoint(block), loc:
        primals, tangents = bind(list(block.arguments))
        for old, p, t in zip(src_block.arguments, primals, tangents):
            mapping[old] = p
            sweep.set(old, t)
        ops = [o.operation for o in src_block.operations]
        sweep.run(ops[:-1], mapping)
        ret = terminator(src_block)
        results = [mapping[v] for v in ret.operands]
        tangents = [sweep.t.get(v) for v in ret.operands]
        values = outputs(results, tangents, tuple(batch))
        func.ReturnOp(values)
    set_function_type(fop, list(arg_types), [v.type for v in values])
    return fop

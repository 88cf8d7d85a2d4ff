"""The adjoint of ``scf.for``: the forward loop records the carried state of
every iteration (or of every k-th one, see checkpointing.py); the backward is
a reverse ``scf.for`` that, per iteration, reads the recorded state,
recomputes the body and runs the body's backward on it.  Neither loop grows
with the trip count.

    %r = scf.for %i = %lb to %ub step %s iter_args(%h = %h0) -> (T) { body }
becomes, forward,
    %r, %stack = scf.for ... iter_args(%h = %h0, %st = tensor.empty : tensor<N x T>) {
      %st2 = tensor.insert_slice %h into %st[k, ...]      // k = (i - lb) / s
      body ; scf.yield %hn, %st2
    }
and, backward (adjoints of the carried values and of every active value the
body captures travel as iter_args),
    scf.for %kk = 0 to N iter_args(%a = grad(%r), %acc = 0) {
      %h = tensor.extract_slice %stack[N-1-kk, ...] ; body(%h) ; body's backward
      scf.yield grad(%h), %acc + grad(captured)
    }
A captured value the body reads a slice of (``tensor.extract_slice``) has
an adjoint written into zeros; it is added into only that slice of the
accumulator (``common.accumulate``).  Afterwards rlx-gradient drops the
stacks the backward does not read (a result filled by
``tensor.insert_slice`` needs none) and moves the loops' invariant rlx ops
out of them (``cleanup.drop_dead_records``, ``cleanup.hoist_invariants``).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..cleanup import erase_dead_ops
from ..gradient import (GradientError, _active_values, add_adjoints, backward, clone_ops,
                        materialize, zeros_of)
from ..rules import is_float_type
from .checkpointing import every_of, segmented_adjoint
from .common import (RECORDED, accumulate, active_captured, body_ops, check_storable,
                     index_const, iteration_index, mark, new_stack, prepare_ops, stack_get,
                     stack_push, static_index, terminator_of, trip_count)

__all__ = ["record_for", "for_adjoint", "reverse_body", "prepare_ops"]


def _copy_attrs(src: ir.Operation, dst: ir.Operation) -> None:
    for i in range(len(src.attributes)):
        named = src.attributes[i]
        if named.name.startswith("grad."):
            dst.attributes[named.name] = named.attr


def record_for(op: ir.Operation, every: int = 1, capacity: int | None = None) -> ir.Operation:
    """Replaces ``op`` by a loop that also returns the stack of its carried
    values at the start of each iteration (``every`` > 1: of each iteration
    whose index is a multiple of ``every``).  ``capacity``: a static number
    of stack rows known to suffice (a segment of a checkpointed loop)."""
    lb, ub, step = list(op.operands)[:3]
    inits = list(op.operands)[3:]
    n = len(inits)
    for v in inits:
        check_storable(op, v.type)
    with ir.InsertionPoint(op), op.location:
        trips, static = trip_count(lb, ub, step)
        if every > 1:
            rows = arith.CeilDivSIOp(trips, _index(every)).result
            srows = None if static is None else -(-static // every)
        else:
            rows, srows = trips, static
        if capacity is not None and srows is None:
            srows = capacity
        stacks = [new_stack(v.type, rows, srows) for v in inits]
        new = scf.ForOp(lb, ub, step, inits + stacks)
    old_body = op.regions[0].blocks[0]
    with ir.InsertionPoint(new.body), op.location:
        iv = new.induction_variable
        inner = list(new.inner_iter_args)
        carried, stk = inner[:n], inner[n:]
        k = iteration_index(iv, lb, step)
        if every > 1:
            pushed = _push_every(stk, carried, k, every)
        else:
            pushed = [stack_push(s, c, k) for s, c in zip(stk, carried)]
        mapping = {old_body.arguments[0]: iv}
        mapping.update(zip(list(old_body.arguments)[1:], carried))
        ops = [o.operation for o in old_body.operations]
        clone_ops(ops[:-1], mapping)
        scf.YieldOp([mapping.get(v, v) for v in ops[-1].operands] + pushed)
    new_op = new.operation
    _copy_attrs(op, new_op)
    new_op.attributes[RECORDED] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
    for old, nv in zip(op.results, list(new_op.results)[:n]):
        old.replace_all_uses_with(nv)
    op.erase()
    return new_op


def _index(n: int) -> ir.Value:
    return index_const(n)


def _push_every(stacks, carried, k, every):
    """Writes row k / every when k is a multiple of ``every``."""
    e = _index(every)
    mark(e)
    rem = arith.RemSIOp(k, e).result
    mark(rem)
    zero = _index(0)
    mark(zero)
    is_row = arith.CmpIOp(arith.CmpIPredicate.eq, rem, zero).result
    mark(is_row)
    row = arith.DivSIOp(k, e).result
    mark(row)
    if_op = scf.IfOp(is_row, [s.type for s in stacks], has_else=True)
    mark(if_op)
    with ir.InsertionPoint(if_op.then_block):
        scf.YieldOp([stack_push(s, c, row) for s, c in zip(stacks, carried)])
    with ir.InsertionPoint(if_op.else_block):
        scf.YieldOp(list(stacks))
    return list(if_op.results)


def reverse_body(loop: ir.Operation, iv: ir.Value, states: list, seeds_adj: list,
                 captured: list, call_vjp):
    """At the insertion point (a fresh block's end): recomputes ``loop``'s body
    for induction value ``iv`` and carried ``states``, seeds the yielded values
    with ``seeds_adj`` (one per carried value; None = zero) and runs the
    backward.  Returns (adjoints of the states, adjoints of ``captured``)."""
    body = loop.regions[0].blocks[0]
    n = len(states)
    block = ir.InsertionPoint.current.block
    before = len(list(block.operations))
    mapping = {body.arguments[0]: iv}
    mapping.update(zip(list(body.arguments)[1:1 + n], states))
    clone_ops(body_ops(body), mapping)
    cloned = [o.operation for o in block.operations][before:]
    wrt = [s for s in states if is_float_type(s.type)] + captured
    yields = [mapping.get(y, y) for y in list(terminator_of(body).operands)[:n]]
    cloned, yields = prepare_ops(block, cloned, _active_values(block, wrt), yields)
    seeds: dict = {}
    for y, a in zip(yields, seeds_adj):
        if a is None:
            continue
        seeds[y] = add_adjoints(seeds.get(y), a, y.type)
    adj = backward(block, cloned, seeds, wrt, call_vjp)
    return [adj.get(s) for s in states], [adj.get(c) for c in captured]


def for_adjoint(op, grads, adj, active, call_vjp) -> None:
    """Backward of a recorded ``scf.for`` (store-all or every-k-th)."""
    if RECORDED not in op.attributes:
        raise GradientError(op, "internal error: scf.for reached the backward without "
                                "recording its iterations")
    n = ir.IntegerAttr(op.attributes[RECORDED]).value
    every = every_of(op)
    lb, ub, step = list(op.operands)[:3]
    inits = list(op.operands)[3:3 + n]
    stacks = list(op.results)[n:]
    fj = [j for j in range(n) if is_float_type(inits[j].type)]
    captured = active_captured(op, active)
    grads = list(grads)[:n]
    if every > 1:
        results = segmented_adjoint(op, every, grads, captured, call_vjp)
    else:
        results = _store_all_adjoint(op, lb, ub, step, inits, stacks, fj, grads, captured,
                                     call_vjp)
    a_init, a_cap = results
    for j, a in zip(fj, a_init):
        if inits[j] in active:
            adj.accumulate(inits[j], a)
    for c, a in zip(captured, a_cap):
        adj.accumulate(c, a)


def _store_all_adjoint(op, lb, ub, step, inits, stacks, fj, grads, captured, call_vjp):
    n = len(inits)
    trips, _ = trip_count(lb, ub, step)
    iter_init = [materialize(grads[j], inits[j].type) for j in fj]
    iter_init += [zeros_of(c.type) for c in captured]
    c0, c1 = _index(0), _index(1)
    last = arith.SubIOp(trips, c1).result
    rev = scf.ForOp(c0, trips, c1, iter_init)
    with ir.InsertionPoint(rev.body):
        kk = rev.induction_variable
        k = arith.SubIOp(last, kk).result
        iv = k
        if _static(step) != 1:
            iv = arith.MulIOp(iv, step).result
        if _static(lb) != 0:
            iv = arith.AddIOp(iv, lb).result
        states = [stack_get(stacks[j], k, inits[j].type) for j in range(n)]
        carried = list(rev.inner_iter_args)
        seeds = [None] * n
        for j, a in zip(fj, carried[:len(fj)]):
            seeds[j] = a
        a_states, a_cap = reverse_body(op, iv, states, seeds, captured, call_vjp)
        outs = [materialize(a_states[j], inits[j].type) for j in fj]
        for acc, a in zip(carried[len(fj):], a_cap):
            outs.append(accumulate(acc, a))
        scf.YieldOp(outs)
    erase_dead_ops(rev.body)
    res = list(rev.results)
    return res[:len(fj)], res[len(fj):]


def _static(v):
    return static_index(v)

"""The adjoint of ``scf.while``: the forward loop also counts its trips N;
the backward replays the loop as ``scf.for`` over N trips from the initial
state (its iteration = the condition region's ops, then the body's), then the
condition region once more for the results — and differentiates that, with
the replay recorded and reversed like any ``scf.for`` (so its
``grad.checkpoint`` policy applies).  The forward of a while loop thus runs
twice; the backward never grows with N."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..gradient import GradientError, _active_values, add_adjoints, backward, clone_ops
from ..rules import is_float_type
from .common import (RECORDED, active_captured, body_ops, check_storable, index_const, mark,
                     prepare_ops, terminator_of)
from .for_loop import _copy_attrs

__all__ = ["record_while", "while_adjoint"]


def record_while(op: ir.Operation) -> ir.Operation:
    """Replaces ``op`` by a while loop that also returns its trip count."""
    inits = list(op.operands)
    n = len(inits)
    for v in inits:
        check_storable(op, v.type)
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    idx = ir.IndexType.get()
    with ir.InsertionPoint(op), op.location:
        zero = index_const(0)
        new = scf.WhileOp([r.type for r in op.results] + [idx], inits + [zero])
    nb = new.regions[0].blocks.append(*([v.type for v in before.arguments] + [idx]))
    na = new.regions[1].blocks.append(*([v.type for v in after.arguments] + [idx]))
    with ir.InsertionPoint(nb), op.location:
        mapping = dict(zip(before.arguments, list(nb.arguments)[:n]))
        clone_ops(body_ops(before), mapping)
        cond = terminator_of(before)
        vals = [mapping.get(v, v) for v in cond.operands]
        scf.ConditionOp(vals[0], vals[1:] + [nb.arguments[n]])
    with ir.InsertionPoint(na), op.location:
        m = len(after.arguments)
        mapping = dict(zip(after.arguments, list(na.arguments)[:m]))
        clone_ops(body_ops(after), mapping)
        one = index_const(1)
        mark(one)
        count = arith.AddIOp(na.arguments[m], one).result
        mark(count)
        scf.YieldOp([mapping.get(v, v) for v in terminator_of(after).operands] + [count])
    new_op = new.operation
    _copy_attrs(op, new_op)
    new_op.attributes[RECORDED] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                     len(op.results))
    for old, nv in zip(op.results, new_op.results):
        old.replace_all_uses_with(nv)
    op.erase()
    return new_op


def while_adjoint(op, grads, adj, active, call_vjp) -> None:
    if RECORDED not in op.attributes:
        raise GradientError(op, "internal error: scf.while reached the backward without "
                                "counting its trips")
    n_res = ir.IntegerAttr(op.attributes[RECORDED]).value
    inits = list(op.operands)[:-1]
    n = len(inits)
    trips = op.results[n_res]
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    captured = active_captured(op, active)
    block = ir.InsertionPoint.current.block
    start = len(list(block.operations))
    replay = scf.ForOp(index_const(0), trips, index_const(1), inits)
    with ir.InsertionPoint(replay.body):
        state = list(replay.inner_iter_args)
        mapping = dict(zip(list(before.arguments)[:n], state))
        mapping[before.arguments[n]] = replay.induction_variable
        clone_ops(body_ops(before), mapping)
        passed = [mapping.get(v, v) for v in list(terminator_of(before).operands)[1:1 + n_res]]
        mapping.update(zip(list(after.arguments)[:n_res], passed))
        mapping[after.arguments[n_res]] = replay.induction_variable
        clone_ops(body_ops(after), mapping)
        scf.YieldOp([mapping.get(v, v) for v in list(terminator_of(after).operands)[:n]])
    _copy_attrs(op, replay.operation)
    for key in (RECORDED,):
        if key in replay.operation.attributes:
            del replay.operation.attributes[key]
    # The condition region once more, on the final state: the loop's results.
    mapping = dict(zip(list(before.arguments)[:n], replay.results))
    mapping[before.arguments[n]] = trips
    clone_ops(body_ops(before), mapping)
    finals = [mapping.get(v, v) for v in list(terminator_of(before).operands)[1:1 + n_res]]
    ops = [o.operation for o in block.operations][start:]
    wrt = [v for v in inits if v in active and is_float_type(v.type)] + captured
    ops, finals = prepare_ops(block, ops, _active_values(block, wrt), finals)
    seeds: dict = {}
    for f, g in zip(finals, grads):
        if g is not None:
            seeds[f] = add_adjoints(seeds.get(f), g, f.type)
    wadj = backward(block, ops, seeds, wrt, call_vjp)
    for v in wrt:
        adj.accumulate(v, wadj.get(v))

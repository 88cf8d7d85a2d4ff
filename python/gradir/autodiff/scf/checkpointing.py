"""Loop checkpointing: which iterations' states a forward ``scf.for`` keeps,
and the backward of a loop that kept only every k-th state.

The policy is the loop's ``grad.checkpoint`` attribute (or the one
``remat=auto`` chose):

- ``"all"`` (default): the state of every iteration (T states).
- ``"sqrt"``: every k-th state, k = ceil(sqrt(T)); the backward replays each
  segment of k iterations from its checkpoint, storing its k states, then
  reverses it: about 2 sqrt(T) states, one extra forward.
- ``"revolve"``: recursive (multi-level) checkpointing: every k-th state with
  k = ceil(T / 2), and each replayed segment checkpointed again the same way
  down to segments of ``LEAF`` iterations: O(log T) stored states, O(T log T)
  recomputed iterations (the memory order of binomial checkpointing).
- an integer ``k`` (``grad.checkpoint = 10``): every k-th state.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf

from ..gradient import (GradientError, _active_values, backward, clone_ops, materialize,
                        zeros_of)
from ..rules import is_float_type
from .common import (RECORDED, accumulate, body_ops, index_const, prepare_ops, stack_get,
                     terminator_of, trip_count)

__all__ = ["POLICY", "EVERY", "policy_of", "every_of", "segmented_adjoint", "LEAF"]

POLICY = "grad.checkpoint"
# On a recording loop: the checkpoint period it recorded with.
EVERY = "grad.every"
# Segments of at most this many iterations are stored whole under "revolve".
LEAF = 4


# Largest integer period of a loop whose trip count is unknown (its segments'
# stacks are allocated with that many rows).
MAX_DYNAMIC_PERIOD = 1 << 31


def policy_of(op: ir.Operation):
    """The loop's policy: "all", "sqrt", "revolve", or an int period."""
    if POLICY not in op.attributes:
        return "all"
    a = op.attributes[POLICY]
    if isinstance(a, ir.StringAttr):
        v = ir.StringAttr(a).value
        if v in ("all", "sqrt", "revolve"):
            return v
        raise GradientError(op, f"grad.checkpoint must be \"all\", \"sqrt\", \"revolve\" or "
                                f"a positive integer period, got \"{v}\"")
    if isinstance(a, ir.IntegerAttr) and ir.IntegerAttr(a).value > 0:
        return int(ir.IntegerAttr(a).value)
    raise GradientError(op, f"grad.checkpoint must be \"all\", \"sqrt\", \"revolve\" or a "
                            f"positive integer period, got {a}")


def period(op: ir.Operation, trips: int | None) -> int:
    """The checkpoint period of ``op`` (1: store every state)."""
    policy = policy_of(op)
    if policy == "all":
        return 1
    if isinstance(policy, int):
        # a period of at least the trip count is one segment (2^63 - 1 made a
        # stack type past int64: an internal error); a segment keeps a stack
        # of `period` states, so an unknown trip count needs a period that
        # fits in memory
        if trips is not None:
            return max(1, min(policy, trips))
        if policy > MAX_DYNAMIC_PERIOD:
            raise GradientError(op, f"grad.checkpoint = {policy} on a loop without a static "
                                    f"trip count: each segment keeps a stack of {policy} "
                                    f"states (at most {MAX_DYNAMIC_PERIOD})")
        return policy
    if trips is None:
        raise GradientError(op, f"grad.checkpoint = \"{policy}\" needs a static trip count "
                                "(constant bounds); give an integer period instead")
    if trips <= 1:
        return 1
    if policy == "sqrt":
        return max(1, math.ceil(math.sqrt(trips)))
    # revolve: halve until segments are small.
    return 1 if trips <= LEAF else math.ceil(trips / 2)


def every_of(op: ir.Operation) -> int:
    return int(ir.IntegerAttr(op.attributes[EVERY]).value) if EVERY in op.attributes else 1


def segmented_adjoint(op, every: int, grads, captured, call_vjp):
    """Backward of a loop that stored every ``every``-th state: a reverse loop
    over segments; each replays its iterations from the checkpoint as a
    loop of its own (recorded by its own policy) and runs that loop's
    backward."""
    n = ir.IntegerAttr(op.attributes[RECORDED]).value
    lb, ub, step = list(op.operands)[:3]
    inits = list(op.operands)[3:3 + n]
    stacks = list(op.results)[n:]
    fj = [j for j in range(n) if is_float_type(inits[j].type)]
    trips, _ = trip_count(lb, ub, step)
    e = index_const(every)
    rows = arith.CeilDivSIOp(trips, e).result
    c0, c1 = index_const(0), index_const(1)
    last = arith.SubIOp(rows, c1).result
    iter_init = [materialize(grads[j], inits[j].type) for j in fj]
    iter_init += [zeros_of(c.type) for c in captured]
    rev = scf.ForOp(c0, rows, c1, iter_init)
    with ir.InsertionPoint(rev.body):
        r = arith.SubIOp(last, rev.induction_variable).result
        k_lo = arith.MulIOp(r, e).result
        k_hi = arith.MinSIOp(arith.AddIOp(k_lo, e).result, trips).result
        iv_lo = arith.AddIOp(arith.MulIOp(k_lo, step).result, lb).result
        iv_hi = arith.AddIOp(arith.MulIOp(k_hi, step).result, lb).result
        states = [stack_get(stacks[j], r, inits[j].type) for j in range(n)]
        seg = scf.ForOp(iv_lo, iv_hi, step, states)
        body = op.regions[0].blocks[0]
        with ir.InsertionPoint(seg.body):
            mapping = {body.arguments[0]: seg.induction_variable}
            mapping.update(zip(list(body.arguments)[1:1 + n], list(seg.inner_iter_args)))
            clone_ops(body_ops(body), mapping)
            scf.YieldOp([mapping.get(v, v) for v in list(terminator_of(body).operands)[:n]])
        seg_op = seg.operation
        sub = _sub_policy(op, every)
        if sub is not None:
            seg_op.attributes[POLICY] = sub
        seg_op.attributes["grad.capacity"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), every)
        carried = list(rev.inner_iter_args)
        block = rev.body
        wrt = [states[j] for j in fj] + list(captured)
        ops = prepare_ops(block, [seg_op], _active_values(block, wrt))
        seg_op = ops[0]
        seeds = {}
        for j, a in zip(fj, carried[:len(fj)]):
            res = seg_op.results[j]
            seeds[res] = a
        adj = backward(block, ops, seeds, wrt, call_vjp)
        outs = [materialize(adj.get(states[j]), inits[j].type) for j in fj]
        for acc, c in zip(carried[len(fj):], captured):
            outs.append(accumulate(acc, adj.get(c)))
        scf.YieldOp(outs)
    res = list(rev.results)
    return res[:len(fj)], res[len(fj):]


def _sub_policy(op, every: int):
    """The policy of a replayed segment of ``every`` iterations."""
    if policy_of(op) != "revolve" or every <= LEAF:
        return None
    return ir.StringAttr.get("revolve")

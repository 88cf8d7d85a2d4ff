"""The adjoint of ``scf.if``: the condition (an ``i1`` of the forward) picks
the branch again in the backward; each branch of the backward ``scf.if``
recomputes its forward branch and runs that branch's backward, yielding the
adjoints of the active values the branches capture.

    %r = scf.if %c -> (T) { A ; scf.yield %a } else { B ; scf.yield %b }
gets
    %g:k = scf.if %c -> (adjoint types of captured values) {
      A ; backward of A seeded with grad(%r) at %a ; scf.yield grads
    } else { ... B ... }
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from ..cleanup import erase_dead_ops
from ..gradient import _active_values, add_adjoints, backward, clone_ops, materialize
from .common import active_captured, body_ops, prepare_ops, terminator_of

__all__ = ["if_adjoint"]


def if_adjoint(op, grads, adj, active, call_vjp) -> None:
    captured = active_captured(op, active)
    if not captured:
        return
    cond = op.operands[0]
    new = scf.IfOp(cond, [c.type for c in captured], has_else=True)
    for region, block in ((op.regions[0], new.then_block), (op.regions[1], new.else_block)):
        src = region.blocks[0]
        with ir.InsertionPoint(block):
            mapping: dict = {}
            clone_ops(body_ops(src), mapping)
            cloned = [o.operation for o in block.operations]
            yields = [mapping.get(y, y) for y in terminator_of(src).operands]
            cloned, yields = prepare_ops(block, cloned, _active_values(block, captured), yields)
            seeds: dict = {}
            for y, g in zip(yields, grads):
                if g is None:
                    continue
                seeds[y] = add_adjoints(seeds.get(y), g, y.type)
            badj = backward(block, cloned, seeds, captured, call_vjp)
            scf.YieldOp([materialize(badj.get(c), c.type) for c in captured])
        erase_dead_ops(block)
    for c, g in zip(captured, new.results):
        adj.accumulate(c, g)

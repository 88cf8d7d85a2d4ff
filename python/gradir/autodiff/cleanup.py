"""The cleanup core shared by rlx-cse, rlx-dce and the gradient simplifier:
common-subexpression elimination and dead-code removal of pure rlx/grad ops."""

from __future__ import annotations

from mlir import ir

from ..dialects.util import is_pure
from ..ir import blocks_of, has_uses
from .regions import walk_nested as walk

__all__ = ["cse", "cse_block", "erase_dead_ops", "dce", "drop_dead_carries", "copy_attributes",
           "hoist_invariants", "drop_dead_records"]

# Ops whose regions cannot see values defined outside them.
_ISOLATED = frozenset({"builtin.module", "func.func", "gpu.module", "gpu.func", "llvm.func"})


def _key(op: ir.Operation):
    attrs = op.attributes
    return (
        op.name,
        tuple(op.operands),
        tuple(sorted((attrs[i].name, str(attrs[i].attr)) for i in range(len(attrs)))),
        tuple(str(r.type) for r in op.results),
    )


def cse(op: ir.Operation) -> None:
    """Merges identical pure ops in every block under ``op``."""
    for region in op.regions:
        for block in region.blocks:
            cse_block(block, {})


def cse_block(block: ir.Block, outer: dict) -> None:
    """CSE of ``block``; ``outer`` holds the ops of enclosing blocks it may reuse."""
    seen = dict(outer)
    for op in list(block.operations):
        op = op.operation
        if op.regions and any(len(r.blocks) for r in op.regions):
            scope = {} if op.name in _ISOLATED else seen
            for region in op.regions:
                for inner in region.blocks:
                    cse_block(inner, scope)
            continue
        if not is_pure(op) or op.name.startswith("grad.") or "grad.recomputed" in op.attributes:
            continue
        key = _key(op)
        first = seen.get(key)
        if first is None:
            seen[key] = op
            continue
        for old, new in zip(op.results, first.results):
            old.replace_all_uses_with(new)
        op.erase()


def erase_dead_ops(block: ir.Block) -> int:
    """Erases dead pure ops of ``block`` in reverse order; returns how many."""
    erased = 0
    for op in reversed(list(block.operations)):
        op = op.operation
        if op.regions and any(len(r.blocks) for r in op.regions):
            continue
        if is_pure(op) and not has_uses(op):
            op.erase()
            erased += 1
    return erased


def dce(op: ir.Operation) -> None:
    """Erases dead pure ops in every block under ``op``."""
    for block in list(blocks_of(op)):
        erase_dead_ops(block)


# Dialects whose ops have no side effect in the programs gradir builds (the
# IRDL ops carry no traits, so MLIR cannot remove them itself).
_FREE = ("rlx.", "grad.", "arith.", "tensor.", "scf.", "func.call")


def copy_attributes(old: ir.Operation, new: ir.Operation) -> None:
    """The attributes of ``old`` on its rebuilt ``new`` (a loop's
    ``grad.checkpoint`` policy, ``unsignedCmp``), segment sizes aside."""
    attrs = old.attributes
    for i in range(len(attrs)):
        a = attrs[i]
        if not a.name.endswith("SegmentSizes"):
            new.attributes[a.name] = a.attr


def drop_dead_carries(fn: ir.Operation) -> int:
    """Removes the iter_args of ``scf.for`` loops under ``fn`` that nothing
    needs: a result no one uses whose value, through the body, feeds only
    such iter_args (the primal half of a VJP whose cotangent is a constant
    in a reverse-rows Jacobian, say).  A loop left with nothing to do goes.
    Innermost loops first; returns how many iter_args went."""
    dropped = 0
    loops = [op for op in walk(fn) if op.name == "scf.for"]
    inputs = _RegionInputs()
    for loop in reversed(loops):
        dropped += _drop_carries(loop, inputs)
    return dropped


class _RegionInputs:
    """``regions.region_inputs`` as sets, each region op's captured values
    found from those of the region ops directly inside it (memoized): loops
    nested N deep cost O(N) walks, not O(N^2).  An entry goes when its op
    is erased (``forget``), before the memory can serve another op."""

    def __init__(self):
        self._captured: dict = {}

    def __call__(self, op: ir.Operation):
        if not len(op.regions):
            return list(op.operands)
        return list(op.operands) + list(self._of(op))

    def _of(self, op: ir.Operation) -> set:
        got = self._captured.get(op)
        if got is not None:
            return got
        used, inside = set(), set()
        for region in op.regions:
            for block in region.blocks:
                inside.update(block.arguments)
                for inner in block.operations:
                    inner = inner.operation
                    inside.update(inner.results)
                    used.update(inner.operands)
                    if len(inner.regions):
                        used.update(self._of(inner))
        got = self._captured[op] = used - inside
        return got

    def forget(self, op: ir.Operation) -> None:
        self._captured.pop(op, None)
        for inner in walk(op):
            if len(inner.regions):
                self._captured.pop(inner, None)


def _drop_carries(loop: ir.Operation, region_inputs: _RegionInputs) -> int:
    from mlir.dialects import scf

    from .gradient import clone_ops
    body = loop.regions[0].blocks[0]
    ops = [o.operation for o in body.operations]
    term, ops = ops[-1], ops[:-1]
    args = list(body.arguments)
    results = list(loop.results)
    n = len(results)
    defined = {r: k for k, op in enumerate(ops) for r in op.results}
    fixed = [k for k, op in enumerate(ops) if not op.name.startswith(_FREE)]
    live = {i for i in range(n) if any(True for _ in results[i].uses)}
    while True:
        needed: set = set()
        work = [term.operands[i] for i in live]
        for k in fixed:
            needed.add(k)
            work.extend(region_inputs(ops[k]))
        seen: set = set()
        while work:
            v = work.pop()
            if v in seen:
                continue
            seen.add(v)
            k = defined.get(v)
            if k is not None and k not in needed:
                needed.add(k)
                work.extend(region_inputs(ops[k]))
        grown = live | {i for i in range(n) if args[1 + i] in seen}
        if grown == live:
            break
        live = grown
    if len(live) == n:
        return 0
    keep = sorted(live)
    lb, ub, step, *inits = list(loop.operands)
    if not keep and not fixed:
        region_inputs.forget(loop)
        loop.erase()
        return n
    with ir.InsertionPoint(loop), loop.location:
        new = scf.ForOp(lb, ub, step, [inits[i] for i in keep])
    copy_attributes(loop, new.operation)
    inner = list(new.inner_iter_args)
    mapping = {args[0]: new.induction_variable}
    for j, i in enumerate(keep):
        mapping[args[1 + i]] = inner[j]
    with ir.InsertionPoint(new.body), loop.location:
        clone_ops([op for k, op in enumerate(ops) if k in needed], mapping)
        scf.YieldOp([mapping.get(term.operands[i], term.operands[i]) for i in keep])
    for j, i in enumerate(keep):
        results[i].replace_all_uses_with(new.results[j])
    region_inputs.forget(loop)
    loop.erase()
    return n - len(keep)


def drop_dead_records(fn: ir.Operation) -> int:
    """``drop_dead_carries`` until nothing more goes, with the dead ops of
    every block erased before each round: a stack a reverse loop no longer
    reads (its read is dead, or sat in a replayed loop that went) is then
    no longer recorded.  Returns how many iter_args went."""
    total = 0
    while True:
        _erase_dead_nested(fn)
        dropped = drop_dead_carries(fn)
        if not dropped:
            return total
        total += dropped


# Ops without regions that have no side effect in the programs gradir builds
# (upstream's tensor and arith ops included; the grad markers stay for the
# checkpoint planner).
_DEAD_FREE = ("rlx.", "arith.", "tensor.")


def _erase_dead_nested(fn: ir.Operation) -> None:
    while True:
        erased = 0
        for block in list(blocks_of(fn)):
            for op in reversed(list(block.operations)):
                op = op.operation
                if len(op.regions) or not op.name.startswith(_DEAD_FREE) or has_uses(op):
                    continue
                op.erase()
                erased += 1
        if not erased:
            return


# Ops whose operand #1 a loop body updates in place (a destination).
_DESTINATIONS = ("tensor.insert_slice", "tensor.insert")


def hoist_invariants(fn: ir.Operation) -> int:
    """Loop-invariant code motion of rlx ops (and ``tensor.extract_slice``):
    such an op directly in an ``scf.for`` body whose operands are all
    defined outside the loop moves
    before the loop (a reverse loop's ``permute_dims`` of a captured weight
    is computed once, not per iteration).  Innermost loops first, so an op
    leaves every loop it does not depend on.  Values the body updates in
    place stay (a destination of ``tensor.insert_slice``/``tensor.insert``,
    an inner loop's initial value): hoisted, each iteration would need a
    copy of them.  The ops are pure, so a loop of no trip computing them
    anyway changes no result.  Returns how many ops moved."""
    loops = [op for op in walk(fn) if op.name == "scf.for"]
    moved = 0
    for loop in reversed(loops):
        moved += _hoist(loop)
    return moved


def _hoist(loop: ir.Operation) -> int:
    body = loop.regions[0].blocks[0]
    inside = set(body.arguments)
    moved = 0
    for op in [o.operation for o in body.operations][:-1]:
        results = list(op.results)
        if ((op.name.startswith("rlx.") or op.name == "tensor.extract_slice")
                and not len(op.regions)
                and "grad.stack" not in op.attributes
                and not any(v in inside for v in op.operands)
                and not any(_updated(r) for r in results)):
            op.move_before(loop)
            moved += 1
            continue
        inside.update(results)
    return moved


def _updated(v: ir.Value) -> bool:
    """Whether the loop body holding ``v``'s definition updates ``v`` in
    place: a use of it (all its uses are in that body) as the destination of
    ``tensor.insert_slice``/``tensor.insert`` or as an ``scf.for``'s initial
    value.  Read from the uses, not from a walk of the loop (one per loop:
    O(N^2) for loops nested N deep)."""
    for use in v.uses:
        name = use.owner.name
        k = use.operand_number
        if (name in _DESTINATIONS and k == 1) or (name == "scf.for" and k >= 3):
            return True
    return False

"""``remat=auto`` for loops: picks each ``scf.for``'s checkpointing policy
(all -> sqrt -> revolve, cheapest first) so that the adjoint's peak fits the
budget.

Greedy: start with every loop storing all its states; while the peak
(rlx-memory-report's model, measured on a trial adjoint) is above the
budget, move the loop whose next policy lowers the peak most to that policy.
Loops whose policy the user pinned (``grad.checkpoint``) and loops without
a static trip count are left alone.  The straight-line planner then works
on the rest of the function as usual.
"""

from __future__ import annotations

from typing import Callable

from mlir import ir

from ..cost import static_trips
from ..regions import walk_nested
from .checkpointing import POLICY

__all__ = ["choose_loop_policies", "LEVELS"]

LEVELS = ("all", "sqrt", "revolve")


def _loops(fn: ir.Operation) -> list:
    return [op for op in walk_nested(fn)
            if op.name == "scf.for" and POLICY not in op.attributes
            and static_trips(op) not in (None, 0, 1)]


def choose_loop_policies(fn: ir.Operation, peak_of: Callable[[], int],
                         budget: tuple[str, float]) -> tuple[dict, int, int]:
    """Sets ``grad.checkpoint`` on the free loops of ``fn`` (by position)
    until ``peak_of()`` (the trial adjoint's peak) fits ``budget``
    (``("bytes", n)`` or ``("fraction", f)`` of the all-stored peak).
    Returns ({loop index: policy}, peak reached, all-stored peak); loops
    left at "all" get no attribute."""
    loops = _loops(fn)
    if not loops:
        return {}, -1, -1
    levels = [0] * len(loops)

    def apply(levels_):
        for op, lv in zip(loops, levels_):
            if lv == 0:
                if POLICY in op.attributes:
                    del op.attributes[POLICY]
            else:
                op.attributes[POLICY] = ir.StringAttr.get(LEVELS[lv])

    apply(levels)
    base = peak_of()
    kind, value = budget
    limit = value * base if kind == "fraction" else value
    peak = base
    while peak > limit:
        best = None
        for i, lv in enumerate(levels):
            if lv + 1 >= len(LEVELS):
                continue
            trial = list(levels)
            trial[i] = lv + 1
            apply(trial)
            p = peak_of()
            if best is None or p < best[0]:
                best = (p, trial)
        if best is None or best[0] >= peak:
            break
        peak, levels = best
    apply(levels)
    return {i: LEVELS[lv] for i, lv in enumerate(levels)}, peak, base

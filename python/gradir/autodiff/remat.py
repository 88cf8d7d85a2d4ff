"""Rematerialization: recompute forward values in the backward instead of
keeping them, and choose which ones under a memory budget.

The adjoint function that rlx-gradient builds is the forward (the ops that
compute the results) followed by the backward.  A *plan* is the set of
forward ops whose results the backward may use as they are (*kept*); every
other forward value the backward uses is recomputed from kept values: its
op, and the ops it needs that are not kept, are cloned right before the
first backward op that uses it, marked ``grad.recomputed`` (rlx-cse never
merges those back into the forward).  Arguments, constants and returned
values are always kept; ``grad.save`` / ``grad.recompute`` pins force the
choice.

Plans come from the checkpoint markers (``checkpoint.marker_plan``) or from
``plan_auto``, which looks for the plan with the fewest recomputed FLOPs
whose peak (``memory.py``'s model, on the adjoint as it will be) fits a
budget:

1. The forward ops, in program order, are cut into segments.  A cut after
   op ``j`` keeps the values made up to ``j`` that ops after ``j`` use; the
   backward of a segment recomputes the segment's other values that the
   backward needs.  While the backward runs through segment ``k``, the
   values kept by the cuts before it, the segment's recomputed values and
   the backward's own buffers are live, so the plan's peak is
   ``max_k (kept_1 + ... + kept_k + recomputed_k + backward_k)`` — later
   segments must be smaller, and the kept values of late cuts are freed
   early (not Chen et al.'s uniform sqrt(n) segments).
2. A dynamic program over the cut positions keeps, per position, the
   Pareto front of (bytes kept so far, FLOPs recomputed so far) of the
   feasible prefixes; the cheapest plan at the last op is optimal for the
   segment model (which is within bytes of the checked peak on a chain).
   (Large functions only try the cuts that keep values the backward
   needs, or less than the cuts around them, at most ``MAX_CUTS`` of them.)
3. Every plan is checked by building its adjoint in the memory model (the
   same schedule as the IR rewrite); a bisection on the model's budget
   corrects the model's error, and the best plan whose *checked* peak fits
   is taken.  On a DAG a cut keeps every value that crosses it; for small
   adjoints a local search (keep one more value, one fewer, or swap two)
   then finds plans that keep only some of them.
4. Storing everything is always a candidate, so the plan never exceeds the
   store-everything peak; when nothing fits, the plan with the lowest peak
   found is taken and the caller warns.

The planner (steps 1-4) is ``auto_plan.py``;
``test/autodiff/checkpoint/planner.py`` checks it against brute force.
"""

from __future__ import annotations

import math

from dataclasses import dataclass

from mlir import ir

from .memory import AbstractOp, abstract_block, build_program, forward_ops, peak_of

__all__ = ["RECOMPUTED", "AdjointGraph", "Plan", "Evaluation", "plan_auto", "apply_plan",
           "parse_budget"]

RECOMPUTED = "grad.recomputed"

# ----------------------------------------------------------------------------
# The adjoint as a graph

class AdjointGraph:
    """The adjoint block as abstract ops, with its forward part marked."""

    def __init__(self, block: ir.Block, n_results: int, module: ir.Operation | None = None):
        self.block = block
        (self.ids, self.args, self.ops, self.ret, self.ir_ops) = abstract_block(block, module)
        self.n_results = n_results
        self.fwd = forward_ops(self.ops, self.ret, n_results)
        self.producer: dict[int, int] = {}
        for i, op in enumerate(self.ops):
            for r in op.results:
                self.producer[r] = i
        self.forward = [i for i, f in enumerate(self.fwd) if f]
        returned = set(self.ret)
        # Forward ops whose results the backward (or a gradient) uses directly.
        self.used_by_backward: set[int] = set()
        for i, op in enumerate(self.ops):
            if self.fwd[i]:
                continue
            for v in op.operands:
                p = self.producer.get(v)
                if p is not None and self.fwd[p]:
                    self.used_by_backward.add(p)
        self.always: dict[int, str] = {}
        for i in self.forward:
            op = self.ops[i]
            if any(r in returned for r in op.results):
                self.always[i] = "returned by the function"
            elif not op.operands:
                self.always[i] = "a constant"

    def full_plan(self) -> frozenset:
        return frozenset(self.forward)

    # -- the schedule both the simulation and the IR rewrite follow --------
    def _clone_order(self, kept: frozenset):
        """Yields ``(backward op index, [forward ops to clone before it])``
        in block order, each forward op cloned once, operands first."""
        done: set[int] = set()
        for i, op in enumerate(self.ops):
            if self.fwd[i]:
                continue
            order: list[int] = []
            for v in op.operands:
                p = self.producer.get(v)
                if p is None or not self.fwd[p] or p in kept or p in done:
                    continue
                stack = [(p, False)]
                while stack:
                    q, expanded = stack.pop()
                    if q in done:
                        continue
                    if expanded:
                        done.add(q)
                        order.append(q)
                        continue
                    stack.append((q, True))
                    for u in reversed(self.ops[q].operands):
                        r = self.producer.get(u)
                        if r is not None and self.fwd[r] and r not in kept and r not in done:
                            stack.append((r, False))
            yield i, order

    def rewritten(self, kept) -> tuple[list[AbstractOp], int, int]:
        """The ops of the adjoint after ``apply_plan(kept)``, in block order,
        with the recomputed FLOPs and the number of clones."""
        kept = frozenset(kept)
        next_id = len(self.ids)
        clone: dict[int, int] = {}
        before = dict(self._clone_order(kept))
        out: list[AbstractOp] = []
        flops = n_clones = 0
        for i, op in enumerate(self.ops):
            order = before.get(i)
            if order is None:           # a forward op
                out.append(op)
                continue
            for q in order:
                src = self.ops[q]
                results = []
                for r in src.results:
                    clone[r] = next_id
                    results.append(next_id)
                    next_id += 1
                out.append(AbstractOp(src.name, [clone.get(u, u) for u in src.operands],
                                      results, src.result_bytes, src.alias, src.index,
                                      src.flops))
                flops += src.flops
                n_clones += 1
            if any(u in clone for u in op.operands):
                op = AbstractOp(op.name, [clone.get(u, u) for u in op.operands], op.results,
                                op.result_bytes, op.alias, op.index, op.flops)
            out.append(op)
        return out, flops, n_clones

    def evaluate(self, kept) -> "Evaluation":
        """The peak and recomputed FLOPs of plan ``kept`` (memory model)."""
        kept = frozenset(kept)
        ops, flops, n_clones = self.rewritten(kept)
        peak = peak_of(build_program(self.args, ops, self.ret))
        return Evaluation(kept, peak.bytes, flops, n_clones)


@dataclass(frozen=True)
class Evaluation:
    kept: frozenset
    peak: int
    flops: int             # recomputed FLOPs
    clones: int


# ----------------------------------------------------------------------------
# Rewriting the IR

def apply_plan(graph: AdjointGraph, kept) -> dict[int, int]:
    """Clones the non-kept forward ops the backward needs in front of their
    first backward use (marked ``grad.recomputed``) and points the backward
    at the clones.  Returns how many clones each forward op got (0 or 1)."""
    kept = frozenset(kept)
    ir_ops = graph.ir_ops
    clone: dict[int, ir.Value] = {}
    cloned: dict[int, int] = {}
    for i, order in graph._clone_order(kept):
        target = ir_ops[i]
        for q in order:
            src = ir_ops[q]
            new = src.clone(ip=ir.InsertionPoint(target))
            _redirect(graph, new, graph.ops[q].operands, clone)
            new.attributes[RECOMPUTED] = ir.UnitAttr.get(new.context)
            for pin in ("grad.save", "grad.recompute"):
                if pin in new.attributes:
                    del new.attributes[pin]
            for r, nr in zip(graph.ops[q].results, new.results):
                clone[r] = nr
            cloned[q] = 1
        _redirect(graph, target, graph.ops[i].operands, clone)
    return cloned


def _redirect(graph: AdjointGraph, op: ir.Operation, inputs, clone: dict) -> None:
    """Points ``op``'s uses of the values cloned (``clone``: value id ->
    the clone's ir.Value) at their clones.  ``inputs``: the ids of ``op``'s
    operands followed, for an op with regions (a loop, a branch), by those
    of the values its regions capture, which are replaced where the regions
    use them (they are no operands of ``op``)."""
    n = len(op.operands)
    captured = {}
    for k, u in enumerate(inputs):
        if u not in clone:
            continue
        if k < n:
            op.operands[k] = clone[u]
        else:
            captured[u] = clone[u]
    if not captured:
        return
    from ..ir import walk
    value_of = {i: v for v, i in graph.ids.items() if i in captured}
    by_value = [(value_of[u], nv) for u, nv in captured.items()]
    for inner in walk(op):
        for j, v in enumerate(inner.operands):
            for old, nv in by_value:
                if v == old:
                    inner.operands[j] = nv
                    break


# ----------------------------------------------------------------------------
# The automatic planner

def parse_budget(text: str) -> tuple[str, float]:
    """``("fraction", f)`` or ``("bytes", n)`` from ``0.25``, ``25%``,
    ``1048576``, ``64MiB``, ``1.5GB``...  Raises ValueError (also for NaN
    and infinities)."""
    kind, value = _parse_budget(text)
    if not math.isfinite(value):
        raise ValueError(f"budget must be finite, not '{text}'")
    return kind, value


def _parse_budget(text: str) -> tuple[str, float]:
    s = text.strip().replace("_", "")
    if not s:
        raise ValueError("empty budget")

    if s.endswith("%"):
        value = float(s[:-1]) / 100.0
        if not 0 < value:
            raise ValueError(text)
        return "fraction", value
    units = {"kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3, "tib": 1024 ** 4,
             "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4, "b": 1}
    low = s.lower()
    for unit, scale in units.items():
        if low.endswith(unit):
            value = float(low[: -len(unit)]) * scale
            if value <= 0:
                raise ValueError(text)
            return "bytes", value
    value = float(low)
    if value <= 0:
        raise ValueError(text)
    if value <= 1.0:
        return "fraction", value
    if math.isfinite(value) and value != int(value):
        # 1.5 is neither a fraction (at most 1) nor a count of bytes: it
        # meant 1 byte (hostile-input review)
        raise ValueError(f"budget '{text}': a fraction is at most 1 (0.25, 25%), a size is "
                         f"whole bytes or has a unit (64MiB, 1.5GB)")
    return "bytes", value


# The automatic planner lives in auto_plan.py (it needs only the graph's
# interface); its names stay importable from here.
from .auto_plan import Plan, plan_auto  # noqa: E402

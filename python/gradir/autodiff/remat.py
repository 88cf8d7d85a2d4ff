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
   (Large functions only try
   the cuts that keep values the backward needs, or less than the cuts
   around them.)
3. Every plan is checked by building its adjoint in the memory model (the
   same schedule as the IR rewrite); a bisection on the model's budget
   corrects the model's error, and the best plan whose *checked* peak fits
   is taken.  On a DAG a cut keeps every value that crosses it; for small
   adjoints a local search (keep one more value, one fewer, or swap two)
   then finds plans that keep only some of them.
4. Storing everything is always a candidate, so the plan never exceeds the
   store-everything peak; when nothing fits, the plan with the lowest peak
   found is taken and the caller warns.

``test/autodiff/checkpoint/planner.py`` checks the result against brute force.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from .memory import AbstractOp, abstract_block, build_program, forward_ops, peak_of

__all__ = ["RECOMPUTED", "AdjointGraph", "Plan", "Evaluation", "plan_auto", "apply_plan",
           "parse_budget"]

RECOMPUTED = "grad.recomputed"

# Up to this many forward ops, every position is a candidate cut; above it,
# the cuts that keep only values the backward needs, and those that keep
# less than the cuts around them.
EXHAUSTIVE_POSITIONS = 160
# Adjoints up to this many ops get a local search after the dynamic program,
# of at most this many plan evaluations.
REFINE_OPS = 600
REFINE_EVALUATIONS = 400


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
            for k, u in enumerate(graph.ops[q].operands):
                if u in clone:
                    new.operands[k] = clone[u]
            new.attributes[RECOMPUTED] = ir.UnitAttr.get(new.context)
            for pin in ("grad.save", "grad.recompute"):
                if pin in new.attributes:
                    del new.attributes[pin]
            for r, nr in zip(graph.ops[q].results, new.results):
                clone[r] = nr
            cloned[q] = 1
        for k, u in enumerate(graph.ops[i].operands):
            if u in clone:
                target.operands[k] = clone[u]
    return cloned


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
    return "bytes", value


@dataclass
class _Model:
    """The segment model of ``plan_auto`` over the forward ops in order."""
    m: int
    size: list[int]
    flops: list[int]
    needed: list[bool]
    eff_last: list[int]
    cons: list[list[int]]
    always: list[bool]
    returned: list[bool]
    never: list[bool]
    b0: list[int]
    candidates: list[int]


@dataclass
class Plan:
    kept: frozenset
    peak: int
    flops: int
    store_all_peak: int
    budget: int
    met: bool
    cuts: list[int] = field(default_factory=list)
    evaluations: int = 0


def _build_model(g: AdjointGraph, save: set[int], recompute: set[int]) -> _Model:
    fwd = g.forward
    m = len(fwd)
    pos = {op: k for k, op in enumerate(fwd)}
    size = [0] * m
    flops = [0] * m
    needed = [False] * m
    cons: list[list[int]] = [[] for _ in range(m)]
    for k, i in enumerate(fwd):
        op = g.ops[i]
        size[k] = 0 if op.alias else sum(op.result_bytes)
        flops[k] = op.flops
        needed[k] = i in g.used_by_backward
        for v in op.operands:
            p = g.producer.get(v)
            if p is not None and p in pos:
                cons[pos[p]].append(k)
    # An alias (tuple, tuple_get_item) keeps what it refers to alive.
    for k in range(m - 1, -1, -1):
        if needed[k] and g.ops[fwd[k]].alias:
            for v in g.ops[fwd[k]].operands:
                p = g.producer.get(v)
                if p is not None and p in pos:
                    needed[pos[p]] = True
    eff_last = [-1] * m
    for k in range(m - 1, -1, -1):
        last = -1
        for c in cons[k]:
            last = max(last, c, eff_last[c] if g.ops[fwd[c]].alias else -1)
        eff_last[k] = last
    always = [fwd[k] in g.always or fwd[k] in save for k in range(m)]
    never = [fwd[k] in recompute and fwd[k] not in g.always for k in range(m)]
    ret_values = set(g.ret)
    returned = [any(r in ret_values for r in g.ops[fwd[k]].results) for k in range(m)]

    # What the backward holds besides forward values, per forward position,
    # measured on the store-everything adjoint.
    program = build_program(g.args, g.ops, g.ret)
    n = len(program.uses)
    first = [0] * len(program.sizes)
    last = [-1] * len(program.sizes)
    for t, made in enumerate(program.defs):
        for b in made:
            first[b] = last[b] = t
    for t, used in enumerate(program.uses):
        for b in used:
            last[b] = max(last[b], t)
    fwd_bufs = set()
    for i in fwd:
        fwd_bufs.update(program.defs[i])
    delta = [0] * (n + 1)
    for b, sz in enumerate(program.sizes):
        if b in fwd_bufs:
            continue
        if program.is_arg[b]:
            delta[0] += sz
            delta[n] -= sz
        else:
            delta[first[b]] += sz
            delta[last[b] + 1] -= sz
    b0 = [0] * m
    live = 0
    current = m - 1
    for t in range(n):
        live += delta[t]
        if t >= len(g.ops) or g.fwd[t]:
            continue
        ps = [pos[g.producer[v]] for v in g.ops[t].operands
              if v in g.producer and g.producer[v] in pos]
        if ps:
            current = max(ps)
        if current >= 0:
            b0[current] = max(b0[current], live)
    # Positions without backward ops of their own hold what the position
    # after them (earlier in the backward) left.
    for k in range(m - 2, -1, -1):
        if b0[k] == 0:
            b0[k] = b0[k + 1]

    # Cut positions: a cut after op j keeps F(j) = {o <= j : eff_last[o] > j}.
    fbytes = [0] * m
    f_never = [0] * m
    f_unneeded = [0] * m
    add_at: list[list[int]] = [[] for _ in range(m)]
    drop_at: list[list[int]] = [[] for _ in range(m + 1)]
    for k in range(m):
        if eff_last[k] > k and not always[k]:
            add_at[k].append(k)
            drop_at[eff_last[k]].append(k)
    cur_bytes = cur_never = cur_unneeded = 0
    for j in range(m):
        for k in add_at[j]:
            cur_bytes += size[k]
            cur_never += never[k]
            cur_unneeded += (not needed[k] and size[k] > 0)
        for k in drop_at[j]:
            cur_bytes -= size[k]
            cur_never -= never[k]
            cur_unneeded -= (not needed[k] and size[k] > 0)
        fbytes[j], f_never[j], f_unneeded[j] = cur_bytes, cur_never, cur_unneeded
    valid = [f_never[j] == 0 for j in range(m)]
    clean = [valid[j] and f_unneeded[j] == 0 for j in range(m)]
    prev_clean = [None] * m
    last_seen = None
    for j in range(m):
        prev_clean[j] = last_seen
        if clean[j]:
            last_seen = j
    next_clean = [None] * m
    last_seen = None
    for j in range(m - 1, -1, -1):
        next_clean[j] = last_seen
        if clean[j]:
            last_seen = j
    candidates = []
    for j in range(m - 1):
        if not valid[j]:
            continue
        if clean[j] or m <= EXHAUSTIVE_POSITIONS:
            candidates.append(j)
            continue
        # A cut keeping values the backward does not need pays off only when
        # they are smaller than what the cuts around it keep.
        around = [fbytes[c] for c in (prev_clean[j], next_clean[j]) if c is not None]
        if not around or fbytes[j] < min(around):
            candidates.append(j)
        elif 0 < j and fbytes[j] < fbytes[j - 1] and fbytes[j] <= fbytes[j + 1]:
            candidates.append(j)
    return _Model(m, size, flops, needed, eff_last, cons, always, returned, never, b0,
                  candidates)


def _dp(model: _Model, budget: float):
    """The cheapest cut list under the segment model with ``budget``, or
    None when no plan fits.

    For a segment ``(i, j]`` the backward visits positions ``j, j-1, ...,
    i+1``; at position ``o`` the live bytes are the kept values of earlier
    cuts (the state ``P``), the backward's own buffers ``b0[o]`` (measured
    on the store-everything adjoint), and the segment's values still to be
    used: the kept ones its backward needs made at positions ``<= o`` and,
    once the backward reaches the first recomputed value (``p*``, where all
    of them are recomputed), the recomputed ones made at positions ``<= o``."""
    m = model.m
    size, flops, needed = model.size, model.flops, model.needed
    eff_last, cons, always, returned, b0 = (model.eff_last, model.cons, model.always,
                                            model.returned, model.b0)
    # Pareto fronts: cut position -> (P ascending, C descending, back position,
    # back index); -1 is the start.
    fronts: dict[int, tuple] = {-1: (np.zeros(1), np.zeros(1), np.full(1, -2),
                                     np.zeros(1, dtype=np.int64))}
    mark = [-2] * m
    inf = float("inf")
    for j in model.candidates + [m - 1]:
        kept_bytes = 0      # bytes the cut at j (and pins) keep for later segments
        forever = 0         # returned values: live to the end
        line_kept = 0       # needed kept values of the segment made after o
        line_all = 0        # the same with the recomputed ones
        worst_kept = worst_all = -inf
        found = False       # whether p* was passed
        flops_acc = 0
        parts = []
        o = j
        while o >= 0:
            before_kept, before_all = line_kept, line_all
            if eff_last[o] > j or always[o]:
                kept_bytes += size[o]
                if returned[o]:
                    forever += size[o]
                elif needed[o]:
                    line_kept += size[o]
                    line_all += size[o]
            else:
                rec = needed[o]
                if not rec:
                    for c in cons[o]:
                        if mark[c] == j:
                            rec = True
                            break
                if rec:
                    mark[o] = j
                    flops_acc += flops[o]
                    if needed[o]:
                        line_all += size[o]
                        found = True
            if found:
                if b0[o] - before_all > worst_all:
                    worst_all = b0[o] - before_all
            elif b0[o] - before_kept > worst_kept:
                worst_kept = b0[o] - before_kept
            need = max(worst_kept + line_kept, worst_all + line_all) + forever
            if need > budget:
                break
            front = fronts.get(o - 1)
            if front is not None:
                P, C, _, _ = front
                k = int(np.searchsorted(P, budget - need, side="right"))
                if k:
                    parts.append((P[:k] + kept_bytes, C[:k] + flops_acc, o - 1, k))
            o -= 1
        if not parts:
            continue
        P = np.concatenate([p[0] for p in parts])
        C = np.concatenate([p[1] for p in parts])
        I = np.concatenate([np.full(p[3], p[2]) for p in parts])
        K = np.concatenate([np.arange(p[3]) for p in parts])
        order = np.lexsort((C, P))
        P, C, I, K = P[order], C[order], I[order], K[order]
        best = np.minimum.accumulate(C)
        keep = np.ones(len(C), dtype=bool)
        keep[1:] = C[1:] < best[:-1]
        fronts[j] = (P[keep], C[keep], I[keep], K[keep])
    final = fronts.get(m - 1)
    if final is None:
        return None
    k = int(np.argmin(final[1]))   # sorted by P: the first minimum is the leanest
    cuts = []
    j = m - 1
    while True:
        i, k = int(fronts[j][2][k]), int(fronts[j][3][k])
        if i < 0:
            break
        cuts.append(i)
        j = i
    return sorted(cuts)


def _refine(g: AdjointGraph, start: Evaluation, limit: int, save, forced_out,
            seen: dict) -> Evaluation:
    """Local search from the dynamic program's plan (for small adjoints):
    keep one more value, stop keeping one, or swap one kept value for
    another, as long as that lowers the FLOPs of a plan that fits (or, while
    nothing fits, the peak).  On a DAG the segment model keeps every value
    that crosses a cut; this finds plans that keep some of them only."""
    free = sorted(i for i in g.forward if i not in g.always and i not in save
                  and i not in forced_out)
    fixed = (set(g.always) | set(save)) - set(forced_out)

    def key(e: Evaluation):
        return (0, e.flops, e.peak) if e.peak <= limit else (1, e.peak, e.flops)

    def evaluate(kept):
        kept = frozenset(kept)
        if kept not in seen:
            seen[kept] = g.evaluate(kept)
        return seen[kept]

    best = start
    budget = REFINE_EVALUATIONS
    improved = True
    while improved and budget > 0:
        improved = False
        kept = set(best.kept) - fixed
        inside = [i for i in free if i in kept]
        outside = [i for i in free if i not in kept and i in g.used_by_backward]
        moves = [(None, i) for i in outside] + [(i, None) for i in inside]
        moves += [(i, j) for i in inside for j in outside]
        for drop, add in moves:
            trial = set(kept)
            if drop is not None:
                trial.discard(drop)
            if add is not None:
                trial.add(add)
            budget -= 1
            e = evaluate(trial | fixed)
            if key(e) < key(best):
                best, improved = e, True
                break
            if budget <= 0:
                break
    return best


def _kept_of_cuts(model: _Model, g: AdjointGraph, cuts: list[int]) -> frozenset:
    fwd = g.forward
    kept = set()
    for k in range(model.m):
        if model.always[k]:
            kept.add(fwd[k])
    for j in cuts:
        # F(j): values made up to j that ops after j use.
        for k in range(j + 1):
            if model.eff_last[k] > j and not model.never[k]:
                kept.add(fwd[k])
    return frozenset(kept)


def plan_auto(g: AdjointGraph, budget: tuple[str, float], save: set[int] = frozenset(),
              recompute: set[int] = frozenset()) -> Plan:
    """The plan with the fewest recomputed FLOPs whose peak fits ``budget``
    (``("bytes", n)`` or ``("fraction", f)`` of the store-everything peak).
    ``save``/``recompute``: pinned forward op indices."""
    forced_out = {i for i in recompute if i not in g.always}

    def pinned(kept):
        return frozenset((set(kept) | set(save)) - forced_out)

    full = g.evaluate(pinned(g.full_plan()))
    store_all = g.evaluate(g.full_plan()).peak
    limit = int(budget[1] if budget[0] == "bytes" else budget[1] * store_all)
    if full.peak <= limit:
        return Plan(full.kept, full.peak, full.flops, store_all, limit, True, [], 2)
    model = _build_model(g, set(save), forced_out)
    seen: dict[frozenset, Evaluation] = {full.kept: full}
    cut_of: dict[frozenset, list[int]] = {full.kept: []}

    def trial(model_budget: float):
        cuts = _dp(model, model_budget)
        if cuts is None:
            return None
        kept = pinned(_kept_of_cuts(model, g, cuts))
        if kept not in seen:
            seen[kept] = g.evaluate(kept)
            cut_of[kept] = cuts
        return seen[kept]

    # Largest model budget whose checked plan fits (the model is only an
    # estimate of the checked peak, in either direction).
    lo, hi = 0.0, float(store_all)
    mb = float(limit)
    for _ in range(14):
        ev = trial(mb)
        if ev is None or ev.peak <= limit:
            lo = mb
        else:
            hi = mb
        if hi - lo <= 0.002 * limit:
            break
        mb = (lo + hi) / 2
    fits = [e for e in seen.values() if e.peak <= limit]
    if not fits:
        # Nothing fits: look for the lowest peak (the smallest model budget
        # the dynamic program still solves, and the plans around it).
        lo, hi = 0.0, float(limit)
        for _ in range(14):
            mid = (lo + hi) / 2
            if _dp(model, mid) is None:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 0.002 * limit:
                break
        for factor in (1.0, 1.02, 1.05, 1.1, 1.2):
            trial(hi * factor)
        fits = [e for e in seen.values() if e.peak <= limit]
    if fits:
        best = min(fits, key=lambda e: (e.flops, e.peak))
    else:
        best = min(seen.values(), key=lambda e: (e.peak, e.flops))
    if len(g.ops) <= REFINE_OPS:
        best = _refine(g, best, limit, save, forced_out, seen)
    met = best.peak <= limit
    if best.peak > store_all:     # never worse than storing everything
        best = full
    return Plan(best.kept, best.peak, best.flops, store_all, limit, met,
                cut_of.get(best.kept, []), len(seen))


def _model_peak(model: _Model, cuts: list[int]) -> list[float]:
    """The segment model's peak of each segment of ``cuts`` (for tests)."""
    out = []
    P = 0
    bounds = [-1] + sorted(cuts) + [model.m - 1]
    for i, j in zip(bounds, bounds[1:]):
        kept_bytes = forever = line_kept = line_all = 0
        worst_kept = worst_all = -float("inf")
        found = False
        rec = set()
        for o in range(j, i, -1):
            before_kept, before_all = line_kept, line_all
            if model.eff_last[o] > j or model.always[o]:
                kept_bytes += model.size[o]
                if model.returned[o]:
                    forever += model.size[o]
                elif model.needed[o]:
                    line_kept += model.size[o]
                    line_all += model.size[o]
            elif model.needed[o] or any(c in rec for c in model.cons[o]):
                rec.add(o)
                if model.needed[o]:
                    line_all += model.size[o]
                    found = True
            if found:
                worst_all = max(worst_all, model.b0[o] - before_all)
            else:
                worst_kept = max(worst_kept, model.b0[o] - before_kept)
        out.append(P + max(worst_kept + line_kept, worst_all + line_all) + forever)
        P += kept_bytes
    return out

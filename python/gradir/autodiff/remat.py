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
   segment model (exactly so on a chain).
3. Every plan is checked by building its adjoint in the memory model (the
   same schedule as the IR rewrite); a bisection on the model's budget
   corrects the model's error, and the best plan whose *checked* peak fits
   is taken.  Storing everything is always a candidate, so the plan never
   exceeds the store-everything peak; when nothing fits, the plan with the
   lowest peak found is taken and the caller warns.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np
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
    values = {i: v for v, i in graph.ids.items()}
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
            new.attributes[RECOMPUTED] = ir.UnitAttr.get()
            for pin in ("grad.save", "grad.recompute"):
                if pin in new.attributes:
                    del new.attributes[pin]
            for r, nr in zip(graph.ops[q].results, new.results):
                clone[r] = nr
            cloned[q] = 1
        for k, u in enumerate(graph.ops[i].operands):
            if u in clone:
                target.operands[k] = clone[u]
    del values
    return cloned


# ----------------------------------------------------------------------------
# The automatic planner

def parse_budget(text: str) -> tuple[str, float]:
    """``("fraction", f)`` or ``("bytes", n)`` from ``0.25``, ``25%``,
    ``1048576``, ``64MiB``, ``1.5GB``...  Raises ValueError."""
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
    pin_bytes: list[int]
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
    returned = set(g.ret)
    pin_bytes = [size[k] if always[k] and (needed[k] or any(r in returned for r in
                                                            g.ops[fwd[k]].results)) else 0
                 for k in range(m)]

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
        if clean[j]:
            candidates.append(j)
        elif valid[j]:
            # A cut keeping values the backward does not need pays off only
            # when they are smaller than what the neighbouring clean cuts keep.
            around = [fbytes[c] for c in (prev_clean[j], next_clean[j]) if c is not None]
            if not around or fbytes[j] < min(around):
                candidates.append(j)
    return _Model(m, size, flops, needed, eff_last, cons, always, pin_bytes, never, b0,
                  candidates)


def _dp(model: _Model, budget: float):
    """The cheapest cut list under the segment model with ``budget``, or
    None when no plan fits."""
    m = model.m
    size, flops, needed = model.size, model.flops, model.needed
    eff_last, cons, always, pin_bytes, b0 = (model.eff_last, model.cons, model.always,
                                             model.pin_bytes, model.b0)
    is_cand = [False] * m
    for c in model.candidates:
        is_cand[c] = True
    # Pareto fronts: position -> (P ascending, C descending, back i, back index)
    fronts: dict[int, tuple] = {-1: (np.zeros(1), np.zeros(1), np.full(1, -2), np.zeros(1,
                                                                                   dtype=np.int64))}
    mark = [-2] * m
    ends = model.candidates + [m - 1]
    for j in ends:
        accF = accR = accC = accPin = 0
        base = 0
        parts_p, parts_c, parts_i, parts_k = [], [], [], []
        o = j
        while o >= 0:
            if eff_last[o] > j or always[o]:
                if always[o]:
                    accPin += pin_bytes[o]
                else:
                    accF += size[o]
            else:
                rec = needed[o]
                if not rec:
                    for c in cons[o]:
                        if mark[c] == j:
                            rec = True
                            break
                if rec:
                    mark[o] = j
                    accC += flops[o]
                    if needed[o]:
                        accR += size[o]
            if b0[o] > base:
                base = b0[o]
            if accR + base > budget:
                break
            i = o - 1
            front = fronts.get(i)
            if front is not None:
                P, C, _, _ = front
                room = budget - (accF + accPin + accR + base)
                k = int(np.searchsorted(P, room, side="right"))
                if k:
                    parts_p.append(P[:k] + (accF + accPin))
                    parts_c.append(C[:k] + accC)
                    parts_i.append(np.full(k, i))
                    parts_k.append(np.arange(k))
            o -= 1
        if not parts_p:
            continue
        P = np.concatenate(parts_p)
        C = np.concatenate(parts_c)
        I = np.concatenate(parts_i)
        K = np.concatenate(parts_k)
        order = np.lexsort((C, P))
        P, C, I, K = P[order], C[order], I[order], K[order]
        best = np.minimum.accumulate(C)
        keep = np.ones(len(C), dtype=bool)
        keep[1:] = C[1:] < best[:-1]
        fronts[j] = (P[keep], C[keep], I[keep], K[keep])
    final = fronts.get(m - 1)
    if final is None:
        return None
    P, C, I, K = final
    k = int(np.argmin(C))          # fronts are sorted by P: the first minimum is the leanest
    cuts = []
    j = m - 1
    while True:
        i, k = int(fronts[j][2][k]), int(fronts[j][3][k])
        if i < 0:
            break
        cuts.append(i)
        j = i
    return sorted(cuts)


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
        met = True
    else:
        best = min(seen.values(), key=lambda e: (e.peak, e.flops))
        met = False
    if best.peak > store_all:     # never worse than storing everything
        best = full
    return Plan(best.kept, best.peak, best.flops, store_all, limit, met,
                cut_of.get(best.kept, []), len(seen))

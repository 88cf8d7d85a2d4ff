"""remat=auto's planner: the segment model and the dynamic program over cuts.

``plan_auto(graph, budget)`` (see ``remat.py`` for the plan it returns and
how the IR is rewritten) finds the plan with the fewest recomputed FLOPs
whose peak fits the budget:

1. ``build_model``: the forward ops in order, as a table (``OpTable``: bytes,
   FLOPs, whether the backward needs each value, consumers, pins), the last
   use of each value counting aliases (``last_use``), what the backward holds
   besides forward values at each position (``backward_baseline``,
   measured on the store-everything adjoint) and the positions worth a cut
   (``cut_candidates``).
2. ``scan_segment``: for a segment ending at cut ``j``, walking back over
   its positions, what the segment would need (bytes) and recompute
   (FLOPs) if it started there.  It depends on the model only, not on the
   budget, so each is computed once and reused by every ``dp`` call.
3. ``dp``: per cut position, the Pareto front of (bytes kept so far, FLOPs
   recomputed so far) of the feasible prefixes; the cheapest plan at the
   last op is optimal for the segment model.
4. ``plan_auto``: bisection on the model's budget against plans checked
   exactly on the rewritten adjoint (``AdjointGraph.evaluate``), a local
   search for small adjoints, and storing everything as the fallback.

Large functions keep at most ``MAX_CUTS`` candidate cuts (the leanest of
evenly spaced windows), so a plan costs O(positions x cuts) to model and
O(cuts^2) per dynamic program.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .memory import build_program

__all__ = ["Plan", "plan_auto", "build_model", "dp", "model_peaks"]

# Up to this many forward ops, every position is a candidate cut; above it,
# the cuts that keep only values the backward needs, and those that keep
# less than the cuts around them.
EXHAUSTIVE_POSITIONS = 160
# At most this many candidate cuts (the leanest of as many equal windows).
MAX_CUTS = 128
# Adjoints up to this many ops get a local search after the dynamic program,
# of at most this many plan evaluations.
REFINE_OPS = 600
REFINE_EVALUATIONS = 400


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


# ----------------------------------------------------------------------------
# 1. The segment model

@dataclass
class OpTable:
    """The forward ops in program order (position k = ``graph.forward[k]``)."""
    size: list[int]             # bytes of the results (0 for aliases)
    flops: list[int]
    needed: list[bool]          # the backward uses the value (or an alias of it)
    cons: list[list[int]]       # consumer positions
    alias: list[bool]
    always: list[bool]          # kept whatever the plan (returned, constant, grad.save)
    never: list[bool]           # pinned grad.recompute
    returned: list[bool]


@dataclass
class Cuts:
    """Cut positions: a cut after op j keeps F(j) = {o <= j : last_use[o] > j}."""
    kept_bytes: list[int]       # bytes of F(j)
    candidates: list[int]


@dataclass
class Model:
    m: int
    table: OpTable
    last_use: list[int]         # effective last consumer position (aliases followed)
    b0: list[int]               # backward's own live bytes while at each position
    cuts: Cuts
    scans: dict = field(default_factory=dict)    # end position -> SegmentScan


def op_table(g, save: set[int], recompute: set[int]) -> OpTable:
    fwd = g.forward
    m = len(fwd)
    pos = {op: k for k, op in enumerate(fwd)}
    t = OpTable([0] * m, [0] * m, [False] * m, [[] for _ in range(m)], [False] * m,
                [False] * m, [False] * m, [False] * m)
    ret_values = set(g.ret)
    for k, i in enumerate(fwd):
        op = g.ops[i]
        t.alias[k] = bool(op.alias)
        t.size[k] = 0 if op.alias else sum(op.result_bytes)
        t.flops[k] = op.flops
        t.needed[k] = i in g.used_by_backward
        t.always[k] = i in g.always or i in save
        t.never[k] = i in recompute and i not in g.always
        t.returned[k] = any(r in ret_values for r in op.results)
        for v in op.operands:
            p = g.producer.get(v)
            if p is not None and p in pos:
                t.cons[pos[p]].append(k)
    # An alias (tuple, tuple_get_item) keeps what it refers to alive.
    for k in range(m - 1, -1, -1):
        if t.needed[k] and t.alias[k]:
            for v in g.ops[fwd[k]].operands:
                p = g.producer.get(v)
                if p is not None and p in pos:
                    t.needed[pos[p]] = True
    return t


def last_use(t: OpTable) -> list[int]:
    m = len(t.size)
    out = [-1] * m
    for k in range(m - 1, -1, -1):
        last = -1
        for c in t.cons[k]:
            last = max(last, c, out[c] if t.alias[c] else -1)
        out[k] = last
    return out


def backward_baseline(g, m: int) -> list[int]:
    """What the backward holds besides forward values, per forward position,
    measured on the store-everything adjoint."""
    fwd = g.forward
    pos = {op: k for k, op in enumerate(fwd)}
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
    return b0


def cut_candidates(t: OpTable, last: list[int]) -> Cuts:
    m = len(t.size)
    fbytes, f_never, f_unneeded = [0] * m, [0] * m, [0] * m
    add_at: list[list[int]] = [[] for _ in range(m)]
    drop_at: list[list[int]] = [[] for _ in range(m + 1)]
    for k in range(m):
        if last[k] > k and not t.always[k]:
            add_at[k].append(k)
            drop_at[last[k]].append(k)
    cur_bytes = cur_never = cur_unneeded = 0
    for j in range(m):
        for k in add_at[j]:
            cur_bytes += t.size[k]
            cur_never += t.never[k]
            cur_unneeded += (not t.needed[k] and t.size[k] > 0)
        for k in drop_at[j]:
            cur_bytes -= t.size[k]
            cur_never -= t.never[k]
            cur_unneeded -= (not t.needed[k] and t.size[k] > 0)
        fbytes[j], f_never[j], f_unneeded[j] = cur_bytes, cur_never, cur_unneeded
    valid = [f_never[j] == 0 for j in range(m)]
    clean = [valid[j] and f_unneeded[j] == 0 for j in range(m)]
    prev_clean, next_clean = [None] * m, [None] * m
    seen = None
    for j in range(m):
        prev_clean[j] = seen
        if clean[j]:
            seen = j
    seen = None
    for j in range(m - 1, -1, -1):
        next_clean[j] = seen
        if clean[j]:
            seen = j
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
    if len(candidates) > MAX_CUTS and m > EXHAUSTIVE_POSITIONS:
        candidates = _thin(candidates, fbytes, clean, m)
    return Cuts(fbytes, candidates)


def _thin(candidates: list[int], fbytes: list[int], clean: list[bool], m: int) -> list[int]:
    """The leanest candidate (clean first, then fewest bytes kept, then the
    latest) of each of ``MAX_CUTS`` equal windows of positions."""
    best: dict[int, int] = {}
    for j in candidates:
        w = j * MAX_CUTS // max(m - 1, 1)
        b = best.get(w)
        if b is None or (not clean[j], fbytes[j], -j) < (not clean[b], fbytes[b], -b):
            best[w] = j
    return sorted(best.values())


def build_model(g, save: set[int], recompute: set[int]) -> Model:
    t = op_table(g, save, recompute)
    last = last_use(t)
    m = len(t.size)
    return Model(m, t, last, backward_baseline(g, m), cut_candidates(t, last))


# ----------------------------------------------------------------------------
# 2. Segments

@dataclass
class SegmentScan:
    """A segment ending at cut ``end``, at each start where a Pareto front
    may exist (position ``o`` with a front at ``o - 1``), in decreasing
    ``o``: the bytes it needs (nondecreasing), the bytes its cut keeps for
    later segments, and the FLOPs it recomputes."""
    starts: list[int]
    need: np.ndarray
    kept_bytes: list[int]
    flops: list[int]


def scan_segment(model: Model, j: int, front_at: set[int]) -> SegmentScan:
    """For a segment ``(i, j]`` the backward visits positions ``j, j-1, ...,
    i+1``; at position ``o`` the live bytes are the kept values of earlier
    cuts, the backward's own buffers ``b0[o]``, and the segment's values
    still to be used: the kept ones its backward needs made at positions
    ``<= o`` and, once the backward reaches the first recomputed value
    (``p*``, where all of them are recomputed), the recomputed ones made at
    positions ``<= o``."""
    t, last, b0 = model.table, model.last_use, model.b0
    size, needed, cons, always, returned = t.size, t.needed, t.cons, t.always, t.returned
    marked: set[int] = set()
    kept_bytes = forever = line_kept = line_all = 0
    worst_kept = worst_all = -float("inf")
    found = False
    flops_acc = 0
    starts, need, kept, flops = [], [], [], []
    for o in range(j, -1, -1):
        before_kept, before_all = line_kept, line_all
        if last[o] > j or always[o]:
            kept_bytes += size[o]
            if returned[o]:
                forever += size[o]
            elif needed[o]:
                line_kept += size[o]
                line_all += size[o]
        elif needed[o] or any(c in marked for c in cons[o]):
            marked.add(o)
            flops_acc += t.flops[o]
            if needed[o]:
                line_all += size[o]
                found = True
        if found:
            if b0[o] - before_all > worst_all:
                worst_all = b0[o] - before_all
        elif b0[o] - before_kept > worst_kept:
            worst_kept = b0[o] - before_kept
        if o - 1 in front_at:
            starts.append(o)
            need.append(max(worst_kept + line_kept, worst_all + line_all) + forever)
            kept.append(kept_bytes)
            flops.append(flops_acc)
    return SegmentScan(starts, np.asarray(need, dtype=float), kept, flops)


# ----------------------------------------------------------------------------
# 3. The dynamic program

@dataclass
class Front:
    """Pareto front of the feasible prefixes ending with a cut: bytes kept
    so far (ascending), FLOPs recomputed (descending), and where each came
    from (previous cut, index in its front)."""
    kept: np.ndarray
    flops: np.ndarray
    prev: np.ndarray
    prev_index: np.ndarray


def _extend(model: Model, j: int, fronts: dict, budget: float) -> Front | None:
    scan = model.scans.get(j)
    if scan is None:
        scan = model.scans[j] = scan_segment(model, j, set(model.cuts.candidates) | {-1})
    n_ok = int(np.searchsorted(scan.need, budget, side="right"))
    parts = []
    for s in range(n_ok):
        o = scan.starts[s]
        front = fronts.get(o - 1)
        if front is None:
            continue
        k = int(np.searchsorted(front.kept, budget - scan.need[s], side="right"))
        if k:
            parts.append((front.kept[:k] + scan.kept_bytes[s], front.flops[:k] + scan.flops[s],
                          o - 1, k))
    if not parts:
        return None
    P = np.concatenate([p[0] for p in parts])
    C = np.concatenate([p[1] for p in parts])
    I = np.concatenate([np.full(p[3], p[2]) for p in parts])
    K = np.concatenate([np.arange(p[3]) for p in parts])
    order = np.lexsort((C, P))
    P, C, I, K = P[order], C[order], I[order], K[order]
    best = np.minimum.accumulate(C)
    keep = np.ones(len(C), dtype=bool)
    keep[1:] = C[1:] < best[:-1]
    return Front(P[keep], C[keep], I[keep], K[keep])


def _backtrack(fronts: dict, last: int) -> list[int]:
    final = fronts[last]
    k = int(np.argmin(final.flops))   # sorted by bytes: the first minimum is the leanest
    cuts = []
    j = last
    while True:
        i, k = int(fronts[j].prev[k]), int(fronts[j].prev_index[k])
        if i < 0:
            break
        cuts.append(i)
        j = i
    return sorted(cuts)


def dp(model: Model, budget: float):
    """The cheapest cut list under the segment model with ``budget``, or
    None when no plan fits."""
    m = model.m
    fronts: dict[int, Front] = {-1: Front(np.zeros(1), np.zeros(1), np.full(1, -2),
                                          np.zeros(1, dtype=np.int64))}
    for j in model.cuts.candidates + [m - 1]:
        front = _extend(model, j, fronts, budget)
        if front is not None:
            fronts[j] = front
    if m - 1 not in fronts:
        return None
    return _backtrack(fronts, m - 1)


def model_peaks(model: Model, cuts: list[int]) -> list[float]:
    """The segment model's peak of each segment of ``cuts`` (for tests)."""
    out = []
    P = 0
    bounds = [-1] + sorted(cuts) + [model.m - 1]
    for i, j in zip(bounds, bounds[1:]):
        scan = scan_segment(model, j, {i})
        out.append(P + float(scan.need[0]))
        P += scan.kept_bytes[0]
    return out


# ----------------------------------------------------------------------------
# 4. Plans checked on the adjoint

def _refine(g, start, limit: int, save, forced_out, seen: dict):
    """Local search from the dynamic program's plan (for small adjoints):
    keep one more value, stop keeping one, or swap one kept value for
    another, as long as that lowers the FLOPs of a plan that fits (or, while
    nothing fits, the peak).  On a DAG the segment model keeps every value
    that crosses a cut; this finds plans that keep some of them only."""
    free = sorted(i for i in g.forward if i not in g.always and i not in save
                  and i not in forced_out)
    fixed = (set(g.always) | set(save)) - set(forced_out)

    def key(e):
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


def _kept_of_cuts(model: Model, g, cuts: list[int]) -> frozenset:
    fwd = g.forward
    t = model.table
    kept = {fwd[k] for k in range(model.m) if t.always[k]}
    # F(j): values made up to j that ops after j use.
    for j in cuts:
        for k in range(j + 1):
            if model.last_use[k] > j and not t.never[k]:
                kept.add(fwd[k])
    return frozenset(kept)


def plan_auto(g, budget: tuple[str, float], save: set[int] = frozenset(),
              recompute: set[int] = frozenset()) -> Plan:
    """The plan with the fewest recomputed FLOPs whose peak fits ``budget``
    (``("bytes", n)`` or ``("fraction", f)`` of the store-everything peak).
    ``g``: a ``remat.AdjointGraph``; ``save``/``recompute``: pinned forward
    op indices."""
    forced_out = {i for i in recompute if i not in g.always}

    def pinned(kept):
        return frozenset((set(kept) | set(save)) - forced_out)

    full = g.evaluate(pinned(g.full_plan()))
    store_all = g.evaluate(g.full_plan()).peak
    limit = int(budget[1] if budget[0] == "bytes" else budget[1] * store_all)
    if full.peak <= limit:
        return Plan(full.kept, full.peak, full.flops, store_all, limit, True, [], 2)
    model = build_model(g, set(save), forced_out)
    seen: dict = {full.kept: full}
    cut_of: dict = {full.kept: []}

    def trial(model_budget: float):
        cuts = dp(model, model_budget)
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
            if dp(model, mid) is None:
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

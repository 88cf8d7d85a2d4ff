"""Checkpoint markers and pins: which forward values the backward keeps.

``grad.start_checkpoint`` / ``grad.end_checkpoint`` follow TVM Relax
(gradient.cc, CheckpointCollector):

1. the function's arguments are kept;
2. a value wrapped by ``grad.start_checkpoint`` is kept;
3. any other value is kept when every operand of the op that computes it is
   kept or is the result of a ``grad.end_checkpoint``;
4. everything else is recomputed in the backward from kept values.

So the values inside a checkpoint (computed from a ``start_checkpoint``
result) are recomputed, and the first values after an ``end_checkpoint``
are kept again.  Unlike Relax, rule 2 does not depend on where the marker
sits: a value wrapped by a marker anywhere is kept.  Constants (no
operands) are kept.

Pins are unit attributes on forward ops and override the markers and the
automatic planner: ``grad.save`` keeps the op's results, ``grad.recompute``
recomputes them.  A pinned value counts as kept (or not) when rule 3 looks
at its users.

A marker on a constant (``arith.constant``) is accepted, as Relax accepts
one on a Var bound to a constant: the constant is kept (it needs no
recomputation), so a checkpoint it starts recomputes what it feeds.  Every
program Relax's Gradient accepts is accepted with Relax's meaning; the
suspicious ones get a warning: a
``start_checkpoint`` of a ``start_checkpoint`` or inside a checkpoint that
is still open (nested: the inner marker's operand is kept, by rule 2), an
``end_checkpoint`` that closes nothing (an identity whose value is kept, by
rule 3).  An empty checkpoint (``end(start(x))``) keeps ``x``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from .gradient import GradientError

__all__ = ["START", "END", "MARKERS", "SAVE", "RECOMPUTE", "has_markers", "may_be_marked",
           "read_pins",
           "validate_markers", "marker_plan", "strip_markers", "strip_pins", "Diagnostic",
           "CheckpointPlan", "plan_checkpoints"]

START = "grad.start_checkpoint"
END = "grad.end_checkpoint"
MARKERS = (START, END)
SAVE = "grad.save"
RECOMPUTE = "grad.recompute"


def has_markers(block: ir.Block) -> bool:
    return any(op.operation.name in MARKERS for op in block.operations)


def _producer(v: ir.Value):
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def read_pins(block: ir.Block) -> tuple[set, set]:
    """``(save, recompute)``: the ops pinned with ``grad.save`` /
    ``grad.recompute``.  Refuses non-unit pins, both pins on one op, and
    pins on markers."""
    save, recompute = set(), set()
    for op in block.operations:
        op = op.operation
        pins = [p for p in (SAVE, RECOMPUTE) if p in op.attributes]
        if not pins:
            continue
        for p in pins:
            if not isinstance(op.attributes[p], ir.UnitAttr):
                raise GradientError(op, f"'{p}' must be a unit attribute (write "
                                        f"{{{p}}}), not {op.attributes[p]}")
        if len(pins) == 2:
            raise GradientError(op, f"'{op.name}' has both '{SAVE}' and '{RECOMPUTE}'")
        if op.name.startswith("grad."):
            raise GradientError(op, f"'{pins[0]}' pins go on ops that compute values, "
                                    f"not on '{op.name}'")
        if not op.results:
            continue
        (save if pins[0] == SAVE else recompute).add(op)
    return save, recompute


def validate_markers(block: ir.Block) -> None:
    """Warns about suspicious markers (see the module docstring)."""
    from .. import _compat
    open_at: dict = {}          # value -> the start markers whose checkpoint it is in
    for op in block.operations:
        op = op.operation
        name = op.name
        if name not in MARKERS:
            inside = set()
            for v in op.operands:
                inside |= open_at.get(v, frozenset())
            for r in op.results:
                open_at[r] = frozenset(inside)
            continue
        x = op.operands[0]
        src = _producer(x)
        inside = open_at.get(x, frozenset())
        if name == START:
            if src is not None and src.name == START:
                _compat.emit(op.location, "warning",
                             f"nested '{START}': its operand already starts a checkpoint "
                             "(kept, as in Relax)")
            elif inside:
                _compat.emit(op.location, "warning",
                             f"nested '{START}': its operand is inside the checkpoint started "
                             f"at {_where(min(inside, key=_order(block)))}; it is kept, as in "
                             f"Relax (close that checkpoint with '{END}' first to mean "
                             "otherwise)")
            open_at[op.results[0]] = frozenset({op})
            continue
        if not inside:
            _compat.emit(op.location, "warning",
                         f"'{END}' closes no checkpoint: its operand does not depend on a "
                         f"'{START}' result (an identity that keeps its value, as in Relax)")
        open_at[op.results[0]] = frozenset()


def _order(block: ir.Block):
    index = {op.operation: i for i, op in enumerate(block.operations)}
    return lambda op: index.get(op, 0)


def _where(op: ir.Operation) -> str:
    from .. import _compat
    return _compat.format_location(op.location)


def origin(v: ir.Value) -> ir.Value:
    """``v`` with markers looked through."""
    while True:
        src = _producer(v)
        if src is None or src.name not in MARKERS:
            return v
        v = src.operands[0]


def marker_plan(block: ir.Block, forward: list, save: set, recompute: set):
    """Relax's rules over ``forward`` (ops of ``block`` in order).

    Returns ``(kept, reasons)``: the non-marker forward ops whose results
    the backward may use as they are, and a reason per op (for remarks)."""
    checkpoints = set(block.arguments)
    for op in forward:
        if op.name == START:
            checkpoints.add(origin(op.operands[0]))
    ends = {op.results[0] for op in forward if op.name == END}
    starts = {op.results[0] for op in forward if op.name == START}
    kept, reasons = set(), {}
    for op in forward:
        if op.name in MARKERS:
            continue
        if op in save:
            kept.add(op)
            reasons[op] = "pinned by grad.save"
            checkpoints.update(op.results)
            continue
        if op in recompute:
            reasons[op] = "pinned by grad.recompute"
            checkpoints.difference_update(op.results)
            continue
        wrapped = any(r in checkpoints for r in op.results)
        if wrapped:
            kept.add(op)
            reasons[op] = f"wrapped by {START}"
            continue
        blocker = next((v for v in op.operands if v not in checkpoints and v not in ends),
                       None)
        if blocker is None:
            kept.add(op)
            reasons[op] = (f"every operand is kept or closes a checkpoint ({END})"
                           if op.operands else "a constant")
            checkpoints.update(op.results)
        elif blocker in starts:
            reasons[op] = f"inside a checkpoint (computed from a {START} result)"
        else:
            reasons[op] = "computed from a recomputed value"
    return kept, reasons


def strip_markers(block: ir.Block) -> None:
    """Replaces every checkpoint marker by its operand."""
    for op in list(block.operations):
        op = op.operation
        if op.name in MARKERS:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()


def strip_pins(block: ir.Block) -> None:
    for op in block.operations:
        op = op.operation
        for p in (SAVE, RECOMPUTE):
            if p in op.attributes:
                del op.attributes[p]


# ----------------------------------------------------------------------------
# The checkpoint plan of an adjoint: markers, pins or remat=auto

@dataclass
class Diagnostic:
    severity: str          # "warning" or "remark"
    where: object          # an op (or function) whose location it is reported at
    message: str


@dataclass
class CheckpointPlan:
    """Which forward values of an adjoint the backward keeps (``kept``: op
    positions in ``graph``), why, and what to report.  ``apply()`` rewrites
    the adjoint; ``diagnostics`` then holds every warning and remark, in
    order, for the caller to emit."""
    function: object                   # the adjoint func.func
    graph: object                      # remat.AdjointGraph
    kept: set
    remat: str                         # "none" or "auto"
    save: set
    recompute: set
    reasons: dict = field(default_factory=dict)
    auto: object = None                # remat.Plan, for remat=auto
    remarks: bool = False
    diagnostics: list = field(default_factory=list)

    def warn(self, where, message: str) -> None:
        self.diagnostics.append(Diagnostic("warning", where, message))

    def remark(self, where, message: str) -> None:
        self.diagnostics.append(Diagnostic("remark", where, message))

    def apply(self) -> dict:
        """Clones the recomputed ops into the backward, drops the pins, and
        (with ``remarks``) explains every decision.  Returns the clones."""
        from .remat import apply_plan
        graph = self.graph
        evaluation = graph.evaluate(self.kept) if self.remarks else None
        baseline = graph.evaluate(graph.full_plan()) if self.remarks else None
        cloned = apply_plan(graph, self.kept)
        strip_pins(graph.block)
        if self.remarks:
            self._explain(cloned, evaluation, baseline)
        return cloned

    def _why(self, i: int, cloned, roots) -> str:
        g = self.graph
        if i in self.save:
            return "pinned by grad.save"
        if i in self.recompute and i not in g.always:
            return "pinned by grad.recompute"
        if i in g.always:
            return g.always[i]
        if i in self.reasons:
            return self.reasons[i]
        if self.remat == "auto" and i in cloned:
            return "remat=auto recomputes it to fit the budget"
        if self.remat == "auto" and i in roots:
            return "remat=auto checkpoint: the backward recomputes values from it"
        if self.remat == "auto":
            return "remat=auto keeps it: the budget has room for it"
        return "no checkpoint covers it"

    def _explain(self, cloned, evaluation, baseline) -> None:
        from .cost import type_bytes
        g = self.graph
        kept_bytes = 0
        roots = set()
        for q in cloned:
            for v in g.ops[q].operands:
                p = g.producer.get(v)
                if p is not None and p not in cloned:
                    roots.add(p)
        for i in g.forward:
            if i not in g.used_by_backward and i not in cloned:
                continue
            op = g.ir_ops[i]
            nbytes = sum(type_bytes(r.type) for r in op.results)
            why = self._why(i, cloned, roots)
            if i in cloned:
                self.remark(op, f"rlx-gradient: recomputed in the backward "
                                f"({g.ops[i].flops} FLOPs, {nbytes} bytes not kept): {why}")
            else:
                kept_bytes += nbytes
                self.remark(op, f"rlx-gradient: kept for the backward ({nbytes} bytes): {why}")
        what = "remat=auto" if self.remat == "auto" else "checkpoints"
        n = len(cloned)
        self.remark(self.function, f"rlx-gradient: {what}: keeps {kept_bytes} bytes, recomputes "
                                   f"{n} op{'' if n == 1 else 's'} ({evaluation.flops} FLOPs); "
                                   f"peak {evaluation.peak} bytes (storing everything: "
                                   f"{baseline.peak} bytes)")


def may_be_marked(block: ir.Block) -> bool:
    """False when no op of ``block`` is a marker, carries a pin or is a
    ``func.call`` (whose callee, once inlined, might): then neither the
    block nor a gradient built from it has markers or pins, and
    ``plan_checkpoints`` needs not look (``unmarked=True``)."""
    for op in block.operations:
        op = op.operation
        name = op.name
        if name in MARKERS or name == "func.call":
            return True
        attrs = op.attributes
        if len(attrs) and (SAVE in attrs or RECOMPUTE in attrs):
            return True
    return False


def plan_checkpoints(module, fn, n_results: int, remat: str = "none", budget=None,
                     remarks: bool = False, unmarked: bool = False):
    """The checkpoint plan of adjoint ``fn`` (its first ``n_results``
    results are the forward's): from the markers, the pins, or remat=auto
    with ``budget`` (``remat.parse_budget``'s form).  Strips the markers.
    None when there is nothing to plan (no remat, markers or pins).
    ``unmarked``: the caller knows ``fn`` has no markers and no pins
    (``may_be_marked`` of the function it was built from)."""
    block = fn.regions[0].blocks[0]
    if unmarked:
        markers, save_ops, recompute_ops = False, set(), set()
    else:
        markers = has_markers(block)
        save_ops, recompute_ops = read_pins(block)
    if remat == "none" and not markers and not save_ops and not recompute_ops:
        return None
    # (remat, with the memory model and the planner, only now: ~5 ms of
    # imports a plain gradient does without; issue 14, compile time)
    from .remat import AdjointGraph, plan_auto
    # Everything is done on op positions: MLIR's Python Operation objects
    # do not stay usable as dictionary keys once the IR around them changes.
    graph = AdjointGraph(block, n_results, module)
    diagnostics: list = []
    index = {op: i for i, op in enumerate(graph.ir_ops)}
    save0 = {index[op] for op in save_ops if op in index}
    recompute0 = {index[op] for op in recompute_ops if op in index}
    kept0, reasons0 = None, {}
    if markers and remat == "none":
        forward = [graph.ir_ops[i] for i in graph.forward]
        kept_ops, reasons = marker_plan(block, forward, save_ops, recompute_ops)
        kept0 = {index[op] for op in kept_ops}
        reasons0 = {index[op]: why for op, why in reasons.items()}
    elif markers:
        diagnostics.append(Diagnostic(
            "warning", fn, "rlx-gradient: remat=auto makes its own plan; the "
                           "grad.start_checkpoint/grad.end_checkpoint markers are ignored"))
    if markers:
        # Positions after the markers are gone.
        renumber, k = {}, 0
        for i, op in enumerate(graph.ir_ops):
            if op.name not in MARKERS:
                renumber[i] = k
                k += 1
        strip_markers(block)
        graph = AdjointGraph(block, n_results, module)
    else:
        renumber = {i: i for i in range(len(graph.ir_ops))}
    save = {renumber[i] for i in save0 if graph.fwd[renumber[i]]}
    recompute = {renumber[i] for i in recompute0 if graph.fwd[renumber[i]]}
    plan = CheckpointPlan(fn, graph, set(), remat, save, recompute,
                          {renumber[i]: why for i, why in reasons0.items()},
                          remarks=remarks, diagnostics=diagnostics)
    if remarks:
        for i in recompute:
            if i in graph.always:
                plan.remark(graph.ir_ops[i], f"rlx-gradient: grad.recompute ignored: the value "
                                             f"is {graph.always[i]}, so it is live anyway")
    if remat == "auto":
        plan.auto = plan_auto(graph, budget, save, recompute)
        plan.kept = set(plan.auto.kept)
        if not plan.auto.met:
            plan.warn(fn, f"rlx-gradient: remat=auto cannot meet the budget of "
                          f"{plan.auto.budget} bytes: the lowest peak it reaches is "
                          f"{plan.auto.peak} bytes (storing everything: "
                          f"{plan.auto.store_all_peak} bytes)")
    elif kept0 is not None:
        kept = {renumber[i] for i in kept0}
        kept |= set(graph.always) | save
        kept -= {i for i in recompute if i not in graph.always}
        plan.kept = kept
    else:   # pins only
        plan.kept = (set(graph.forward) | save) - {i for i in recompute
                                                   if i not in graph.always}
    return plan

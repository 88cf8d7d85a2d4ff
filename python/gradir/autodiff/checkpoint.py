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

A marker on a constant is refused (``GradientError``), as in Relax (its
operand must be a Var).  Every program Relax's Gradient accepts is accepted
with Relax's meaning; the suspicious ones get a warning: a
``start_checkpoint`` of a ``start_checkpoint`` or inside a checkpoint that
is still open (nested: the inner marker's operand is kept, by rule 2), an
``end_checkpoint`` that closes nothing (an identity whose value is kept, by
rule 3).  An empty checkpoint (``end(start(x))``) keeps ``x``.
"""

from __future__ import annotations

from mlir import ir

from .gradient import GradientError

__all__ = ["START", "END", "MARKERS", "SAVE", "RECOMPUTE", "has_markers", "read_pins",
           "validate_markers", "marker_plan", "strip_markers", "strip_pins"]

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
    """Refuses markers on constants and warns about suspicious ones (see the
    module docstring)."""
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
        if src is not None and src.name == "arith.constant":
            raise GradientError(op, f"'{name}' must mark an argument or a value the function "
                                    "computes, not a constant")
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

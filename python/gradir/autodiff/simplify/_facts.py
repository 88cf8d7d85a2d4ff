"""What the simplification patterns ask of the IR, and how they build.

Facts: an op's producer, shapes, known splat values (``rlx.zeros``,
``rlx.ones``, ``*_like``, ``rlx.full`` of a constant, splat
``arith.constant``s, and shape-only ops of those), transposes, and how
many ops a rewrite removes.  Building: ``Rewrite`` creates ops at the
rewriter's insertion point with the matched op's location, carries the
checkpointing marks over, and replaces the matched op.

Every pattern checks its cost before building anything: it creates no
more ops than it removes (``removable``), so simplification never grows
a function.
"""

from __future__ import annotations

import math
from typing import Sequence

from mlir import ir
from mlir.dialects import arith

from ...dialects import rlx
from ...dialects.util import elt_of, is_pure, numel, reduction_axes, shape_of  # noqa: F401

# Discardable attributes of the checkpointing passes.  ``grad.recomputed``
# marks ops rematerialised in the backward: ops built while rewriting one
# are part of that recomputation and get the mark too, and a pattern never
# reuses a recomputed op for a forward one (or the reverse).  The pins
# (``grad.save`` / ``grad.recompute``) move to the op that replaces the
# pinned one, when there is one.
RECOMPUTED = "grad.recomputed"
PINS = ("grad.save", "grad.recompute")

RESHAPES = frozenset({"rlx.reshape", "rlx.expand_dims", "rlx.squeeze", "rlx.flatten"})

# ``existing_transpose``'s index (the simplifier's driver) cannot say which
# of several transposes the use list meets first.
SCAN = object()


# --- reading the IR ----------------------------------------------------------

def producer(v: ir.Value, *names: str):
    """The op defining ``v`` (an ``ir.Operation``), if it is one of
    ``names`` (any op when none is given); None for block arguments."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation
    if names and op.name not in names:
        return None
    return op


def is_tensor(v: ir.Value) -> bool:
    return isinstance(v.type, ir.RankedTensorType)


def is_float(t: ir.Type) -> bool:
    return isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def attrs(op) -> dict:
    return rlx.attributes_of(op)


def iter_users(v: ir.Value):
    """The ops using ``v``, one per use, in use-list order, read lazily:
    a test that stops at the first user it rejects then costs what it
    reads, not the whole use list (a function's input or a shared
    constant has one use per layer)."""
    for u in v.uses:
        owner = u.owner
        yield owner.operation if hasattr(owner, "operation") else owner


def only_used_by(v: ir.Value, op: ir.Operation) -> bool:
    used = False
    for u in iter_users(v):
        if u != op:
            return False
        used = True
    return used


def broadcasts(src: Sequence[int], dst: Sequence[int]) -> bool:
    """Whether ``src`` broadcasts (numpy rules) to exactly ``dst``."""
    if len(src) > len(dst):
        return False
    for s, d in zip(reversed(list(src)), reversed(list(dst))):
        if s != d and s != 1:
            return False
    return True


def permutation(op: ir.Operation) -> list[int]:
    """The explicit permutation of a ``permute_dims`` (absent = reversed)."""
    rank = len(shape_of(op.operands[0]))
    axes = attrs(op).get("axes")
    if axes is None:
        return list(range(rank))[::-1]
    return [a % rank for a in axes]


def swap_last(rank: int) -> list[int]:
    return list(range(rank - 2)) + [rank - 1, rank - 2]


def is_transpose(op) -> bool:
    """A ``permute_dims`` that swaps the last two axes of a rank >= 2 tensor
    (the seed's "transpose")."""
    if op is None or op.name != "rlx.permute_dims":
        return False
    rank = len(shape_of(op.operands[0]))
    return rank >= 2 and permutation(op) == swap_last(rank)


def leading_ones_reshape(v: ir.Value):
    """The reshape (or ``expand_dims``) that made ``v`` by prepending size-1
    axes, which numpy broadcasting adds by itself; None otherwise."""
    op = producer(v, "rlx.reshape", "rlx.expand_dims")
    if op is None:
        return None
    src, dst = shape_of(op.operands[0]), shape_of(v)
    k = len(dst) - len(src)
    return op if k > 0 and dst == [1] * k + src else None


def same_phase(a: ir.Operation, b: ir.Operation) -> bool:
    """Both or neither recomputed: only then may one stand in for the other."""
    return (RECOMPUTED in a.attributes) == (RECOMPUTED in b.attributes)


def existing_transpose(v: ir.Value, root: ir.Operation, rewriter=None):
    """``transpose(v)`` without building one: the source when ``v`` is
    itself a transpose, else a transpose of ``v`` already computed before
    ``root`` in its block; None when there is none.  The simplifier's own
    driver answers the search from its index of transposes
    (``rewriter.transpose_before``) unless several qualify."""
    src = producer(v, "rlx.permute_dims")
    if is_transpose(src) and same_phase(src, root):
        return src.operands[0]
    index = getattr(rewriter, "transpose_before", None)
    if index is not None:
        found = index(v)
        if found is not SCAN:
            return found
    for user in iter_users(v):
        if (is_transpose(user) and user.operands[0] == v and user != root
                and user.block == root.block and user.is_before_in_block(root)
                and same_phase(user, root)):
            return user.results[0]
    return None


# --- splat values --------------------------------------------------------------

_SHAPE_ONLY = RESHAPES | {"rlx.broadcast_to", "rlx.permute_dims"}


def splat_value(v: ir.Value, depth: int = 8):
    """The value every element of ``v`` is known to hold (a Python float or
    int), or None."""
    if depth <= 0 or not is_tensor(v):
        return None
    op = producer(v)
    if op is None:
        return None
    name = op.name
    if name in ("rlx.zeros", "rlx.zeros_like"):
        return 0.0 if is_float(elt_of(v)) else 0
    if name in ("rlx.ones", "rlx.ones_like"):
        return 1.0 if is_float(elt_of(v)) else 1
    if name == "arith.constant":
        attr = op.attributes["value"]
        if isinstance(attr, ir.DenseElementsAttr) and attr.is_splat:
            value = attr.get_splat_value()
            if isinstance(value, ir.FloatAttr):
                return float(value.value)
            if isinstance(value, ir.IntegerAttr) and not _is_bool(elt_of(v)):
                return int(value.value)
        return None
    if name == "rlx.full" or name in _SHAPE_ONLY:
        return splat_value(op.operands[0], depth - 1)
    if name == "rlx.astype":
        inner = splat_value(op.operands[0], depth - 1)
        if inner is None:
            return None
        return convert(inner, elt_of(v))
    return None


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def convert(value, elt: ir.Type):
    """``value`` as an element of type ``elt`` (float, or truncated int)."""
    if is_float(elt):
        return float(value)
    if isinstance(elt, ir.IntegerType) and not _is_bool(elt):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return int(value)
    return None


def is_zero(v: ir.Value) -> bool:
    s = splat_value(v)
    return s is not None and s == 0


def is_one(v: ir.Value) -> bool:
    s = splat_value(v)
    return s is not None and s == 1


# --- cost ------------------------------------------------------------------------

def _counted(op: ir.Operation) -> bool:
    # A pure op the rewrite may leave dead; the grad markers stay (the
    # simplifier never removes them).
    return is_pure(op) and not op.name.startswith("grad.")


def removable(root: ir.Operation, keep: Sequence[ir.Value] = ()) -> int:
    """How many ops die when ``root`` is replaced by values computed from
    ``keep``: ``root`` and the pure producers (two levels up) all of whose
    uses are in dying ops."""
    kept = {producer(v) for v in keep if producer(v) is not None}
    dying = [root]
    frontier = [root]
    for _ in range(2):
        nxt = []
        for op in frontier:
            for v in op.operands:
                p = producer(v)
                if p is None or p in dying or p in kept or not _counted(p):
                    continue
                if all(all(u in dying for u in iter_users(r)) for r in p.results):
                    dying.append(p)
                    nxt.append(p)
        frontier = nxt
    return len(dying)


# --- building --------------------------------------------------------------------

class Rewrite:
    """Builds replacement ops for ``op`` just before it and replaces it."""

    def __init__(self, op, rewriter):
        self.op = op.operation
        self.rewriter = rewriter
        self.created: list[ir.Operation] = []

    def build(self, name: str, operands: Sequence[ir.Value], attributes: dict | None = None,
              result: ir.Type | None = None) -> ir.Value:
        new = rlx.build_op(name, operands, attributes, result, loc=self.op.location,
                           ip=self.rewriter.ip)
        self.created.append(new)
        return new.result

    def constant(self, value, t: ir.Type) -> ir.Value:
        """A splat of ``value`` with tensor type ``t``: ``rlx.zeros`` /
        ``rlx.ones`` for 0 and 1, else a splat ``arith.constant``."""
        t = ir.RankedTensorType(t)
        elt = t.element_type
        if value == 0:
            return self.build("rlx.zeros", [], result=t)
        if value == 1:
            return self.build("rlx.ones", [], result=t)
        if is_float(elt):
            scalar = ir.FloatAttr.get(elt, float(value))
        else:
            scalar = ir.IntegerAttr.get(elt, int(value))
        const = arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(t, scalar),
                                 loc=self.op.location, ip=self.rewriter.ip).operation
        self.created.append(const)
        return const.result

    def scalar(self, value, elt: ir.Type) -> ir.Value:
        return self.constant(value, ir.RankedTensorType.get([], elt))

    def to_type(self, v: ir.Value, t: ir.Type) -> ir.Value:
        """``v`` as a value of type ``t``: itself, or broadcast to ``t``
        (callers check ``fits`` first)."""
        if v.type == t:
            return v
        return self.build("rlx.broadcast_to", [v], result=t)

    def replace(self, *values: ir.Value) -> None:
        """Replaces the matched op's results, carrying its marks over."""
        for v, r in zip(values, self.op.results):
            assert v.type == r.type, f"simplify: {self.op.name} -> {v.type} != {r.type}"
        if RECOMPUTED in self.op.attributes:
            for new in self.created:
                new.attributes[RECOMPUTED] = ir.UnitAttr.get()
        for v in values:
            owner = producer(v)
            if owner is None or owner not in self.created:
                continue
            for pin in PINS:
                if pin in self.op.attributes:
                    owner.attributes[pin] = self.op.attributes[pin]
        record = getattr(self.rewriter, "record_created", None)
        if record is not None:     # the simplifier's own driver mirrors the block
            record(self.created)
        self.rewriter.replace_op(self.op, list(values))


def fits(v: ir.Value, t: ir.Type) -> int | None:
    """Ops needed to turn ``v`` into a value of type ``t``: 0 when the types
    agree, 1 when a ``broadcast_to`` does, None when nothing does."""
    if v.type == t:
        return 0
    if not (is_tensor(v) and isinstance(t, ir.RankedTensorType)):
        return None
    if elt_of(v) != ir.RankedTensorType(t).element_type:
        return None
    return 1 if broadcasts(shape_of(v), list(ir.RankedTensorType(t).shape)) else None

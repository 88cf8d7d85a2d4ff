"""Algebra on known values: neutral elements, symbolic zeros, constant folding.

A value is a *splat* when every element is known to hold one number
(``rlx.zeros``/``ones``/``*_like``, ``rlx.full`` of a constant, a splat
``arith.constant``, and shape-only ops of those; see ``_facts.splat_value``).

- ``multiply(x, ones)``, ``divide(x, ones)``, ``power(x, ones)``,
  ``add(x, zeros)``, ``subtract(x, zeros)`` -> ``x``; ``subtract(zeros, x)``
  -> ``negative(x)``; ``where(c, x, x)`` -> ``x``; ``negative(negative(x))``
  -> ``x``; ``x + (-y)`` -> ``x - y``, ``x - (-y)`` -> ``x + y``;
  ``sum(-x)`` -> ``-sum(x)`` (the negation on the smaller tensor).
- Contractions that reduce to vector products: ``sum(matmul(a, b))`` over
  every axis -> ``sum(sum(a, -2) * sum(b, -1))`` (O(n^2), not a GEMM);
  ``matmul(c, b)`` / ``matmul(a, c)`` with a splat ``c`` (the gradients of
  such a sum, whose adjoint is all ones) -> ``c`` times column / row sums,
  broadcast; both read through transposed operands, so TVM's seed
  ``sum(matmul(x^T, y^T))`` and its gradients need no GEMM and no transpose.  When the result type is not ``x``'s (broadcasting), ``x`` is
  broadcast to it, or the op stays.
- Symbolic zeros: ``multiply``/``matmul``/``conv2d``/``conv2d_transpose``
  with a zero operand, ``divide`` of zeros, pooling backwards of a zero
  adjoint, and every shape op or reduction of zeros are ``rlx.zeros``; so
  an adjoint known to be zero makes its consumers zero, and the chain that
  computed them dies (rlx-dce).  (As in every AD system, ``0 * x`` is taken
  to be 0 for any ``x``.)
- Constant folding: an op whose operands are all splats (elementwise ops,
  shape ops, reductions, ``full``, ``zeros_like``) becomes one constant of
  its result type.
- Implicit broadcasting: an operand of a broadcasting op (binary,
  compare, ``where``) that is ``broadcast_to(s)``, ``full(s)``, or a
  reshape of ``s`` that only prepends size-1 axes, becomes ``s``, and one
  that is a splat but not 0-d becomes a 0-d constant, when the result type
  stays.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from ...dialects.infer import raw_attributes
from ...dialects.ops import BINARY, COMPARE
from ._facts import (Rewrite, broadcasts, convert, elt_of, fits, is_float, is_one, is_tensor,
                     is_transpose, is_zero, leading_ones_reshape, numel, only_used_by,
                     producer, removable, same_phase, shape_of, splat_value)

# Ops whose operands broadcast (numpy rules) to the result.
_BROADCASTING = tuple(f"rlx.{n}" for n in BINARY + COMPARE) + ("rlx.where",)


# --- neutral elements ------------------------------------------------------------

def _replace_by(op, rewriter, v: ir.Value, negate: bool = False):
    """Replaces ``op`` by ``v`` (negated, broadcast as needed) when that
    builds no more ops than it removes."""
    t = op.results[0].type
    if negate and not is_float(elt_of(v)):
        return True
    extra = fits(v, t)
    if extra is None:
        return True
    created = extra + negate
    if created and created > removable(op, keep=[v]):
        return True
    rw = Rewrite(op, rewriter)
    if negate:
        v = rw.build("rlx.negative", [v])
    rw.replace(rw.to_type(v, t))
    return None


def drop_neutral(op, rewriter):
    """``x * 1``, ``x / 1``, ``x ** 1``, ``x + 0``, ``x - 0`` -> ``x``; ``0 - x`` -> ``-x``."""
    op = op.operation
    a, b = op.operands
    name = op.name
    if name == "rlx.add":
        if is_zero(b):
            return _replace_by(op, rewriter, a)
        if is_zero(a):
            return _replace_by(op, rewriter, b)
    elif name == "rlx.multiply":
        if is_one(b):
            return _replace_by(op, rewriter, a)
        if is_one(a):
            return _replace_by(op, rewriter, b)
    elif name == "rlx.subtract":
        if is_zero(b):
            return _replace_by(op, rewriter, a)
        if is_zero(a):
            return _replace_by(op, rewriter, b, negate=True)
    elif name in ("rlx.divide", "rlx.power"):
        if is_one(b) and is_float(elt_of(a)):
            return _replace_by(op, rewriter, a)
    return True


def same_branches(op, rewriter):
    """``where(c, x, x)`` -> ``x``."""
    op = op.operation
    _, a, b = op.operands
    if a != b:
        return True
    return _replace_by(op, rewriter, a)


def double_negative(op, rewriter):
    """``negative(negative(x))`` -> ``x``."""
    op = op.operation
    inner = producer(op.operands[0], "rlx.negative")
    if inner is None or not same_phase(inner, op):
        return True
    Rewrite(op, rewriter).replace(inner.operands[0])


def absorb_negative(op, rewriter):
    """``x + (-y)`` -> ``x - y``, ``(-x) + y`` -> ``y - x``, ``x - (-y)`` -> ``x + y``."""
    op = op.operation
    a, b = op.operands
    for i, v in ((1, b), (0, a)):
        neg = producer(v, "rlx.negative")
        if neg is None or not same_phase(neg, op) or not only_used_by(v, op):
            continue
        if op.name == "rlx.subtract" and i == 0:
            continue
        other = a if i == 1 else b
        name = "rlx.add" if op.name == "rlx.subtract" else "rlx.subtract"
        rw = Rewrite(op, rewriter)
        rw.replace(rw.build(name, [other, neg.operands[0]]))
        return None
    return True


def negative_out_of_reduction(op, rewriter):
    """``sum(-x)`` -> ``-sum(x)`` (also ``mean``, ``collapse_sum_to``): the
    negation moves to the smaller tensor, where it may merge with another."""
    op = op.operation
    neg = producer(op.operands[0], "rlx.negative")
    if neg is None or not same_phase(neg, op) or not only_used_by(op.operands[0], op):
        return True
    if numel(op.results[0]) >= numel(op.operands[0]):
        return True
    rw = Rewrite(op, rewriter)
    inner = rw.build(op.name, [neg.operands[0]], raw_attributes(op), op.results[0].type)
    rw.replace(rw.build("rlx.negative", [inner]))
    return None


def factor_out_of_sum(op, rewriter):
    """``collapse_sum_to(x * c)`` -> ``collapse_sum_to(x) * c`` when ``c`` is
    the same along every summed axis (its size there is 1, or it lacks the
    axis) and fits the result: a batch norm's gradient sums ``g * gamma *
    rsqrt(var)`` over (N, H, W), the sum of ``g`` times two per-channel
    factors, and ``g``'s sum is already there for the bias (rlx-cse then
    merges them: one full-size reduction fewer per batch norm).  When ``x *
    c`` has other users the rewrite adds one small multiply (the result's
    size): it trades a reduction over the full tensor for that."""
    op = op.operation
    prod = producer(op.operands[0], "rlx.multiply")
    if prod is None or not same_phase(prod, op):
        return True
    full, out = shape_of(op.operands[0]), shape_of(op.results[0])
    if not is_float(elt_of(op.results[0])) or numel(op.results[0]) >= numel(op.operands[0]):
        return True
    lead = len(full) - len(out)
    summed = set(range(lead)) | {lead + i for i, d in enumerate(out)
                                 if d == 1 and full[lead + i] != 1}
    a, b = prod.operands
    for x, c in ((a, b), (b, a)):
        cs = shape_of(c)
        if shape_of(x) != full or not broadcasts(cs, out):
            continue
        if any(cs[j - (len(full) - len(cs))] != 1 for j in summed if j >= len(full) - len(cs)):
            continue
        rw = Rewrite(op, rewriter)
        s = rw.build(op.name, [x], raw_attributes(op), op.results[0].type)
        rw.replace(rw.to_type(rw.build("rlx.multiply", [s, c]), op.results[0].type))
        return None
    return True


# --- symbolic zeros ----------------------------------------------------------------

# Ops that are zero when the operand at one of these positions is zero.
_ZERO_IF_ANY = {
    "rlx.multiply": (0, 1),
    "rlx.matmul": (0, 1),
    "rlx.conv2d": (0, 1),
    "rlx.conv2d_transpose": (0, 1),
    "rlx.divide": (0,),
    "rlx.max_pool2d_backward": (0,),
    "rlx.avg_pool2d_backward": (0,),
    "rlx.max_pool2d_indices_backward": (0,),
    "rlx.avg_pool2d": (0,),
    "rlx.max_pool2d": (0,),
    "rlx.cumsum": (0,),
    "rlx.triu": (0,),
}


def absorb_zero(op, rewriter):
    """An op that maps a zero operand to zeros -> ``rlx.zeros``."""
    op = op.operation
    positions = _ZERO_IF_ANY[op.name]
    if not any(i < len(op.operands) and is_zero(op.operands[i]) for i in positions):
        return True
    t = op.results[0].type
    if not is_float(ir.RankedTensorType(t).element_type):
        return True
    rw = Rewrite(op, rewriter)
    rw.replace(rw.constant(0.0, t))
    return None


# --- contractions that reduce to vector products ------------------------------------

def _reduced(rw, v: ir.Value, axis: int, root) -> ir.Value:
    """``sum(v, axis)`` for ``axis`` -1 or -2 of a rank >= 2 ``v``, reading
    through a transpose of the last two axes (``sum(x^T, -2) = sum(x, -1)``),
    so the transpose need not be materialized."""
    t = producer(v, "rlx.permute_dims")
    if is_transpose(t) and same_phase(t, root):
        v, axis = t.operands[0], -3 - axis
    return rw.build("rlx.sum", [v], {"axis": [axis]})


def _plain_operands(op):
    """``op``'s operands when it is a float matmul of two rank >= 2 tensors
    with equal batch shapes (no 1-D or broadcast batch cases), else None."""
    a, b = op.operands
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) < 2 or len(sa) != len(sb) or sa[:-2] != sb[:-2]:
        return None
    if not is_float(elt_of(op.results[0])) or elt_of(a) != elt_of(b):
        return None
    return a, b


def sum_of_matmul(op, rewriter):
    """``sum(matmul(a, b))`` over every axis -> ``sum(sum(a, -2) * sum(b, -1))``:
    the total of a product is the dot product of a's column sums with b's
    row sums, O(MK + KN) instead of a GEMM's O(MKN); through transposed
    operands, ``sum(matmul(x^T, y^T))`` (TVM's seed) -> ``sum(sum(x, -1) *
    sum(y, -2))``.  The only pattern that may add ops (two): it trades a
    contraction for reductions."""
    op = op.operation
    x = op.operands[0]
    mm = producer(x, "rlx.matmul")
    if mm is None or not same_phase(mm, op) or not only_used_by(x, op):
        return True
    if numel(op.results[0]) != 1 or shape_of(x) == []:
        return True
    operands = _plain_operands(mm)
    if operands is None:
        return True
    a, b = operands
    rw = Rewrite(op, rewriter)
    dot = rw.build("rlx.multiply", [_reduced(rw, a, -2, op), _reduced(rw, b, -1, op)])
    total = rw.build("rlx.sum", [dot])            # 0-d; broadcast_to a keepdims result
    rw.replace(rw.to_type(total, op.results[0].type))
    return None


def matmul_of_splat(op, rewriter):
    """``matmul(c, b)`` with ``c`` a splat -> ``c * sum(b, -2)`` broadcast over
    the rows; ``matmul(a, c)`` -> ``c * sum(a, -1)`` broadcast over the
    columns (reading through transposes).  The gradients of a sum of a matmul
    are such products with an all-ones adjoint: row and column sums instead
    of GEMMs."""
    op = op.operation
    operands = _plain_operands(op)
    if operands is None:
        return True
    a, b = operands
    ca, cb = splat_value(a), splat_value(b)
    if (ca is None) == (cb is None) or 0 in (ca, cb):    # zeros: absorb_zero
        return True
    t = op.results[0].type
    rw = Rewrite(op, rewriter)
    if ca is not None:
        c, s = ca, _reduced(rw, b, -2, op)                       # batch + [N]
        s = rw.build("rlx.expand_dims", [s], {"axis": [-2]})     # batch + [1, N]
    else:
        c, s = cb, _reduced(rw, a, -1, op)                       # batch + [M]
        s = rw.build("rlx.expand_dims", [s], {"axis": [-1]})     # batch + [M, 1]
    if c != 1:
        s = rw.build("rlx.multiply", [s, rw.scalar(c, elt_of(s))])
    rw.replace(rw.to_type(s, t))
    return None


# --- constant folding -----------------------------------------------------------------

def _np(fn):
    def apply(*xs):
        with np.errstate(all="ignore"):
            return float(fn(*[np.float64(x) for x in xs]))
    return apply


_UNARY = {
    "rlx.negative": _np(np.negative),
    "rlx.exp": _np(np.exp),
    "rlx.log": _np(np.log),
    "rlx.sqrt": _np(np.sqrt),
    "rlx.rsqrt": _np(lambda x: 1.0 / np.sqrt(x)),
    "rlx.sin": _np(np.sin),
    "rlx.cos": _np(np.cos),
    "rlx.tanh": _np(np.tanh),
    "rlx.sigmoid": _np(lambda x: 1.0 / (1.0 + np.exp(-x))),
    "rlx.abs": _np(np.abs),
    "rlx.relu": _np(lambda x: np.maximum(x, 0.0)),
    "rlx.silu": _np(lambda x: x / (1.0 + np.exp(-x))),
    "rlx.gelu": lambda x: 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))),
    "rlx.erf": math.erf,
    "rlx.square": _np(np.square),
}

_BINARY = {
    "rlx.add": _np(np.add),
    "rlx.subtract": _np(np.subtract),
    "rlx.multiply": _np(np.multiply),
    "rlx.divide": _np(np.divide),
    "rlx.power": _np(np.power),
    "rlx.maximum": _np(np.maximum),
    "rlx.minimum": _np(np.minimum),
}

# Every element of the result is an element of operand 0.
_SELECTS = frozenset({"rlx.reshape", "rlx.expand_dims", "rlx.squeeze", "rlx.flatten",
                      "rlx.broadcast_to", "rlx.permute_dims", "rlx.strided_slice", "rlx.take",
                      "rlx.astype", "rlx.split", "rlx.max", "rlx.min", "rlx.mean",
                      "rlx.full", "rlx.zeros_like", "rlx.ones_like"})


def _folded(op):
    """The splat value of ``op``'s results (one per result), or None."""
    name = op.name
    if name == "rlx.zeros_like":
        return 0.0
    if name == "rlx.ones_like":
        return 1.0
    if name == "rlx.concat":
        values = {splat_value(v) for v in op.operands}
        return values.pop() if len(values) == 1 else None
    if name == "rlx.where":
        a, b = splat_value(op.operands[1]), splat_value(op.operands[2])
        return a if a is not None and a == b else None
    if name in _BINARY:
        a, b = splat_value(op.operands[0]), splat_value(op.operands[1])
        if a is None or b is None or not is_float(elt_of(op.results[0])):
            return None
        return _BINARY[name](a, b)
    x = splat_value(op.operands[0]) if op.operands else None
    if x is None:
        return None
    if name in _SELECTS:
        return x
    if name in _UNARY:
        return _UNARY[name](x) if is_float(elt_of(op.results[0])) else None
    count = numel(op.operands[0]) // max(numel(op.results[0]), 1)
    if name in ("rlx.sum", "rlx.collapse_sum_to"):
        return x * count
    if name == "rlx.prod":
        try:
            return float(x) ** count
        except OverflowError:
            return None
    if name == "rlx.variance":
        return 0.0
    return None


def fold_constants(op, rewriter):
    """An op of splats -> one constant of its result type."""
    op = op.operation
    if not all(is_tensor(r) for r in op.results):
        return True
    value = _folded(op)
    if value is None:
        return True
    values = []
    for r in op.results:
        v = convert(value, elt_of(r))
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return True
        values.append(v)
    distinct = {r.type for r in op.results}     # (types are uniqued: equal = same)
    if len(distinct) > removable(op):
        return True
    rw = Rewrite(op, rewriter)
    made: dict = {}
    out = []
    for r, v in zip(op.results, values):
        key = (r.type, v)
        if key not in made:
            made[key] = rw.constant(v, r.type)
        out.append(made[key])
    rw.replace(*out)
    return None


def implicit_broadcast(op, rewriter):
    """An operand of a broadcasting op that is ``broadcast_to(s)`` (or ``s``
    with leading size-1 axes) -> ``s``,
    one that is a splat but not 0-d -> a 0-d constant, when the result type
    stays (the op broadcasts by itself)."""
    op = op.operation
    t = op.results[0].type
    operands = list(op.operands)
    for i, v in enumerate(operands):
        if not is_tensor(v) or not shape_of(v):
            continue
        others = [w for j, w in enumerate(operands) if j != i]
        b = producer(v, "rlx.broadcast_to", "rlx.full") or leading_ones_reshape(v)
        if b is not None and not same_phase(b, op):
            continue
        value = splat_value(v) if b is None else None
        if b is not None and elt_of(b.operands[0]) == elt_of(v):
            source, created = b.operands[0], 1
        elif value is not None and is_float(elt_of(v)):
            source, created = None, 2
        else:
            continue
        small = [] if source is None else shape_of(source)
        if _broadcast_all([shape_of(w) for w in others] + [small]) != shape_of(op.results[0]):
            continue
        if created > removable(op, keep=others + ([source] if source is not None else [])):
            continue
        rw = Rewrite(op, rewriter)
        operands[i] = source if source is not None else rw.scalar(value, elt_of(v))
        new = rw.build(op.name, operands, raw_attributes(op))
        if new.type != t:   # cannot happen: the shapes were checked
            raise AssertionError(f"simplify: {op.name} changed type to {new.type}")
        rw.replace(new)
        return None
    return True


def _broadcast_all(shapes):
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate([1] * (rank - len(s)) + list(s)):
            if d != 1:
                if out[i] not in (1, d):
                    return None
                out[i] = d
    return out


FOLDABLE = sorted(set(_UNARY) | set(_BINARY) | _SELECTS | {
    "rlx.concat", "rlx.where", "rlx.sum", "rlx.collapse_sum_to", "rlx.prod", "rlx.variance"})

_CONTRACTION = "its splat value depends on the contraction; zeros go through absorb_zero"
_NORMALIZATION = "normalizations and losses of splats do not arise in gradients"
# The ops fold_constants leaves alone, and why; with FOLDABLE they cover the dialects
# (test/layout/op_tables.py), so a new op cannot silently miss the folder.
NOT_FOLDED = {
    "rlx.zeros": "already a constant",
    "rlx.ones": "already a constant",
    **{f"rlx.{n}": "i1 result; gradients never compare constants" for n in COMPARE},
    "rlx.matmul": _CONTRACTION,
    "rlx.conv2d": _CONTRACTION,
    "rlx.conv2d_transpose": _CONTRACTION,
    "rlx.max_pool2d": "window op; zeros go through absorb_zero",
    "rlx.avg_pool2d": "window op; zeros go through absorb_zero",
    "rlx.max_pool2d_backward": "window op; zeros go through absorb_zero",
    "rlx.avg_pool2d_backward": "window op; zeros go through absorb_zero",
    "rlx.max_pool2d_with_indices": "window op with an index result; made after the gradient",
    "rlx.max_pool2d_indices_backward": "window op; zeros go through absorb_zero",
    "rlx.triu": "the result of a splat is not a splat",
    "rlx.cumsum": "the result of a splat is not a splat",
    "rlx.softmax": _NORMALIZATION,
    "rlx.log_softmax": _NORMALIZATION,
    "rlx.layer_norm": _NORMALIZATION,
    "rlx.rms_norm": _NORMALIZATION,
    "rlx.cross_entropy_with_logits": _NORMALIZATION,
    "rlx.nll_loss": _NORMALIZATION,
    "rlx.tuple": "tuples are not tensors",
    "rlx.tuple_get_item": "tuples are not tensors",
    "grad.start_checkpoint": "checkpoint markers stay for the planner",
    "grad.end_checkpoint": "checkpoint markers stay for the planner",
    "grad.no_grad": "a stop-gradient marker, kept",
}

PATTERNS = (
    [(name, drop_neutral) for name in ("rlx.add", "rlx.subtract", "rlx.multiply",
                                      "rlx.divide", "rlx.power")]
    + [("rlx.where", same_branches), ("rlx.negative", double_negative)]
    + [(name, absorb_negative) for name in ("rlx.add", "rlx.subtract")]
    + [(name, negative_out_of_reduction) for name in ("rlx.sum", "rlx.mean",
                                                      "rlx.collapse_sum_to")]
    + [("rlx.collapse_sum_to", factor_out_of_sum)]
    + [(name, absorb_zero) for name in sorted(_ZERO_IF_ANY)]
    + [("rlx.sum", sum_of_matmul), ("rlx.matmul", matmul_of_splat)]
    + [(name, fold_constants) for name in FOLDABLE]
    + [(name, implicit_broadcast) for name in _BROADCASTING]
)

__all__ = ["PATTERNS", "drop_neutral", "same_branches", "double_negative", "absorb_negative",
           "negative_out_of_reduction", "factor_out_of_sum", "absorb_zero", "sum_of_matmul", "matmul_of_splat",
           "fold_constants", "implicit_broadcast", "FOLDABLE", "NOT_FOLDED"]

"""VJP and JVP rules of type/creation helpers: astype, full, collapse_sum_to.

Ops with no gradient (comparisons, zeros/ones/*_like, constants) are listed
in ``NON_DIFFERENTIABLE`` (rules/__init__.py); tuples and the grad markers
are handled by the sweep itself.

JVP rules (``*_jvp``, after the VJP rules; all take a batch): ``astype``
casts the tangent to the result's element type (none for a non-float
result), ``full`` broadcasts the fill value's tangent, ``collapse_sum_to``
collapses the tangent with its batch dims kept.
"""
from ...dialects import rlx
from . import is_float_type, jvp, vjp
from ._helpers import elt_of, shape_of


@vjp("rlx.astype")
def astype(op, grads):
    (g,) = grads
    x = op.operands[0]
    if not is_float_type(x.type):
        return [None]
    if elt_of(g) == elt_of(x):
        return [g]
    return [rlx.astype(g, elt_of(x))]


@vjp("rlx.full")
def full(op, grads):
    # every element is the fill value: its adjoint is the sum of g.
    (g,) = grads
    fill = op.operands[0]
    if not is_float_type(fill.type):
        return [None]
    s = rlx.sum(g) if shape_of(g) else g
    if elt_of(s) != elt_of(fill):
        s = rlx.astype(s, elt_of(fill))
    return [s]


@vjp("rlx.collapse_sum_to")
def collapse_sum_to(op, grads):
    (g,) = grads
    return [rlx.broadcast_to(g, shape_of(op.operands[0]))]


# --- JVP rules (all take a batch) ---------------------------------------------

@jvp("rlx.astype")
def astype_jvp(op, tangents, batch):
    # the tangent cast like the value; none for a non-float result
    (t,) = tangents
    y = op.results[0]
    if t is None or not is_float_type(y.type):
        return [None]
    return [t if elt_of(t) == elt_of(y) else rlx.astype(t, elt_of(y))]


@jvp("rlx.full")
def full_jvp(op, tangents, batch):
    # every element is the fill value: its tangent (shape batch) broadcast
    # behind the batch dims to batch + the result's shape.
    (t,) = tangents
    y = op.results[0]
    if t is None or not is_float_type(y.type):
        return [None]
    if elt_of(t) != elt_of(y):
        t = rlx.astype(t, elt_of(y))
    sy = shape_of(y)
    if not sy:
        return [t]
    if batch:
        t = rlx.reshape(t, list(batch) + [1] * len(sy))
    return [rlx.broadcast_to(t, list(batch) + sy)]


@jvp("rlx.collapse_sum_to")
def collapse_sum_to_jvp(op, tangents, batch):
    # linear: applied to the tangent with the batch dims kept.  The target
    # batch + shape must broadcast to the tangent's shape, so a target of
    # lower rank than the operand is padded with unit dims behind the batch
    # dims and the padding reshaped away after.
    (t,) = tangents
    if t is None:
        return [None]
    sx, sy = shape_of(op.operands[0]), shape_of(op.results[0])
    batch = list(batch)
    if sx == sy:
        return [t]
    if not batch:
        return [rlx.collapse_sum_to(t, sy)]
    padded = batch + [1] * (len(sx) - len(sy)) + sy
    s = rlx.collapse_sum_to(t, padded)
    return [s if padded == batch + sy else rlx.reshape(s, batch + sy)]

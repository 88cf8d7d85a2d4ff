"""VJP rules of type/creation helpers: astype, full, collapse_sum_to.

Ops with no gradient (comparisons, zeros/ones/*_like, constants) are listed
in ``NON_DIFFERENTIABLE`` (rules/__init__.py); tuples and the grad markers
are handled by the sweep itself.
"""
from ...dialects import rlx
from . import is_float_type, vjp
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

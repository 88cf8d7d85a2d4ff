"""VJP rules of reductions."""
from ...dialects import rlx
from . import vjp
from ._helpers import attrs, shape_of, normalize_axes


def _expand_back(g, x, op):
    """Broadcasts a reduced adjoint back to ``x``'s shape (re-inserting the
    reduced axes when keepdims was false)."""
    a = attrs(op)
    axes = normalize_axes(a.get("axis"), len(shape_of(x)))
    if not a.get("keepdims", False) and shape_of(g):
        kept = [1 if i in axes else d for i, d in enumerate(shape_of(x))]
        g = rlx.reshape(g, kept)
    return rlx.broadcast_to(g, shape_of(x))


@vjp("rlx.sum")
def sum_(op, grads):
    (g,) = grads
    return [_expand_back(g, op.operands[0], op)]

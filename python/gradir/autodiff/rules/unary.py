"""VJP rules of elementwise unary ops."""
from ...dialects import rlx
from . import vjp


@vjp("rlx.exp")
def exp(op, grads):
    (g,) = grads
    return [rlx.multiply(g, op.results[0])]

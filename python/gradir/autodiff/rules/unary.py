"""VJP rules of elementwise unary ops.

Conventions at non-differentiable points (a subgradient is chosen):
``abs``: d|x|/dx = 1 at 0 (Relax: ``where(x < 0, -g, g)``); ``relu``: 0 at 0
(PyTorch/JAX).  Rules reuse the forward result where it saves work
(exp, sqrt, rsqrt, tanh, sigmoid).
"""
import math

from ...dialects import rlx
from . import vjp
from ._helpers import const_scalar, elt_of


def _c(value, like):
    """A 0-d constant of ``like``'s element type (broadcasts in binary ops)."""
    return const_scalar(value, elt_of(like))


@vjp("rlx.negative")
def negative(op, grads):
    (g,) = grads
    return [rlx.negative(g)]


@vjp("rlx.exp")
def exp(op, grads):
    (g,) = grads
    return [rlx.multiply(g, op.results[0])]


@vjp("rlx.log")
def log(op, grads):
    (g,) = grads
    return [rlx.divide(g, op.operands[0])]


@vjp("rlx.sqrt")
def sqrt(op, grads):
    # d sqrt(x) = 1 / (2 sqrt(x))
    (g,) = grads
    y = op.results[0]
    return [rlx.divide(rlx.multiply(g, _c(0.5, y)), y)]


@vjp("rlx.rsqrt")
def rsqrt(op, grads):
    # y = x^-1/2, dy/dx = -1/2 x^-3/2 = -1/2 * y / x
    (g,) = grads
    x, y = op.operands[0], op.results[0]
    return [rlx.multiply(g, rlx.multiply(_c(-0.5, y), rlx.divide(y, x)))]


@vjp("rlx.sin")
def sin(op, grads):
    (g,) = grads
    return [rlx.multiply(g, rlx.cos(op.operands[0]))]


@vjp("rlx.cos")
def cos(op, grads):
    (g,) = grads
    return [rlx.negative(rlx.multiply(g, rlx.sin(op.operands[0])))]


@vjp("rlx.tanh")
def tanh(op, grads):
    # 1 - y^2
    (g,) = grads
    y = op.results[0]
    return [rlx.multiply(g, rlx.subtract(_c(1.0, y), rlx.square(y)))]


@vjp("rlx.sigmoid")
def sigmoid(op, grads):
    # y (1 - y)
    (g,) = grads
    y = op.results[0]
    return [rlx.multiply(g, rlx.multiply(y, rlx.subtract(_c(1.0, y), y)))]


@vjp("rlx.abs")
def abs_(op, grads):
    (g,) = grads
    x = op.operands[0]
    return [rlx.where(rlx.less(x, _c(0.0, x)), rlx.negative(g), g)]


@vjp("rlx.relu")
def relu(op, grads):
    (g,) = grads
    x = op.operands[0]
    return [rlx.where(rlx.greater(x, _c(0.0, x)), g, _c(0.0, g))]


@vjp("rlx.silu")
def silu(op, grads):
    # d (x s(x)) = s (1 + x (1 - s))
    (g,) = grads
    x = op.operands[0]
    s = rlx.sigmoid(x)
    one = _c(1.0, x)
    d = rlx.multiply(s, rlx.add(one, rlx.multiply(x, rlx.subtract(one, s))))
    return [rlx.multiply(g, d)]


@vjp("rlx.gelu")
def gelu(op, grads):
    # exact (erf) form: d/dx = Phi(x) + x phi(x),
    # Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    (g,) = grads
    x = op.operands[0]
    cdf = rlx.multiply(_c(0.5, x), rlx.add(_c(1.0, x),
                                           rlx.erf(rlx.multiply(x, _c(1 / math.sqrt(2.0), x)))))
    pdf = rlx.multiply(_c(1 / math.sqrt(2 * math.pi), x),
                       rlx.exp(rlx.multiply(_c(-0.5, x), rlx.square(x))))
    return [rlx.multiply(g, rlx.add(cdf, rlx.multiply(x, pdf)))]


@vjp("rlx.erf")
def erf(op, grads):
    # 2 / sqrt(pi) exp(-x^2)
    (g,) = grads
    x = op.operands[0]
    d = rlx.multiply(_c(2 / math.sqrt(math.pi), x), rlx.exp(rlx.negative(rlx.square(x))))
    return [rlx.multiply(g, d)]


@vjp("rlx.square")
def square(op, grads):
    (g,) = grads
    x = op.operands[0]
    return [rlx.multiply(g, rlx.multiply(_c(2.0, x), x))]

"""VJP and JVP rules of elementwise unary ops.

Conventions at non-differentiable points (a subgradient is chosen):
``abs``: d|x|/dx = 1 at 0 (Relax: ``where(x < 0, -g, g)``); ``relu``: 0 at 0
(PyTorch/JAX).  Rules reuse the forward result where it saves work
(exp, sqrt, rsqrt, tanh, sigmoid).

JVP rules (``*_jvp``, after the VJP rules) multiply the tangent by the same
derivative factor, with the same choices at the kinks; the factor has the
operand's shape and broadcasts over the tangent's leading batch dims, so every
rule takes a batch (``batched=True``).  A zero (None) tangent stays None.
"""
import math

from ...dialects import rlx
from . import jvp, vjp
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
    # the mask from relu's output (y > 0 exactly where x > 0, NaN and -0.0
    # included): the output is kept for the next layer anyway, the input
    # need not be (ResNet step: 0.3-0.7 ms less of ~17 ms at 1 and 2 threads)
    (g,) = grads
    y = op.results[0]
    return [rlx.where(rlx.greater(y, _c(0.0, y)), g, _c(0.0, g))]


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


# --- JVP rules: t is the operand's tangent (batch + x's shape); every
# derivative factor below has x's shape and broadcasts over the batch dims.

def _scaled(tangents, factor):
    """``[t * factor()]``, or ``[None]`` for a zero tangent (``factor`` is only
    built when needed)."""
    (t,) = tangents
    return [None] if t is None else [rlx.multiply(t, factor())]


@jvp("rlx.negative")
def negative_jvp(op, tangents, batch):
    (t,) = tangents
    return [None if t is None else rlx.negative(t)]


@jvp("rlx.exp")
def exp_jvp(op, tangents, batch):
    return _scaled(tangents, lambda: op.results[0])


@jvp("rlx.log")
def log_jvp(op, tangents, batch):
    (t,) = tangents
    return [None if t is None else rlx.divide(t, op.operands[0])]


@jvp("rlx.sqrt")
def sqrt_jvp(op, tangents, batch):
    (t,) = tangents
    if t is None:
        return [None]
    y = op.results[0]
    return [rlx.divide(rlx.multiply(t, _c(0.5, y)), y)]


@jvp("rlx.rsqrt")
def rsqrt_jvp(op, tangents, batch):
    x, y = op.operands[0], op.results[0]
    return _scaled(tangents, lambda: rlx.multiply(_c(-0.5, y), rlx.divide(y, x)))


@jvp("rlx.sin")
def sin_jvp(op, tangents, batch):
    return _scaled(tangents, lambda: rlx.cos(op.operands[0]))


@jvp("rlx.cos")
def cos_jvp(op, tangents, batch):
    (t,) = tangents
    return [None if t is None else rlx.negative(rlx.multiply(t, rlx.sin(op.operands[0])))]


@jvp("rlx.tanh")
def tanh_jvp(op, tangents, batch):
    y = op.results[0]
    return _scaled(tangents, lambda: rlx.subtract(_c(1.0, y), rlx.square(y)))


@jvp("rlx.sigmoid")
def sigmoid_jvp(op, tangents, batch):
    y = op.results[0]
    return _scaled(tangents, lambda: rlx.multiply(y, rlx.subtract(_c(1.0, y), y)))


@jvp("rlx.abs")
def abs_jvp(op, tangents, batch):
    # sign(x) t, with sign(0) = 1 (as the VJP)
    (t,) = tangents
    if t is None:
        return [None]
    x = op.operands[0]
    return [rlx.where(rlx.less(x, _c(0.0, x)), rlx.negative(t), t)]


@jvp("rlx.relu")
def relu_jvp(op, tangents, batch):
    # 0 at 0 (as the VJP)
    (t,) = tangents
    if t is None:
        return [None]
    x = op.operands[0]
    return [rlx.where(rlx.greater(x, _c(0.0, x)), t, _c(0.0, t))]


@jvp("rlx.silu")
def silu_jvp(op, tangents, batch):
    def factor():
        x = op.operands[0]
        s = rlx.sigmoid(x)
        one = _c(1.0, x)
        return rlx.multiply(s, rlx.add(one, rlx.multiply(x, rlx.subtract(one, s))))
    return _scaled(tangents, factor)


@jvp("rlx.gelu")
def gelu_jvp(op, tangents, batch):
    def factor():
        x = op.operands[0]
        cdf = rlx.multiply(_c(0.5, x),
                           rlx.add(_c(1.0, x), rlx.erf(rlx.multiply(x, _c(1 / math.sqrt(2.0), x)))))
        pdf = rlx.multiply(_c(1 / math.sqrt(2 * math.pi), x),
                           rlx.exp(rlx.multiply(_c(-0.5, x), rlx.square(x))))
        return rlx.add(cdf, rlx.multiply(x, pdf))
    return _scaled(tangents, factor)


@jvp("rlx.erf")
def erf_jvp(op, tangents, batch):
    x = op.operands[0]
    return _scaled(tangents, lambda: rlx.multiply(_c(2 / math.sqrt(math.pi), x),
                                                  rlx.exp(rlx.negative(rlx.square(x)))))


@jvp("rlx.square")
def square_jvp(op, tangents, batch):
    x = op.operands[0]
    return _scaled(tangents, lambda: rlx.multiply(_c(2.0, x), x))

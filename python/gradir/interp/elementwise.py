"""Unary, binary, compare and select ops (numpy broadcasting).

Every rule computes in the dtype of its operands (float32 stays float32);
``erf`` (and ``gelu``'s erf) is evaluated in float64 with ``math.erf`` and
rounded to the operand dtype.
"""

from __future__ import annotations

import math

import numpy as np

from .core import register

_ERF64 = np.vectorize(math.erf, otypes=[np.float64])


def _erf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return _ERF64(x.astype(np.float64)).astype(x.dtype)


def _one(x, v=1):
    return np.asarray(x).dtype.type(v)


def _sigmoid(x):
    # exp(-log(1 + exp(-x))): stable for large |x|, keeps the dtype.
    return np.exp(-np.logaddexp(_one(x, 0), -x))


_UNARY = {
    "negative": np.negative,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, _one(x, 0)),
    "silu": lambda x: x * _sigmoid(x),
    # gelu: the exact (erf) form, Relax's nn.gelu.
    "gelu": lambda x: _one(x, 0.5) * x * (_one(x) + _erf(x / _one(x, math.sqrt(2.0)))),
    "erf": _erf,
    "square": np.square,
}


def _unary(fn):
    return lambda ctx, x: fn(x)


for _name, _fn in _UNARY.items():
    register("rlx." + _name)(_unary(_fn))


def _divide(a, b):
    """Float: true division.  Integers: truncating division (TVM's integer
    ``div``), not numpy's floor division."""
    if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
        q = np.floor_divide(a, b)
        fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
        return q + fix.astype(q.dtype)
    return np.true_divide(a, b)


_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _divide,
    "power": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}


def _binary(fn):
    return lambda ctx, a, b: fn(a, b)


for _name, _fn in _BINARY.items():
    register("rlx." + _name)(_binary(_fn))


@register("rlx.where")
def _where(ctx, cond, a, b):
    return np.where(np.asarray(cond).astype(bool), a, b)


@register("rlx.matmul")
def _matmul(ctx, a, b):
    # numpy semantics: 1-D operands are promoted and the added axis removed,
    # batch dimensions broadcast.
    return np.matmul(a, b)

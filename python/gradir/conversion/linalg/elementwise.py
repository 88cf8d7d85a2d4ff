"""Elementwise rlx ops -> ``linalg.generic`` (numpy broadcasting through
the indexing maps, so ``linalg-fuse-elementwise-ops`` merges chains into one
loop nest); creation ops -> ``linalg.fill``; grad markers vanish.

Scalar formulas follow the reference interpreter (``gradir.interp``):
``sigmoid`` is the overflow-free ``x >= 0 ? 1/(1+e) : e/(1+e)`` with
``e = exp(-|x|)``, ``gelu`` is the exact erf form ``0.5*x*(1+erf(x/sqrt(2)))``,
``rsqrt`` is ``1/sqrt(x)``, ``maximum``/``minimum`` propagate NaN (numpy),
``not_equal`` is true for NaN.

    %0 = "rlx.add"(%a, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
becomes
    %e = tensor.empty() : tensor<4x3xf32>
    %0 = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1),
                                          (d0, d1) -> (d0, d1)], ...}
           ins(%a, %b) outs(%e) { arith.addf ... }
"""

from __future__ import annotations

import math as _math

from mlir import ir
from mlir.dialects import arith, math

from .linalg_utils import (convert_scalar, elementwise, elt_of, extract_scalar, filled,
                           from_i1, is_bool, is_float, one, scalar_const, shape_of, to_i1,
                           zero)
from .registry import lowers

__all__ = ["UNARY", "BINARY", "COMPARE"]


def _c(x: ir.Value, v: float) -> ir.Value:
    return scalar_const(x.type, v)


def _sigmoid(x):
    e = math.exp(arith.negf(math.absf(x)))
    d = arith.addf(_c(x, 1.0), e)
    pos = arith.divf(_c(x, 1.0), d)
    neg = arith.divf(e, d)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OGE, x, _c(x, 0.0)), pos, neg)


def _gelu(x):
    t = math.erf(arith.divf(x, _c(x, _math.sqrt(2.0))))
    return arith.mulf(arith.mulf(_c(x, 0.5), x), arith.addf(_c(x, 1.0), t))


UNARY = {
    "negative": arith.negf,
    "exp": math.exp,
    "log": math.log,
    "sqrt": math.sqrt,
    "rsqrt": lambda x: arith.divf(_c(x, 1.0), math.sqrt(x)),
    "sin": math.sin,
    "cos": math.cos,
    "tanh": math.tanh,
    "sigmoid": _sigmoid,
    "abs": math.absf,
    "relu": lambda x: arith.maximumf(x, _c(x, 0.0)),
    "silu": lambda x: arith.mulf(x, _sigmoid(x)),
    "gelu": _gelu,
    "erf": math.erf,
    "square": lambda x: arith.mulf(x, x),
}

BINARY = {
    "add": arith.addf,
    "subtract": arith.subf,
    "multiply": arith.mulf,
    "divide": arith.divf,
    "power": math.powf,
    "maximum": arith.maximumf,
    "minimum": arith.minimumf,
}

_P = arith.CmpFPredicate
_I = arith.CmpIPredicate
# name -> (float predicate, signed int predicate, i1 predicate)
COMPARE = {
    "equal": (_P.OEQ, _I.eq, _I.eq),
    "not_equal": (_P.UNE, _I.ne, _I.ne),
    "less": (_P.OLT, _I.slt, _I.ult),
    "less_equal": (_P.OLE, _I.sle, _I.ule),
    "greater": (_P.OGT, _I.sgt, _I.ugt),
    "greater_equal": (_P.OGE, _I.sge, _I.uge),
}


def _result(op):
    t = op.results[0].type
    return shape_of(t), elt_of(t)


def _unary(fn):
    def lower(op):
        shape, elt = _result(op)
        return [elementwise([op.operands[0]], shape, elt, fn)]
    return lower


def _binary(fn):
    def lower(op):
        shape, elt = _result(op)
        return [elementwise(list(op.operands), shape, elt, fn)]
    return lower


def _compare(preds):
    fpred, ipred, bpred = preds

    def lower(op):
        shape, elt = _result(op)

        def body(a, b):
            if is_float(a.type):
                return from_i1(arith.cmpf(fpred, a, b), elt)
            return from_i1(arith.cmpi(bpred if is_bool(a.type) else ipred, a, b), elt)

        return [elementwise(list(op.operands), shape, elt, body)]
    return lower


for _name, _fn in UNARY.items():
    lowers("rlx." + _name)(_unary(_fn))
for _name, _fn in BINARY.items():
    lowers("rlx." + _name)(_binary(_fn))
for _name, _preds in COMPARE.items():
    lowers("rlx." + _name)(_compare(_preds))


@lowers("rlx.where", promote_half=False)
def lower_where(op):
    shape, elt = _result(op)
    return [elementwise(list(op.operands), shape, elt,
                        lambda c, a, b: arith.select(to_i1(c), a, b))]


@lowers("rlx.astype", promote_half=False)
def lower_astype(op):
    shape, elt = _result(op)
    x = op.operands[0]
    if elt_of(x) == elt:
        return [x]
    return [elementwise([x], shape, elt, lambda v: convert_scalar(v, elt))]


# --- creation ------------------------------------------------------------------

def _fill(value):
    def lower(op):
        shape, elt = _result(op)
        return [filled(shape, elt, value(elt))]
    return lower


lowers("rlx.zeros", "rlx.zeros_like", promote_half=False)(_fill(zero))
lowers("rlx.ones", "rlx.ones_like", promote_half=False)(_fill(one))


@lowers("rlx.full", promote_half=False)
def lower_full(op):
    shape, elt = _result(op)
    value = convert_scalar(extract_scalar(op.operands[0]), elt)
    return [filled(shape, elt, value)]


# --- identity markers ------------------------------------------------------------

@lowers("grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad", promote_half=False)
def lower_marker(op):
    return [op.operands[0]]

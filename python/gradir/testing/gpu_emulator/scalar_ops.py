"""Scalar (per-lane) arith and math ops of the emulator: ``ELEMENTWISE`` maps an
op name to ``fn(op, *operand values) -> value``, values being numpy scalars or
arrays over the lanes."""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from .values import dtype_of, unsigned

__all__ = ["ELEMENTWISE"]


# --- elementwise ops: fn(op, *operand values) -> value --------------------------------

def _rt(op):
    return dtype_of(op.results[0].type)


def _cast(fn):
    return lambda op, *a: np.asarray(fn(*a)).astype(_rt(op))



def _cmpi(op, a, b):
    pred = ir.IntegerAttr(op.attributes["predicate"]).value
    names = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    p = names[pred]
    if p.startswith("u"):
        a, b = unsigned(a), unsigned(b)
        p = p[1:]
    elif p.startswith("s"):
        p = p[1:]
    return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}[p](a, b)


def _cmpf(op, a, b):
    pred = ir.IntegerAttr(op.attributes["predicate"]).value
    names = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
             "ult", "ule", "une", "uno", "true"]
    p = names[pred]
    nan = np.isnan(a) | np.isnan(b)
    if p == "false":
        return np.zeros(np.broadcast(a, b).shape, bool)
    if p == "true":
        return np.ones(np.broadcast(a, b).shape, bool)
    if p == "ord":
        return ~nan
    if p == "uno":
        return nan
    cmp = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
           "le": np.less_equal, "ne": np.not_equal}[p[1:]](a, b)
    return (cmp & ~nan) if p[0] == "o" else (cmp | nan)


def _divsi(a, b):
    a, b = np.asarray(a), np.asarray(b)
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def _remsi(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.fmod(a, np.where(b == 0, 1, b)).astype(a.dtype)


def _ext_unsigned(op, a):
    return unsigned(a).astype(_rt(op))


def _fptosi(op, a):
    return np.trunc(a).astype(_rt(op))


def _round_away(a):
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


def _erf(a):
    a = np.asarray(a)
    return np.vectorize(math.erf, otypes=[np.float64])(a).astype(a.dtype)


def _powi(a, b):
    return np.power(a, b.astype(np.float64) if hasattr(b, "astype") else b).astype(
        np.asarray(a).dtype)


def _bitcast(op, a):
    return np.asarray(a).view(_rt(op))


def _same(fn):
    """A float op computed by numpy in the operands' dtype."""
    return lambda op, *a: np.asarray(fn(*a)).astype(_rt(op))


ELEMENTWISE = {
    "arith.addf": _same(np.add), "arith.subf": _same(np.subtract),
    "arith.mulf": _same(np.multiply), "arith.divf": _same(np.divide),
    "arith.remf": _same(np.fmod), "arith.negf": _same(np.negative),
    "arith.maximumf": _same(np.maximum), "arith.minimumf": _same(np.minimum),
    "arith.maxnumf": _same(np.fmax), "arith.minnumf": _same(np.fmin),
    "arith.addi": _same(np.add), "arith.subi": _same(np.subtract),
    "arith.muli": _same(np.multiply),
    "arith.divsi": _same(_divsi), "arith.remsi": _same(_remsi),
    "arith.divui": lambda op, a, b: (unsigned(a) // unsigned(b)).astype(_rt(op)),
    "arith.remui": lambda op, a, b: (unsigned(a) % unsigned(b)).astype(_rt(op)),
    "arith.floordivsi": _same(np.floor_divide),
    "arith.ceildivsi": _same(lambda a, b: -np.floor_divide(-a, b)),
    "arith.ceildivui": lambda op, a, b: (-(-unsigned(a) // unsigned(b))).astype(_rt(op)),
    "arith.andi": _same(np.bitwise_and), "arith.ori": _same(np.bitwise_or),
    "arith.xori": _same(np.bitwise_xor), "arith.shli": _same(np.left_shift),
    "arith.shrsi": _same(np.right_shift),
    "arith.shrui": lambda op, a, b: (unsigned(a) >> unsigned(b)).view(_rt(op)),
    "arith.maxsi": _same(np.maximum), "arith.minsi": _same(np.minimum),
    "arith.maxui": lambda op, a, b: np.maximum(unsigned(a), unsigned(b)).view(_rt(op)),
    "arith.minui": lambda op, a, b: np.minimum(unsigned(a), unsigned(b)).view(_rt(op)),
    "arith.cmpi": _cmpi, "arith.cmpf": _cmpf,
    "arith.select": lambda op, c, a, b: np.where(c, a, b).astype(_rt(op)),
    "arith.extf": _cast(lambda a: a), "arith.truncf": _cast(lambda a: a),
    "arith.sitofp": _cast(lambda a: a), "arith.uitofp": lambda op, a: unsigned(a).astype(_rt(op)),
    "arith.fptosi": _fptosi, "arith.fptoui": _fptosi,
    "arith.extsi": _cast(lambda a: a), "arith.extui": _ext_unsigned,
    "arith.trunci": _cast(lambda a: a),
    "arith.index_cast": _cast(lambda a: a), "arith.index_castui": _ext_unsigned,
    "arith.bitcast": _bitcast,
    "math.exp": _same(np.exp), "math.exp2": _same(np.exp2), "math.expm1": _same(np.expm1),
    "math.log": _same(np.log), "math.log2": _same(np.log2), "math.log10": _same(np.log10),
    "math.log1p": _same(np.log1p), "math.sqrt": _same(np.sqrt),
    "math.rsqrt": _same(lambda a: 1 / np.sqrt(a)), "math.cbrt": _same(np.cbrt),
    "math.tanh": _same(np.tanh), "math.sin": _same(np.sin), "math.cos": _same(np.cos),
    "math.tan": _same(np.tan), "math.atan": _same(np.arctan), "math.atan2": _same(np.arctan2),
    "math.sinh": _same(np.sinh), "math.cosh": _same(np.cosh), "math.asin": _same(np.arcsin),
    "math.acos": _same(np.arccos), "math.erf": _same(_erf), "math.powf": _same(np.power),
    "math.fpowi": _same(_powi), "math.ipowi": _same(np.power),
    "math.absf": _same(np.abs), "math.absi": _same(np.abs), "math.floor": _same(np.floor),
    "math.ceil": _same(np.ceil), "math.round": _same(_round_away),
    "math.roundeven": _same(np.rint), "math.trunc": _same(np.trunc),
    "math.copysign": _same(np.copysign), "math.fma": _same(lambda a, b, c: a * b + c),
    "math.isnan": lambda op, a: np.isnan(a), "math.isinf": lambda op, a: np.isinf(a),
    "math.isfinite": lambda op, a: np.isfinite(a),
}

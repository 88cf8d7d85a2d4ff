"""rlx-math-approx: f32 ``math.exp``/``log``/``tanh``/``erf`` and f64
``math.exp`` as polynomial code (arith + ``math.fma``), so elementwise loops
vectorize instead of calling libm once per element."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mlir import ir
from mlir.dialects import arith, math

from ... import _compat
from ...passes.base import ModulePass, option

__all__ = ["RlxMathApprox", "MAX_ULP", "MAX_ULP_NO_FMA", "MAX_ULP_F64", "APPROXIMATED",
           "APPROXIMATED_F64"]

APPROXIMATED = ("exp", "log", "tanh", "erf")

# Error bounds over the whole f32 range against a float64 reference, in units
# in the last place of the correctly rounded f32 result, asserted by
# test/conversion/cpu/rlx-math-approx-accuracy.py (27 million inputs: every
# 1021st bit pattern, every float where the formulas switch or the results
# overflow, denormals).  Measured maxima: exp 0.99, log 0.78, tanh 1.33,
# erf 1.45 ulp.
MAX_ULP = {"exp": 1.5, "log": 1.5, "tanh": 2.0, "erf": 2.0}
# fma=false (a CPU without FMA: x86-64-v2): separately rounded products;
# measured maxima exp 0.94, log 0.78, tanh 1.33, erf 2.48 ulp.
MAX_ULP_NO_FMA = {"exp": 1.5, "log": 1.5, "tanh": 2.0, "erf": 3.0}
# f64 (exp only), in ulps of the correctly rounded f64 result against an
# extended-precision reference, over the whole f64 range (6 million
# inputs), with and without FMA: measured 0.75 (0.61 where the result is
# normal; the rest is the double rounding into denormals, as libm's 0.71).
APPROXIMATED_F64 = ("exp",)
MAX_ULP_F64 = {"exp": 1.0}

_P = arith.CmpFPredicate

# exp: x = n ln2 + r (Cody-Waite split of ln2), e^r by Cephes' expf polynomial.
_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375
_LN2_LO = -2.12194440e-4
_EXP_P = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
          1.6666665459e-1, 5.0000001201e-1)
# f64 exp: the same reduction with ln2 split at 42 bits (n ln2_hi exact for
# |n| < 2^11, so x - n ln2_hi is exact with or without FMA), e^r by its
# Taylor series to r^13 (truncation under 0.05 ulp for |r| <= ln2/2).
_LN2_HI_F64 = 0.6931471805598903       # 0x1.62e42fefa3800p-1
_LN2_LO_F64 = 5.497923018708371e-14    # 0x1.ef35793c76730p-45
_EXP_P_F64 = (1.6059043836821613e-10, 2.08767569878681e-09, 2.505210838544172e-08,
              2.755731922398589e-07, 2.7557319223985893e-06, 2.48015873015873e-05,
              0.0001984126984126984, 0.001388888888888889, 0.008333333333333333,
              0.041666666666666664, 0.16666666666666666, 0.5)
# log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(1+f) by Cephes' logf polynomial.
_SQRT_HALF = 0.707106781186547524
_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
          3.3333331174e-1)
# tanh: |x| < 0.625: x + x^3 P(x^2) (Cephes' tanhf); above: 1 - 2 / (e^(2|x|) + 1).
_TANH_P = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
           -3.33332819422e-1)
# erf, fitted here (least squares on Chebyshev nodes against math.erf, then
# rounded to f32): |x| < 1: x (c0 + c0_lo + x^2 Q(x^2)); 1 <= |x| < 2.5 and
# 2.5 <= |x| < 3.92: 1 - P_i(|x| - mid_i), degree 10; |x| >= 3.92: 1
# (erfc(3.92) < half an ulp of 1).
_ERF_C0 = 1.128379225730896
_ERF_C0_LO = -5.8635382771399236e-08
_ERF_SMALL = (8.441834506811574e-05, -0.0008178272400982678, 0.005206103902310133,
              -0.026862304657697678, 0.11283762753009796, -0.37612637877464294)
_ERF_MID = (1.75, 3.21)
_ERF_LARGE = (
    (0.00033537656418047845, -0.0008622751920484006, -0.0006639129715040326,
     0.006036745849996805, -0.008982070721685886, -0.006618471350520849,
     0.04810469597578049, -0.0901579037308693, 0.0923561230301857, -0.052774976938962936,
     0.013328329659998417),
    (-2.360240387133672e-06, -2.0644120013457723e-05, 9.29163652472198e-05,
     -0.00020070398750249296, 0.0003144554211758077, -0.00038236836553551257,
     0.00035610439954325557, -0.0002470970794092864, 0.00012132150732213631,
     -3.779401959036477e-05, 5.635438810713822e-06),
)


def _element(t: ir.Type) -> ir.Type:
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


class _Builder:
    """Scalar or vector f32/f64 code with constants splatted to the value's shape
    (integers: i32 beside f32, i64 beside f64)."""

    def __init__(self, type_: ir.Type, fused: bool = True):
        self.ftype = type_
        self.fused = fused
        self.felem = _element(type_)
        self.bits = 64 if isinstance(self.felem, ir.F64Type) else 32
        self.ielem = ir.IntegerType.get_signless(self.bits)
        if isinstance(type_, ir.VectorType):
            vt = ir.VectorType(type_)
            scalable = list(vt.scalable_dims) if vt.scalable else None
            self.itype = ir.VectorType.get(vt.shape, self.ielem, scalable=scalable)
        else:
            self.itype = self.ielem
        self._cache = {}

    def _const(self, t, attr):
        key = (str(t), str(attr))
        if key not in self._cache:
            value = ir.DenseElementsAttr.get_splat(t, attr) if isinstance(t, ir.VectorType) else attr
            self._cache[key] = arith.ConstantOp(t, value).result
        return self._cache[key]

    def f(self, v: float) -> ir.Value:
        return self._const(self.ftype, ir.FloatAttr.get(self.felem, v))

    def i(self, v: int) -> ir.Value:
        return self._const(self.itype, ir.IntegerAttr.get(self.ielem, v))

    def fma(self, a, b, c):
        """a * b + c: one rounding with ``math.fma``; mulf + addf on a target
        without FMA instructions (where llvm.fma would be a libm call)."""
        if self.fused:
            return math.fma(a, b, c)
        return arith.addf(arith.mulf(a, b), c)

    def horner(self, coeffs, t):
        r = self.f(coeffs[0])
        for c in coeffs[1:]:
            r = self.fma(r, t, self.f(c))
        return r

    def select(self, pred, a, b):
        return arith.select(pred, a, b)

    def cmp(self, pred, a, b):
        return arith.cmpf(pred, a, b)

    def pow2(self, n):
        """2^n for an integer n (i32 / i64) in the normal exponent range."""
        bias, shift = (1023, 52) if self.bits == 64 else (127, 23)
        return arith.bitcast(self.ftype, arith.shli(arith.addi(n, self.i(bias)), self.i(shift)))


def _exp(b: _Builder, x):
    xc = arith.minimumf(arith.maximumf(x, b.f(-104.0)), b.f(89.0))
    n = math.roundeven(arith.mulf(xc, b.f(_LOG2E)))
    r = b.fma(n, b.f(-_LN2_HI), xc)
    r = b.fma(n, b.f(-_LN2_LO), r)
    y = b.fma(b.horner(_EXP_P, r), arith.mulf(r, r), r)
    y = arith.addf(y, b.f(1.0))
    ni = arith.fptosi(b.itype, n)                  # in [-150, 129]
    n1 = arith.shrsi(ni, b.i(1))                   # 2^n = 2^n1 2^(n-n1), each a normal float
    n2 = arith.subi(ni, n1)
    res = arith.mulf(arith.mulf(y, b.pow2(n1)), b.pow2(n2))
    return b.select(b.cmp(_P.UNO, x, x), x, res)


def _exp_f64(b: _Builder, x):
    xc = arith.minimumf(arith.maximumf(x, b.f(-746.0)), b.f(710.0))
    n = math.roundeven(arith.mulf(xc, b.f(_LOG2E)))
    t = b.fma(n, b.f(-_LN2_HI_F64), xc)            # exact: n ln2_hi has 53 bits
    r = b.fma(n, b.f(-_LN2_LO_F64), t)
    r_lo = b.fma(n, b.f(-_LN2_LO_F64), arith.subf(t, r))   # r's rounding error
    # e^(r + r_lo) = 1 + r + (r_lo (1 + r) + r^2 P(r)), summed with 1 + r
    # split exactly into s + e (Fast2Sum): one rounding of weight, the last
    tail = b.fma(b.horner(_EXP_P_F64, r), arith.mulf(r, r), b.fma(r, r_lo, r_lo))
    s = arith.addf(b.f(1.0), r)
    e = arith.addf(arith.subf(b.f(1.0), s), r)
    y = arith.addf(s, arith.addf(e, tail))
    ni = arith.fptosi(b.itype, n)                  # in [-1076, 1024]
    n1 = arith.shrsi(ni, b.i(1))                   # 2^n = 2^n1 2^(n-n1), each a normal double
    n2 = arith.subi(ni, n1)
    res = arith.mulf(arith.mulf(y, b.pow2(n1)), b.pow2(n2))   # one rounding into denormals
    return b.select(b.cmp(_P.UNO, x, x), x, res)


def _log(b: _Builder, x):
    tiny = b.cmp(_P.OLT, x, b.f(1.1754943508222875e-38))     # zero, denormal (or negative)
    xs = b.select(tiny, arith.mulf(x, b.f(8388608.0)), x)    # * 2^23
    bits = arith.bitcast(b.itype, xs)
    e_i = arith.subi(arith.andi(arith.shrui(bits, b.i(23)), b.i(0xFF)), b.i(126))
    e = arith.sitofp(b.ftype, e_i)
    e = b.select(tiny, arith.subf(e, b.f(23.0)), e)
    m = arith.bitcast(b.ftype, arith.ori(arith.andi(bits, b.i(0x007FFFFF)), b.i(0x3F000000)))
    low = b.cmp(_P.OLT, m, b.f(_SQRT_HALF))                 # m in [0.5, 1)
    e = b.select(low, arith.subf(e, b.f(1.0)), e)
    m = arith.subf(b.select(low, arith.addf(m, m), m), b.f(1.0))
    z = arith.mulf(m, m)
    y = arith.mulf(arith.mulf(b.horner(_LOG_P, m), m), z)
    y = b.fma(e, b.f(_LN2_LO), y)
    y = b.fma(z, b.f(-0.5), y)
    r = b.fma(e, b.f(_LN2_HI), arith.addf(m, y))
    inf = float("inf")
    r = b.select(b.cmp(_P.OEQ, x, b.f(inf)), b.f(inf), r)
    r = b.select(b.cmp(_P.OEQ, x, b.f(0.0)), b.f(-inf), r)
    r = b.select(b.cmp(_P.OLT, x, b.f(0.0)), b.f(float("nan")), r)
    return b.select(b.cmp(_P.UNO, x, x), x, r)


def _tanh(b: _Builder, x):
    a = math.absf(x)
    z = arith.mulf(a, a)
    small = b.fma(arith.mulf(a, z), b.horner(_TANH_P, z), a)
    e = _exp(b, arith.addf(a, a))
    large = arith.subf(b.f(1.0), arith.divf(b.f(2.0), arith.addf(e, b.f(1.0))))
    r = b.select(b.cmp(_P.OLT, a, b.f(0.625)), small, large)
    return math.copysign(r, x)


def _erf(b: _Builder, x):
    a = math.absf(x)
    z = arith.mulf(a, a)
    corr = b.fma(z, b.horner(_ERF_SMALL, z), b.f(_ERF_C0_LO))
    small = b.fma(a, b.f(_ERF_C0), arith.mulf(a, corr))
    first = b.cmp(_P.OLT, a, b.f(2.5))
    coeffs = [b.select(first, b.f(p), b.f(q)) for p, q in zip(*_ERF_LARGE)]
    t = arith.subf(a, b.select(first, b.f(_ERF_MID[0]), b.f(_ERF_MID[1])))
    r = coeffs[0]
    for c in coeffs[1:]:
        r = b.fma(r, t, c)
    large = arith.subf(b.f(1.0), r)
    large = b.select(b.cmp(_P.OGE, a, b.f(3.92)), b.f(1.0), large)
    r = b.select(b.cmp(_P.OLT, a, b.f(1.0)), small, large)
    return math.copysign(r, x)


_EXPANSIONS = {"exp": _exp, "log": _log, "tanh": _tanh, "erf": _erf}
# f64: exp only (log/tanh/erf stay libm calls)
_EXPANSIONS_F64 = {"exp": _exp_f64}
assert tuple(_EXPANSIONS_F64) == APPROXIMATED_F64


@dataclass(frozen=True)
class RlxMathApprox(ModulePass):
    """Rewrites f32 math.exp/log/tanh/erf and f64 math.exp as vectorizing polynomials (no libm).

    Replaces f32 (scalar or vector) ``math.exp``, ``math.log``,
    ``math.tanh`` and ``math.erf`` with polynomial approximations built from
    ``arith`` ops, ``math.fma``, ``math.roundeven``, ``math.absf`` and
    ``math.copysign`` (all of which LLVM lowers to vector instructions), the
    way upstream MLIR's ``populateMathPolynomialApproximationPatterns`` does;
    the pinned bindings expose neither that pass nor its transform op.
    Sigmoid, silu, gelu, softmax and log_softmax lower to these ops, so they
    are covered too.  f64 ``math.exp`` gets a polynomial of its own (the
    same reduction with ln2 in two parts, e^r by its Taylor series to r^13,
    the reduction's rounding error and the last sum compensated): within 1
    ulp (``MAX_ULP_F64``, measured 0.75; 0.61 for normal results) over the
    whole f64 range, exp(x > 709.78) = inf, exp(x < -745.13) = 0, denormal
    results rounded once.  f64 log/tanh/erf, f16 and other types are left
    alone (libm).

    Accuracy (max error over the whole f32 range against a float64
    reference, ``MAX_ULP``): exp 1.5 ulp, log 1.5, tanh 2, erf 2 (measured
    0.99, 0.78, 1.33, 1.45); with ``fma=false`` (the CPU pipeline's choice
    for a CPU without FMA instructions, where ``llvm.fma`` would become a
    libm call) erf's bound is 3 ulp (measured 2.48); special values as
    libm: exp(-inf) = 0, exp(x > 88.73) = inf, log(0) = -inf, log(x < 0) =
    NaN, log(+inf) = +inf, NaN in, NaN out; tanh/erf keep the sign of zero.

        %0 = math.exp %x : vector<16xf32>
    becomes
        %c = arith.minimumf (arith.maximumf %x, -104), 89
        %n = math.roundeven (%c * log2(e))
        %r = math.fma %n, -ln2_hi, %c  ...  (Cody-Waite reduction)
        %y = 1 + r + r^2 P(r)          (math.fma chain)
        %0 = %y * 2^(n/2) * 2^(n - n/2)  (arith.shli/bitcast; NaN kept by a select)
    """

    name = "rlx-math-approx"
    ops: tuple[Literal["exp", "log", "tanh", "erf"], ...] = option(
        APPROXIMATED, "the math ops to approximate (f32; exp also f64)")
    fma: bool = option(True, "use math.fma (false: mulf + addf, for a CPU without FMA "
                             "instructions)")

    def apply(self, module: ir.Operation) -> None:
        wanted = {f"math.{name}": _EXPANSIONS[name] for name in self.ops}
        for op in _compat.collect_ops(module, lambda o: o.name in wanted):
            expand = wanted[op.name]
            element = _element(op.results[0].type)
            if isinstance(element, ir.F64Type):
                expand = _EXPANSIONS_F64.get(op.name[len("math."):])
                if expand is None:
                    continue
            elif not isinstance(element, ir.F32Type):
                continue
            x = op.operands[0]
            with ir.InsertionPoint(op), op.location:
                value = expand(_Builder(x.type, self.fma), x)
            op.results[0].replace_all_uses_with(value)
            op.erase()

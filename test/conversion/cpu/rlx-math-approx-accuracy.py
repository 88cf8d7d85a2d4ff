# RUN: %PYTHON %s | FileCheck %s
# rlx-math-approx's f32 exp/log/tanh/erf, compiled (vectorized by the CPU
# schedule), against a float64 reference (numpy; scipy.special.erf, or
# math.erf where scipy is missing) over the whole f32 range: every 1021st
# bit pattern of all 2^32 (both signs, denormals, huge magnitudes, infinities,
# NaNs), plus every float in the intervals where the approximations switch
# formulas or the results overflow/underflow.  The error is in units in the
# last place of the correctly rounded f32 result; the bound asserted is the
# pass's stated MAX_ULP.  Special values (+-0, +-inf, NaN, overflow to inf,
# underflow to 0, log of negatives) must match exactly, and a sample also
# matches the reference interpreter (the oracle) within the bound.
# f64 exp likewise (main_f64): a seeded random sample of the whole f64
# bit space and of [-746, 710] (overflow, denormal results, underflow to 0) against numpy's extended-precision exp (longdouble: 64-bit
# significand on x86-64; mpmath on a smaller sample where longdouble is only
# double), in ulps of the correctly rounded f64 result, bound MAX_ULP_F64.
import math
import sys

import numpy as np

import gradir
from gradir.conversion.cpu.rlx_math_approx import (APPROXIMATED, APPROXIMATED_F64, MAX_ULP,
                                                    MAX_ULP_F64, MAX_ULP_NO_FMA)

CHUNK = 1 << 20


def reference(name, x64):
    if name == "erf":
        try:
            from scipy.special import erf
            return erf(x64)
        except ImportError:                      # pragma: no cover
            return np.vectorize(math.erf, otypes=[np.float64])(x64)
    with np.errstate(all="ignore"):
        return getattr(np, name)(x64)


def sweep():
    bits = np.arange(0, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32)
    parts = [bits.view(np.float32)]
    for lo, hi in [(0.6, 0.65), (0.9, 1.1), (2.45, 2.55), (3.8, 4.0), (88.0, 89.0),
                   (-104.5, -87.0), (1e-3, 1.2e-3)]:
        a = np.float32(lo).view(np.uint32)
        b = np.float32(hi).view(np.uint32)
        if lo < 0:
            a, b = b, a
        dense = np.arange(a, b, dtype=np.uint32).view(np.float32)
        parts += [dense, -dense]
    denormals = np.arange(0, 1 << 23, 3, dtype=np.uint32).view(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0,
                         np.finfo(np.float32).max, -np.finfo(np.float32).max,
                         np.finfo(np.float32).tiny, 1e-45, -1e-45, 88.72283, 88.72284,
                         -87.33655, -103.97208, -103.97209], dtype=np.float32)
    return np.concatenate(parts + [denormals, -denormals, specials])


def main(cpu):
    t = f"tensor<{CHUNK}xf32>"
    # @rlx_exp, not @exp: a function may not take a libm name (rlx-to-linalg)
    text = "\n".join(f'''func.func @rlx_{n}(%x: {t}) -> {t} {{
  %0 = "rlx.{n}"(%x) : ({t}) -> {t}
  return %0 : {t}
}}''' for n in APPROXIMATED)
    module = gradir.parse(text)
    exe = gradir.compile(module, cpu=cpu)
    bounds = MAX_ULP if cpu == "host" else MAX_ULP_NO_FMA
    x = sweep()
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
    print(f"cpu {cpu}: {x.size} inputs")
    failures = 0
    for name in APPROXIMATED:
        got = np.empty_like(x)
        for i in range(0, x.size, CHUNK):
            part = x[i:i + CHUNK]
            buf = np.zeros(CHUNK, np.float32)
            buf[:part.size] = part
            got[i:i + part.size] = exe["rlx_" + name](buf)[:part.size]
        want = reference(name, x64)
        with np.errstate(over="ignore"):
            want32 = want.astype(np.float32)
        finite = np.isfinite(want32)
        spacing = np.spacing(np.abs(want32[finite])).astype(np.float64)
        err = np.abs(got[finite].astype(np.float64) - want[finite]) / spacing
        worst = int(np.argmax(err))
        special_ok = (np.isnan(want32) == np.isnan(got)) & (
            np.isnan(want32) | (want32 == got) | finite)
        # signed zeros keep their sign (tanh, erf: odd; exp: never -0)
        zeros = (want32 == 0) & finite
        sign_ok = np.signbit(got[zeros]) == np.signbit(want32[zeros])
        print(f"{name}: max error {err.max():.3f} ulp at x = {x[finite][worst]!r} "
              f"(bound {bounds[name]})", file=sys.stderr)
        if err.max() > bounds[name]:
            print(f"{name}: FAIL max error {err.max():.3f} ulp > {bounds[name]} at "
                  f"x = {x[finite][worst]!r}: got {got[finite][worst]!r}, "
                  f"want {want[finite][worst]!r}")
            failures += 1
        elif not special_ok.all() or not sign_ok.all():
            bad = x[~special_ok][:5] if not special_ok.all() else x[zeros][~sign_ok][:5]
            print(f"{name}: FAIL special values at {bad!r}")
            failures += 1
        else:
            print(f"{name}: within {bounds[name]} ulp, special values exact")
        # the oracle: compiled agrees with the reference interpreter
        sample = np.concatenate([x[::4099][:CHUNK - 64], x[-64:]])
        buf = np.zeros(CHUNK, np.float32)
        buf[:sample.size] = sample
        interp = gradir.interpret(module, "rlx_" + name, buf)[0][:sample.size]
        mine = exe["rlx_" + name](buf)[:sample.size]
        both = np.isfinite(interp)
        gap = np.abs(mine[both].astype(np.float64) - interp[both]) / np.spacing(
            np.abs(interp[both])).astype(np.float64)
        same_special = np.array_equal(np.isnan(interp), np.isnan(mine)) and np.array_equal(
            interp[~both & ~np.isnan(interp)], mine[~both & ~np.isnan(interp)])
        if gap.max() > bounds[name] + 1 or not same_special:
            print(f"{name}: FAIL against the interpreter: {gap.max():.3f} ulp")
            failures += 1
        else:
            print(f"{name}: matches the interpreter")
    return failures


def sweep_f64():
    rng = np.random.default_rng(0)
    edges = [(709.0, 709.79), (-746.0, -707.0), (-0.35, 0.35), (-40.0, 40.0)]
    parts = [rng.uniform(-746.0, 710.0, 3_000_000)]
    parts += [rng.uniform(lo, hi, 500_000) for lo, hi in edges]
    parts.append(rng.integers(0, 1 << 64, 1_000_000, dtype=np.uint64).view(np.float64))
    tiny = np.float64(np.finfo(np.float64).smallest_subnormal)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 1e-300,
                         -1e-300, tiny, -tiny, np.finfo(np.float64).max,
                         -np.finfo(np.float64).max, 709.782712893384, 709.7827128933841,
                         -708.3964185322641, -745.1332191019411, -745.1332191019412,
                         -744.44007192138122, 710.0, -746.0, 0.34657359027997264,
                         -0.34657359027997264])
    return np.concatenate(parts + [specials])


def reference_f64(name, x):
    """getattr(np, name)(x) to well under an ulp, as (value, correctly rounded f64)."""
    if np.finfo(np.longdouble).nmant >= 63:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x.astype(np.longdouble))
            return want, want.astype(np.float64)
    import mpmath                                # pragma: no cover (non-x86 hosts)
    mpmath.mp.prec = 120
    want = np.array([getattr(mpmath, name)(mpmath.mpf(float(v))) for v in x], dtype=object)
    return want, np.array([float(v) for v in want])


def main_f64(cpu):
    t = f"tensor<{CHUNK}xf64>"
    text = "\n".join(f'''func.func @rlx_{n}(%x: {t}) -> {t} {{
  %0 = "rlx.{n}"(%x) : ({t}) -> {t}
  return %0 : {t}
}}''' for n in APPROXIMATED_F64)
    module = gradir.parse(text)
    exe = gradir.compile(module, cpu=cpu)
    x = sweep_f64()
    if np.finfo(np.longdouble).nmant < 63:       # pragma: no cover
        x = np.concatenate([x[::200], x[-30:]])
    print(f"cpu {cpu}, f64: {x.size} inputs")
    failures = 0
    for name in APPROXIMATED_F64:
        got = np.empty_like(x)
        for i in range(0, x.size, CHUNK):
            part = x[i:i + CHUNK]
            buf = np.zeros(CHUNK)
            buf[:part.size] = part
            got[i:i + part.size] = exe["rlx_" + name](buf)[:part.size]
        want, want64 = reference_f64(name, x)
        finite = np.isfinite(want64)
        # an ulp of the result; 2^-1074 for results that round to 0
        spacing = np.spacing(np.abs(want64[finite]))
        spacing = np.where(want64[finite] == 0, np.finfo(np.float64).smallest_subnormal, spacing)
        diff = np.abs(got[finite].astype(want.dtype) - want[finite])
        err = np.array([float(d / s) for d, s in zip(diff, spacing)]) if want.dtype == object \
            else (diff / spacing.astype(want.dtype)).astype(np.float64)
        worst = int(np.argmax(err))
        special_ok = (np.isnan(want64) == np.isnan(got)) & (
            np.isnan(want64) | (want64 == got) | finite)
        print(f"{name} f64: max error {err.max():.3f} ulp at x = {x[finite][worst]!r} "
              f"(bound {MAX_ULP_F64[name]})", file=sys.stderr)
        if err.max() > MAX_ULP_F64[name]:
            print(f"{name} f64: FAIL max error {err.max():.3f} ulp > {MAX_ULP_F64[name]} at "
                  f"x = {x[finite][worst]!r}: got {got[finite][worst]!r}")
            failures += 1
        elif not special_ok.all():
            print(f"{name} f64: FAIL special values at {x[~special_ok][:5]!r}")
            failures += 1
        else:
            print(f"{name} f64: within {MAX_ULP_F64[name]} ulp, special values exact")
        # the oracle: compiled agrees with the reference interpreter
        sample = np.concatenate([x[::11][:CHUNK - 64], x[-64:]])
        buf = np.zeros(CHUNK)
        buf[:sample.size] = sample
        interp = gradir.interpret(module, "rlx_" + name, buf)[0][:sample.size]
        mine = exe["rlx_" + name](buf)[:sample.size]
        both = np.isfinite(interp) & (interp != 0)
        gap = np.abs(mine[both] - interp[both]) / np.spacing(np.abs(interp[both]))
        same_special = np.array_equal(np.isnan(interp), np.isnan(mine)) and np.array_equal(
            interp[~both & ~np.isnan(interp)], mine[~both & ~np.isnan(interp)])
        if gap.max() > MAX_ULP_F64[name] + 1 or not same_special:
            print(f"{name} f64: FAIL against the interpreter: {gap.max():.3f} ulp")
            failures += 1
        else:
            print(f"{name} f64: matches the interpreter")
    return failures


if __name__ == "__main__":
    # host: math.fma (x86-64-v3 and later, aarch64); x86-64-v2 has no FMA
    # instructions, rlx-math-approx{fma=false} multiplies and adds instead
    sys.exit(1 if main("host") + main("x86-64-v2") + main_f64("host") + main_f64("x86-64-v2")
             else 0)

# CHECK: cpu host: {{[0-9]+}} inputs
# CHECK-NEXT: exp: within 1.5 ulp, special values exact
# CHECK-NEXT: exp: matches the interpreter
# CHECK-NEXT: log: within 1.5 ulp, special values exact
# CHECK-NEXT: log: matches the interpreter
# CHECK-NEXT: tanh: within 2.0 ulp, special values exact
# CHECK-NEXT: tanh: matches the interpreter
# CHECK-NEXT: erf: within 2.0 ulp, special values exact
# CHECK-NEXT: erf: matches the interpreter
# CHECK-NEXT: cpu x86-64-v2: {{[0-9]+}} inputs
# CHECK-NEXT: exp: within 1.5 ulp, special values exact
# CHECK-NEXT: exp: matches the interpreter
# CHECK-NEXT: log: within 1.5 ulp, special values exact
# CHECK-NEXT: log: matches the interpreter
# CHECK-NEXT: tanh: within 2.0 ulp, special values exact
# CHECK-NEXT: tanh: matches the interpreter
# CHECK-NEXT: erf: within 3.0 ulp, special values exact
# CHECK-NEXT: erf: matches the interpreter
# CHECK-NEXT: cpu host, f64: {{[0-9]+}} inputs
# CHECK-NEXT: exp f64: within 1.0 ulp, special values exact
# CHECK-NEXT: exp f64: matches the interpreter
# CHECK-NEXT: cpu x86-64-v2, f64: {{[0-9]+}} inputs
# CHECK-NEXT: exp f64: within 1.0 ulp, special values exact
# CHECK-NEXT: exp f64: matches the interpreter

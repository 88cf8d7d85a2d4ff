# RUN: %PYTHON %s | FileCheck %s
# Convolutions of bf16 and f16 programs on tensor cores: rlx-to-linalg
# computes a half-type op in f32 with its operands extended before it
# (conv_direct.py pads and zero-inserts the half tensors and extends them
# in the convolution's body), so each convolution GEMM reads bf16 or f16
# operands: mma.sync m16n8k16 on sm_80, wgmma m64nNk16 on sm_90, f32
# accumulation, the result rounded once to the program's type.  For
# conv2d's forward, data gradient (conv2d_transpose) and weight gradient,
# padded and not, strides 1 and 2, groups, compiled up to the kernels
# stage and run in the emulator:
#
# * every convolution GEMM is a tensor-core kernel (no SIMT "gemm" kernel
#   left; one mma/wgmma kernel per convolution: three in the adjoint), and
#   padded inputs of ungrouped convolutions are read in place (no buffer
#   of the padded shape);
# * each gradient and the forward result (``main_adjoint`` returns the
#   conv's output as the gradient of %m) is one GEMM rounded once: within
#   one ulp of the interpreter's float64 result plus K * 2^-24 times the
#   sum of the products' magnitudes (K products, exact in f32, summed in
#   f32 in any order: the classical bound K u sum|p|; rounding that sum
#   to nearest adds half an ulp of it, at most one ulp of the exact
#   value);
# * the loss, sum(conv * m), rounds each product twice (the conv, then
#   the multiply), at most 2^-bits of its magnitude each, and sums them in
#   f32: within 4 * 2^-bits * sum|p| + N * 2^-23 * sum|p| (+ the conv's
#   f32 sums, + subnormal spacing, + one ulp) of float64;
# * a depthwise convolution (block reductions, not a GEMM) on half
#   operands within the same bounds;
# * the forward alone and the weight gradient alone (rlx-gradient's form:
#   transposes around a conv2d) are one launch each: the rounding to the
#   program's type is the GEMM's epilogue, the weight gradient's GEMM
#   writing its transposed result in place as in f32;
# * an f32 program casting to bf16 with rlx.astype runs its convolution on
#   tensor cores too, within the same bound of the interpreter (which
#   rounds the same casts);
# * bf16 and f16 programs with constants (as a model imported with its
#   buffers has: memref.globals of bf16 the emulator reads from their hex
#   or decimal text), within the same bounds.
# Before conv_direct read the half tensors, the padded input was an f32
# copy beside a bf16 weight (mma_kind declines mixed operands): SIMT.

import json

import ml_dtypes
import numpy as np

import gradir
import gradir._compat
from gradir.conversion.gpu.launches import launch_breakdown
from gradir.conversion.gpu.nvvm import lower_to_nvvm
from gradir.ir import print_module
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated, run

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

U = 2.0 ** -24               # f32's unit roundoff
# type: (numpy dtype, fraction bits, smallest normal exponent)
TYPES = {"bf16": (ml_dtypes.bfloat16, 7, -126), "f16": (np.float16, 10, -14)}
CHIPS = {"sm_80": ("mma", "nvvm.mma.sync"), "sm_90": ("wgmma", "nvvm.wgmma.mma_async")}

# name: (x shape, w shape, strides, padding, groups)
CASES = {
    "s1_p1": ((2, 16, 6, 6), (32, 16, 3, 3), (1, 1), (1, 1, 1, 1), 1),
    "s1_p0": ((2, 16, 6, 6), (16, 16, 3, 3), (1, 1), (0, 0, 0, 0), 1),
    "s2_p1": ((2, 16, 7, 7), (16, 16, 3, 3), (2, 2), (1, 1, 1, 1), 1),
    "s2_p0": ((2, 16, 9, 9), (16, 16, 3, 3), (2, 2), (0, 0, 0, 0), 1),
    "s1_asym": ((2, 16, 6, 5), (16, 16, 3, 3), (1, 1), (0, 1, 2, 1), 1),
    "s2_p1_g2": ((2, 16, 8, 8), (16, 8, 3, 3), (2, 2), (1, 1, 1, 1), 2),
    "depthwise": ((2, 16, 6, 6), (16, 1, 3, 3), (1, 1), (1, 1, 1, 1), 16),
}


def out_size(size, k, s, lo, hi):
    return (size + lo + hi - k) // s + 1


def program(case, t, cast=None):
    """``sum(conv2d(x, w) * m)`` in type ``t``; with ``cast``, f32
    arguments cast to ``cast`` by rlx.astype around the convolution."""
    xs, ws, strides, padding, groups = case
    ys = (xs[0], ws[0], out_size(xs[2], ws[2], strides[0], padding[0], padding[2]),
          out_size(xs[3], ws[3], strides[1], padding[1], padding[3]))
    ty = lambda s, e=t: "tensor<" + "x".join(map(str, s)) + f"x{e}>"  # noqa: E731
    arr = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"      # noqa: E731
    attrs = (f"strides = {arr(strides)}, padding = {arr(padding)}, "
             f"dilation = array<i64: 1, 1>, groups = {groups} : i64")
    if cast is None:
        body = f"""  %y = "rlx.conv2d"(%x, %w) {{{attrs}}} : ({ty(xs)}, {ty(ws)}) -> {ty(ys)}"""
    else:
        body = f"""  %xc = "rlx.astype"(%x) : ({ty(xs)}) -> {ty(xs, cast)}
  %wc = "rlx.astype"(%w) : ({ty(ws)}) -> {ty(ws, cast)}
  %yc = "rlx.conv2d"(%xc, %wc) {{{attrs}}} : ({ty(xs, cast)}, {ty(ws, cast)}) -> {ty(ys, cast)}
  %y = "rlx.astype"(%yc) : ({ty(ys, cast)}) -> {ty(ys)}"""
    return f"""
func.func @main(%x: {ty(xs)}, %w: {ty(ws)}, %m: {ty(ys)}) -> tensor<{t}> {{
{body}
  %p = "rlx.multiply"(%y, %m) : ({ty(ys)}, {ty(ys)}) -> {ty(ys)}
  %s = "rlx.sum"(%p) : ({ty(ys)}) -> tensor<{t}>
  return %s : tensor<{t}>
}}""", ys


def ulp(x, bits: int, emin: int):
    """The spacing of a float format with ``bits`` fraction bits at ``x``."""
    e = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** emin)))
    return 2.0 ** (np.maximum(e, emin) - bits)


def f64_adjoint(text, t, args):
    """``main_adjoint`` of the program in float64, by the interpreter."""
    module = gradient_module(text.replace(f"x{t}>", "xf64>").replace(f"<{t}>", "<f64>"))
    return gradir.interpret(module, "main_adjoint", *[np.asarray(a, np.float64) for a in args])


def reductions(case, ys):
    """Products summed per element of (dx, dw, y): the data gradient's
    output channels x kernel taps per group, the weight gradient's output
    pixels, the forward's input channels x taps per group."""
    xs, ws, _, _, groups = case
    taps = ws[2] * ws[3]
    return ws[0] // groups * taps, ys[0] * ys[2] * ys[3], ws[1] * taps


def bounds(case, ys, exact, mags, m, bits, emin):
    """The tolerance of each output of ``main_adjoint`` (loss, dx, dw, y)
    against float64 (``exact``; ``mags``: the same on |arguments|)."""
    k_dx, k_dw, k_y = reductions(case, ys)
    loss, dx, dw, y = exact
    _, sdx, sdw, sy = mags
    n = y.size
    p = np.abs(y * np.asarray(m, np.float64))
    tiny = 2.0 ** (emin - bits)                # subnormal spacing
    loss_tol = (4 * 2.0 ** -bits * p.sum() + n * 2 * U * p.sum() + 2 * n * tiny
                + k_y * U * float(np.sum(sy * np.abs(np.asarray(m, np.float64))))
                + ulp(loss, bits, emin))
    return (loss_tol, ulp(dx, bits, emin) + k_dx * U * sdx,
            ulp(dw, bits, emin) + k_dw * U * sdw, ulp(y, bits, emin) + k_y * U * sy)


def kernels(module, fn, chip):
    """(tensor-core kernels, SIMT GEMM kernels, kinds) of ``@fn``."""
    kinds = launch_breakdown(module.operation, fn)["kinds"]
    tc, _ = CHIPS[chip]
    return (sum(v for k, v in kinds.items() if k in (tc, tc + "_splitk")),
            sum(v for k, v in kinds.items() if k in ("gemm", "gemm_splitk")), kinds)


rng = np.random.default_rng(0)
for t, (dtype, bits, emin) in TYPES.items():
    for name, case in CASES.items():
        text, ys = program(case, t)
        args = [rng.standard_normal(s).astype(dtype) for s in (case[0], case[1], ys)]
        exact = f64_adjoint(text, t, args)
        mags = f64_adjoint(text, t, [np.abs(np.asarray(a, np.float64)) for a in args])
        tols = bounds(case, ys, exact, mags, args[2], bits, emin)
        depthwise = case[4] == case[0][1]
        for chip, (tc, op) in CHIPS.items():
            module = gradient_module(text)
            lower_to_nvvm(module.operation, stop_after="kernels", chip=chip)
            got = run(module.operation, "main_adjoint", *args)
            for what, g, e, tol in zip(("loss", "dx", "dw", "y"), got, exact, tols):
                diff = np.abs(np.asarray(g, np.float64) - e)
                assert (diff <= tol).all(), (t, name, chip, what, float(diff.max()))
            n_tc, n_simt, kinds = kernels(module, "main_adjoint", chip)
            lowered = print_module(module)
            # three convolutions: three tensor-core kernels, no SIMT GEMM
            # (a depthwise convolution: block reductions)
            assert n_simt == 0, (t, name, chip, kinds)
            assert n_tc == (0 if depthwise else 3), (t, name, chip, kinds)
            assert (op in lowered) == (not depthwise), (t, name, chip)
            if chip == "sm_80":
                assert "wgmma" not in lowered, (t, name)
            # the padded input read in place: no buffer of its padded shape
            # (groups: the weight gradient reads a padded copy, as in f32)
            xs, pads = case[0], case[3]
            padded = (xs[0], xs[1], xs[2] + pads[0] + pads[2], xs[3] + pads[1] + pads[3])
            if any(pads) and case[4] == 1:
                assert "memref<" + "x".join(map(str, padded)) + "x" + t not in lowered, name
        print(t, name, "ok")
# CHECK: bf16 s1_p1 ok
# CHECK-NEXT: bf16 s1_p0 ok
# CHECK-NEXT: bf16 s2_p1 ok
# CHECK-NEXT: bf16 s2_p0 ok
# CHECK-NEXT: bf16 s1_asym ok
# CHECK-NEXT: bf16 s2_p1_g2 ok
# CHECK-NEXT: bf16 depthwise ok
# CHECK-NEXT: f16 s1_p1 ok
# CHECK-NEXT: f16 s1_p0 ok
# CHECK-NEXT: f16 s2_p1 ok
# CHECK-NEXT: f16 s2_p0 ok
# CHECK-NEXT: f16 s1_asym ok
# CHECK-NEXT: f16 s2_p1_g2 ok
# CHECK-NEXT: f16 depthwise ok


# The forward alone, and the weight gradient alone as rlx-gradient writes
# it (a conv2d of the transposed data and output gradient, its result
# transposed): one launch each, the GEMM rounding to the program's type in
# its epilogue (the weight gradient's GEMM writes the transposed result in
# place, as in f32, so no transposing rounding kernel follows it).
for t, (dtype, bits, emin) in TYPES.items():
    for chip, (tc, op) in CHIPS.items():
        module = gradir.parse(f"""
func.func @conv(%x: tensor<2x16x6x6x{t}>, %w: tensor<32x16x3x3x{t}>) -> tensor<2x32x6x6x{t}> {{
  %y = "rlx.conv2d"(%x, %w) {{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : (tensor<2x16x6x6x{t}>, tensor<32x16x3x3x{t}>) -> tensor<2x32x6x6x{t}>
  return %y : tensor<2x32x6x6x{t}>
}}
func.func @wgrad(%x: tensor<2x16x6x6x{t}>, %dy: tensor<2x32x6x6x{t}>) -> tensor<32x16x3x3x{t}> {{
  %xt = "rlx.permute_dims"(%x) {{axes = array<i64: 1, 0, 2, 3>}} : (tensor<2x16x6x6x{t}>) -> tensor<16x2x6x6x{t}>
  %dyt = "rlx.permute_dims"(%dy) {{axes = array<i64: 1, 0, 2, 3>}} : (tensor<2x32x6x6x{t}>) -> tensor<32x2x6x6x{t}>
  %g = "rlx.conv2d"(%xt, %dyt) {{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : (tensor<16x2x6x6x{t}>, tensor<32x2x6x6x{t}>) -> tensor<16x32x3x3x{t}>
  %dw = "rlx.permute_dims"(%g) {{axes = array<i64: 1, 0, 2, 3>}} : (tensor<16x32x3x3x{t}>) -> tensor<32x16x3x3x{t}>
  return %dw : tensor<32x16x3x3x{t}>
}}""")
        lower_to_nvvm(module.operation, stop_after="kernels", chip=chip)
        for fn in ("conv", "wgrad"):
            info = launch_breakdown(module.operation, fn)
            assert info["kinds"] == {tc: 1}, (t, chip, fn, info)
        x = rng.standard_normal((2, 16, 6, 6)).astype(dtype)
        dy = rng.standard_normal((2, 32, 6, 6)).astype(dtype)
        (got,) = run(module.operation, "wgrad", x, dy)
        # the weight gradient of the adjoint above, checked the same way
        text, ys = program(CASES["s1_p1"], t)
        w = np.zeros((32, 16, 3, 3), dtype)
        want = f64_adjoint(text, t, [x, w, dy])[2]
        mags = f64_adjoint(text, t, [np.abs(np.asarray(a, np.float64)) for a in (x, w, dy)])[2]
        diff = np.abs(np.asarray(got, np.float64) - want)
        assert (diff <= ulp(want, bits, emin) + 72 * U * mags).all(), (t, chip)
    print(t, "conv, weight gradient: one", "/".join(v[0] for v in CHIPS.values()), "launch")
# CHECK: bf16 conv, weight gradient: one mma/wgmma launch
# CHECK-NEXT: f16 conv, weight gradient: one mma/wgmma launch


# rlx.astype to bf16 in an f32 program: the same kernels, within the same
# bounds of the interpreter, which rounds the same casts (its own f32 sums
# count twice).
case = CASES["s1_p1"]
text, ys = program(case, "f32", cast="bf16")
args = [rng.standard_normal(s).astype(np.float32) for s in (case[0], case[1], ys)]
want = gradir.interpret(gradient_module(text), "main_adjoint", *args)
ref_text, _ = program(case, "bf16")
mags = f64_adjoint(ref_text, "bf16", [np.abs(np.asarray(a, np.float64)) for a in args])
k_dx, k_dw, k_y = reductions(case, ys)
for chip, (tc, op) in CHIPS.items():
    exe = Emulated(gradient_module(text), chip=chip)
    got = exe["main_adjoint"](*args)
    # S of the rounded operands: within 2^-7 of S of the f32 ones, each way
    for what, g, w, k, s in zip(("dx", "dw", "y"), got[1:], want[1:], (k_dx, k_dw, k_y),
                                mags[1:]):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        tol = ulp(np.maximum(np.abs(g), np.abs(w)), 7, -126) + 2 * k * U * 1.02 * s
        assert (np.abs(g - w) <= tol).all(), (chip, what, float(np.abs(g - w).max()))
    n_tc, n_simt, kinds = kernels(exe.lowered, "main_adjoint", chip)
    assert n_tc == 3 and n_simt == 0, (chip, kinds)
    print("astype bf16", chip, "ok")
# CHECK: astype bf16 sm_80 ok
# CHECK-NEXT: astype bf16 sm_90 ok


# Constants of the program's type (memref.globals after bufferization; the
# large one printed as hex): the loss weight and a per-channel bias.
def constant_program(case, t, m, b):
    """``sum((conv2d(x, w) + b) * m)`` with ``m`` (written as hex: its
    little-endian bits) and ``b`` (nested decimals) constants."""
    xs, ws = case[0], case[1]
    _, ys = program(case, t)
    ty = lambda s: "tensor<" + "x".join(map(str, s)) + f"x{t}>"  # noqa: E731
    mdense = '"0x' + np.ascontiguousarray(m).tobytes().hex().upper() + '"'
    bdense = json.dumps(np.asarray(b, np.float64).tolist())
    bs = (1, ws[0], 1, 1)
    return f"""
func.func @main(%x: {ty(xs)}, %w: {ty(ws)}) -> tensor<{t}> {{
  %m = arith.constant dense<{mdense}> : {ty(ys)}
  %b = arith.constant dense<{bdense}> : {ty(bs)}
  %y = "rlx.conv2d"(%x, %w) {{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : ({ty(xs)}, {ty(ws)}) -> {ty(ys)}
  %z = "rlx.add"(%y, %b) : ({ty(ys)}, {ty(bs)}) -> {ty(ys)}
  %p = "rlx.multiply"(%z, %m) : ({ty(ys)}, {ty(ys)}) -> {ty(ys)}
  %s = "rlx.sum"(%p) : ({ty(ys)}) -> tensor<{t}>
  return %s : tensor<{t}>
}}""", ys


case = CASES["s1_p1"]
for t, (dtype, bits, emin) in TYPES.items():
    _, ys = program(case, t)
    m = rng.standard_normal(ys).astype(dtype)
    b = rng.standard_normal((1, case[1][0], 1, 1)).astype(dtype)
    args = [rng.standard_normal(s).astype(dtype) for s in (case[0], case[1])]
    text, _ = constant_program(case, t, m, b)
    f64 = lambda mm, bb, aa: gradir.interpret(                        # noqa: E731
        gradient_module(constant_program(case, "f64", mm, bb)[0]), "main_adjoint",
        *[np.asarray(a, np.float64) for a in aa])
    exact = f64(m.astype(np.float64), b.astype(np.float64), args)
    mags = f64(np.abs(m.astype(np.float64)), np.abs(b.astype(np.float64)),
               [np.abs(np.asarray(a, np.float64)) for a in args])
    k_dx, k_dw, _ = reductions(case, ys)
    for chip, (tc, op) in CHIPS.items():
        module = gradient_module(text)
        lower_to_nvvm(module.operation, stop_after="kernels", chip=chip)
        lowered = print_module(module)
        # both globals: the weight as hex, the bias as decimals
        globals_ = [line for line in lowered.splitlines() if "memref.global" in line]
        assert any('dense<"0x' in g for g in globals_), (t, chip)
        assert any("dense<[" in g for g in globals_), (t, chip)
        got = run(module.operation, "main_adjoint", *args)
        for what, g, e, s, k in zip(("dx", "dw"), got[1:], exact[1:], mags[1:], (k_dx, k_dw)):
            diff = np.abs(np.asarray(g, np.float64) - e)
            assert (diff <= ulp(e, bits, emin) + k * U * s).all(), (t, chip, what)
        n_tc, n_simt, kinds = kernels(module, "main_adjoint", chip)
        assert n_tc == 3 and n_simt == 0, (t, chip, kinds)
    print(t, "constants ok")
# CHECK: bf16 constants ok
# CHECK-NEXT: f16 constants ok

# RUN: %PYTHON %s | FileCheck %s
# RUN: %PYTHON %s tf32 | FileCheck %s
# RUN: %PYTHON %s tf32 sm_80 | FileCheck %s
# Convolutions on the GPU pipeline (rlx-to-linalg{direct-convolutions=true}:
# one generic over the whole batch, an implicit-GEMM kernel): conv2d and its
# adjoint (rlx-gradient: the data gradient a conv2d_transpose, the weight
# gradient a conv2d of the transposed data and output gradient) for strides
# 1/2, padding 0/1 (and asymmetric), dilation 1/2, groups 1/2 and
# depthwise, compiled up to the kernels stage and run by the SIMT emulator
# against the reference interpreter.  Each convolution is one kernel: no
# gpu.launch inside an scf.for (no loop over images), and as many GEMM
# kernels as convolutions where the GEMM pays off (8x8 outputs).  With
# argument tf32, the same on TF32 tensor cores (within 1e-2 of the
# interpreter's largest magnitude): wgmma kernels at the default chip
# (sm_90), mma.sync kernels with sm_80.

import os
import sys

import numpy as np

import gradir
import gradir._compat
from gradir.testing import gradient_module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from emulate_helpers import assert_emulated  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

# name: (x shape, w shape, strides, padding, dilation, groups)
CASES = {
    "s1_p0": ((2, 8, 6, 6), (8, 8, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    "s1_p1": ((2, 16, 6, 6), (32, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "s1_p1_3ch": ((2, 3, 6, 6), (8, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "s2_p1": ((2, 8, 7, 7), (8, 8, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    "s1_p1_d2": ((2, 8, 7, 7), (8, 8, 3, 3), (1, 1), (1, 1, 1, 1), (2, 2), 1),
    "s2_p0_d2_g2": ((2, 16, 9, 9), (16, 8, 3, 3), (2, 2), (0, 0, 0, 0), (2, 2), 2),
    "s2_p1_g2": ((2, 4, 8, 8), (16, 2, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 2),
    "depthwise_s1_p1": ((2, 4, 6, 6), (4, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4),
    "depthwise_s2_p1": ((2, 8, 8, 8), (8, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 8),
    "1x1_s2_asym": ((2, 16, 5, 5), (16, 16, 1, 1), (2, 2), (0, 1, 1, 0), (1, 1), 1),
    "5x3_s2x1_p2x1": ((3, 8, 9, 7), (16, 8, 5, 3), (2, 1), (2, 1, 2, 1), (1, 1), 1),
    # the weight gradient reduces over 4*12*12 pixels: split-K (atomics)
    "deep_k": ((4, 8, 12, 12), (8, 8, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
}


def out_size(size, k, s, lo, hi, d):
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def program(xs, ws, strides, padding, dilation, groups):
    n, _, h, w = xs
    o, _, kh, kw = ws
    oh = out_size(h, kh, strides[0], padding[0], padding[2], dilation[0])
    ow = out_size(w, kw, strides[1], padding[1], padding[3], dilation[1])
    t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"
    ys = (n, o, oh, ow)
    arr = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"
    return f"""
func.func @main(%x: {t(xs)}, %w: {t(ws)}, %m: {t(ys)}) -> tensor<f32> {{
  %y = "rlx.conv2d"(%x, %w) {{strides = {arr(strides)}, padding = {arr(padding)}, dilation = {arr(dilation)}, groups = {groups} : i64}} : ({t(xs)}, {t(ws)}) -> {t(ys)}
  %t = "rlx.tanh"(%y) : ({t(ys)}) -> {t(ys)}
  %p = "rlx.multiply"(%t, %m) : ({t(ys)}, {t(ys)}) -> {t(ys)}
  %r = "rlx.sum"(%p) : ({t(ys)}) -> tensor<f32>
  return %r : tensor<f32>
}}""", ys


def launches(module, fn):
    """(kernel names in order, launches inside an scf.for) of ``@fn``."""
    names, looped = [], 0

    def visit(op, in_loop):
        nonlocal looped
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    if inner.name == "gpu.launch":
                        names.append(str(inner.attributes["function"]))
                        looped += in_loop
                    else:
                        visit(inner, in_loop or inner.name == "scf.for")

    for op in module.body.operations:
        if op.operation.name == "func.func" and str(op.attributes["sym_name"]) == f'"{fn}"':
            visit(op.operation, False)
    return names, looped


# "tf32": every convolution GEMM on TF32 tensor cores (kernels/wgmma.py at
# sm_90, kernels/mma.py with "sm_80")
OPTIONS = {"precision": "tf32"} if sys.argv[1:2] == ["tf32"] else {}
if sys.argv[2:] == ["sm_80"]:
    OPTIONS["chip"] = "sm_80"
GEMM = ("_mma" if "chip" in OPTIONS else "_wgmma") if OPTIONS else "_gemm"
rng = np.random.default_rng(0)
for name, (xs, ws, strides, padding, dilation, groups) in CASES.items():
    text, ys = program(xs, ws, strides, padding, dilation, groups)
    args = [rng.standard_normal(s).astype(np.float32) for s in (xs, ws, ys)]
    # every GEMM at least 8x8 (output channels per group, input channels
    # per group for the data gradient)
    gemm_worthwhile = min(ws[0], xs[1]) // groups >= 8
    for fn, module, convs in (("main", gradir.parse(text), 1),
                              ("main_adjoint", gradient_module(text), 3)):
        # tensor cores: within 1e-2 of the largest magnitude
        exe = assert_emulated(module, fn, args, f"{name} {fn}", rtol=1e-4, atol=1e-5,
                              tol=1e-2 if OPTIONS else None, **OPTIONS)
        names, looped = launches(exe.lowered, fn)
        assert looped == 0, (name, fn, names)
        gemms = [k for k in names if GEMM in k]
        if gemm_worthwhile:
            assert len(gemms) == convs, (name, fn, names)
        if name == "deep_k" and fn == "main_adjoint":
            assert any(GEMM + "_splitk" in k for k in gemms), names
    print(name, "ok")
# CHECK: s1_p0 ok
# CHECK: s1_p1 ok
# CHECK: s1_p1_3ch ok
# CHECK: s2_p1 ok
# CHECK: s1_p1_d2 ok
# CHECK: s2_p0_d2_g2 ok
# CHECK: s2_p1_g2 ok
# CHECK: depthwise_s1_p1 ok
# CHECK: depthwise_s2_p1 ok
# CHECK: 1x1_s2_asym ok
# CHECK: 5x3_s2x1_p2x1 ok
# CHECK: deep_k ok

# RUN: %PYTHON %s | FileCheck %s
# RUN: %PYTHON %s tf32 sm_90 | FileCheck %s
# RUN: %PYTHON %s tf32 sm_80 | FileCheck %s
# RUN: %PYTHON %s bf16 sm_90 | FileCheck %s
# RUN: %PYTHON %s bf16 sm_80 | FileCheck %s
# Padded convolution inputs read in place by the implicit GEMMs
# (gpu-linalg-to-kernels, conversion/gpu/padded_inputs.py): no zero fill
# and no copy kernel per padded input, the tile loads masking the padding
# (and conv2d_transpose's inserted zeros).  Each program runs in the SIMT
# emulator against the reference interpreter: conv2d forward with padding
# 1, stride 2, dilation 2, groups 2 and asymmetric padding (one GEMM kernel
# and nothing else), the adjoint of the stride-2 convolution (its data
# gradient reads the zero-inserted output gradient), and a ResNet basic
# block's forward + data + weight gradients, whose launches are counted
# with the folding and without it (fold_padded_inputs replaced by a no-op).
# Arguments: fp32 (default, SIMT FMAs: within 1e-4), tf32 or bf16
# (precision="tf32", compute_dtype="bf16": within 1e-2 and 3e-2 of the
# largest magnitude) on sm_90 (wgmma kernels) or sm_80 (mma.sync).

import os
import sys

import numpy as np

import gradir
import gradir._compat
from gradir.conversion.gpu import gpu_linalg_to_kernels
from gradir.conversion.gpu.launches import launch_breakdown
from gradir.testing import gradient_module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from emulate_helpers import assert_emulated  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

MODE = sys.argv[1] if len(sys.argv) > 1 else "fp32"
CHIP = sys.argv[2] if len(sys.argv) > 2 else "sm_90"
OPTIONS = {"fp32": {}, "tf32": {"precision": "tf32"}, "bf16": {"compute_dtype": "bf16"}}[MODE]
OPTIONS["chip"] = CHIP
TOL = {"fp32": None, "tf32": 1e-2, "bf16": 3e-2}[MODE]
GEMM = "gemm" if MODE == "fp32" else ("wgmma" if CHIP == "sm_90" else "mma")

t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"       # noqa: E731
arr = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"     # noqa: E731


def out_size(size, k, s, lo, hi, d):
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def conv(name, x, w, xs, ws, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1):
    """``%name = rlx.conv2d(%x, %w)`` and its result shape."""
    n, _, h, wd = xs
    o, _, kh, kw = ws
    ys = (n, o, out_size(h, kh, strides[0], padding[0], padding[2], dilation[0]),
          out_size(wd, kw, strides[1], padding[1], padding[3], dilation[1]))
    return (f'  %{name} = "rlx.conv2d"(%{x}, %{w}) {{strides = {arr(strides)}, '
            f'padding = {arr(padding)}, dilation = {arr(dilation)}, groups = {groups} : i64}} '
            f': ({t(xs)}, {t(ws)}) -> {t(ys)}\n'), ys


def check(module, fn, args, what):
    """Runs ``fn`` emulated and interpreted; returns the emulated module."""
    return assert_emulated(module, fn, args, what, rtol=1e-4, atol=1e-4, tol=TOL,
                           **OPTIONS).lowered


def kinds(lowered, fn):
    return launch_breakdown(lowered.operation, fn)["kinds"]


def folded_and_not(module, args, what):
    """Launches of @main_adjoint per call without the folding
    (fold_padded_inputs a no-op) and with it, both checked numerically."""
    counts = []
    fold = gpu_linalg_to_kernels.fold_padded_inputs
    for folding in (False, True):
        if not folding:
            gpu_linalg_to_kernels.fold_padded_inputs = lambda fn, becomes_gemm: ([], [])
        try:
            lowered = check(module, "main_adjoint", args, what)
        finally:
            gpu_linalg_to_kernels.fold_padded_inputs = fold
        counts.append(launch_breakdown(lowered.operation, "main_adjoint")["launches"])
    assert counts[1] < counts[0], (what, counts)
    return counts


rng = np.random.default_rng(0)
# name: (x shape, w shape, strides, padding, dilation, groups)
CASES = {
    "pad1": ((2, 8, 6, 6), (16, 8, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "stride2": ((2, 8, 7, 7), (16, 8, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    "dilation2": ((2, 8, 7, 7), (16, 8, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1),
    "groups2": ((2, 16, 6, 6), (16, 8, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    "asymmetric": ((2, 8, 6, 7), (16, 8, 3, 3), (1, 1), (0, 1, 2, 1), (1, 1), 1),
}
for name, (xs, ws, strides, padding, dilation, groups) in CASES.items():
    line, ys = conv("y", "x", "w", xs, ws, strides, padding, dilation, groups)
    text = (f"func.func @main(%x: {t(xs)}, %w: {t(ws)}) -> {t(ys)} {{\n{line}"
            f"  return %y : {t(ys)}\n}}")
    args = [rng.standard_normal(s).astype(np.float32) for s in (xs, ws)]
    lowered = check(gradir.parse(text), "main", args, name)
    # the GEMM reads the unpadded input: no fill, no copy kernel (with
    # groups, one kernel copies the result out of its [n, g, o] layout)
    k = kinds(lowered, "main")
    assert k.get(GEMM, 0) + k.get(GEMM + "_splitk", 0) == 1, (name, k)
    assert set(k) <= {GEMM, GEMM + "_splitk", "zero", "map"}, (name, k)
    assert k.get("map", 0) == (groups > 1), (name, k)
    print(name, "ok")
# CHECK: pad1 ok
# CHECK: stride2 ok
# CHECK: dilation2 ok
# CHECK: groups2 ok
# CHECK: asymmetric ok

# The stride-2 convolution's adjoint: its data gradient (conv2d_transpose)
# reads the output gradient zero-inserted and padded, its weight gradient
# the forward's padded input.
xs, ws = (2, 8, 7, 7), (16, 8, 3, 3)
line, ys = conv("y", "x", "w", xs, ws, (2, 2))
text = (f"func.func @main(%x: {t(xs)}, %w: {t(ws)}, %m: {t(ys)}) -> tensor<f32> {{\n{line}"
        f'  %h = "rlx.tanh"(%y) : ({t(ys)}) -> {t(ys)}\n'
        f'  %p = "rlx.multiply"(%h, %m) : ({t(ys)}, {t(ys)}) -> {t(ys)}\n'
        f'  %r = "rlx.sum"(%p) : ({t(ys)}) -> tensor<f32>\n'
        f"  return %r : tensor<f32>\n}}")
args = [rng.standard_normal(s).astype(np.float32) for s in (xs, ws, ys)]
n_before, n_after = folded_and_not(gradient_module(text), args, "stride2 adjoint")
print("stride2 adjoint ok:", n_before, "launches unfolded,", n_after, "folded")
# CHECK: stride2 adjoint ok: {{[0-9]+}} launches unfolded, {{[0-9]+}} folded

# A ResNet basic block (conv 3x3, relu, conv 3x3, + x, relu) and its
# gradients with respect to the input and both kernels.
xs, ws = (2, 16, 8, 8), (16, 16, 3, 3)
c1, _ = conv("c1", "x", "w1", xs, ws)
c2, _ = conv("c2", "r1", "w2", xs, ws)
T = t(xs)
text = (f"func.func @main(%x: {T}, %w1: {t(ws)}, %w2: {t(ws)}, %m: {T}) -> tensor<f32> {{\n"
        f'{c1}  %r1 = "rlx.relu"(%c1) : ({T}) -> {T}\n'
        f'{c2}  %s = "rlx.add"(%c2, %x) : ({T}, {T}) -> {T}\n'
        f'  %r2 = "rlx.relu"(%s) : ({T}) -> {T}\n'
        f'  %p = "rlx.multiply"(%r2, %m) : ({T}, {T}) -> {T}\n'
        f'  %l = "rlx.sum"(%p) : ({T}) -> tensor<f32>\n'
        f"  return %l : tensor<f32>\n}}")
args = [rng.standard_normal(s).astype(np.float32) for s in (xs, ws, ws, xs)]
args[1] *= 0.2
args[2] *= 0.2
n_before, n_after = folded_and_not(gradient_module(text, wrt=[0, 1, 2]), args, "block")
print("block ok:", n_before, "launches unfolded,", n_after, "folded")
# CHECK: block ok: 12 launches unfolded, 9 folded

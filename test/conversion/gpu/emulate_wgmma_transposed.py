# RUN: %PYTHON %s | FileCheck %s
# MN-major operands of the Hopper GEMMs (kernels/wgmma_layout.py): bf16/f16
# operands with M (A) or N (B) innermost in memory, rows 16-byte aligned,
# are copied with cp.async in 16-byte chunks along M (N) into the MN-major
# swizzled (or interleaved) layout and read by wgmma.mma_async with
# imm-trans-a / imm-trans-b = 1 (A ``col``, B ``row`` in NVVM), no thread
# transposing them; the emulator (gpu_emulator/wgmma.py) decodes the
# MN-major descriptors (LBO between atoms along M/N, SBO between 8-row
# groups of K, swizzled) as the PTX ISA defines them:
#
# * bf16 and f16 GEMMs of every transpose combination, ragged M, N and K,
#   batched, 128x128 tiles (two warpgroups: A's second atom; B's two 64-wide
#   atoms), split-K, within one ulp of the interpreter's float64 result;
# * both operands copied (no cooperative stores into the tiles) whenever
#   both have a 16-byte aligned innermost dim;
# * the interleaved layout (SWIZZLE off) too;
# * TF32 keeps K-major tiles (wgmma transposes only .f16/.bf16), and the
#   emulator refuses a TF32 wgmma.mma_async with a transposed operand;
# * descriptors whose LBO and SBO are swapped read other elements (the
#   emulator reads the fields, it does not assume the kernel's layout).

import os
import sys

import numpy as np
import ml_dtypes
from mlir import ir

import gradir
import gradir._compat
from gradir.conversion.gpu.kernels import wgmma as wgmma_kernels
from gradir.conversion.gpu.kernels import wgmma_layout
from gradir.conversion.gpu.nvvm import lower_to_nvvm
from gradir.ir import print_module
from gradir.testing.gpu_emulator import run

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import find, inputs, matmul, mutation_error, ulp  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

# name: ((M, K, N), transposes, options); M and N multiples of 8 (16-byte rows)
CASES = {
    "nn": ((40, 72, 48), {}, {}),
    "tn": ((40, 72, 48), {"ta": True}, {}),
    "nt": ((40, 72, 48), {"tb": True}, {}),
    "tt": ((24, 88, 40), {"ta": True, "tb": True}, {}),
    "ragged_k": ((56, 100, 40), {"ta": True}, {}),
    "batched": (((3, 24), 72, 40), {"ta": True}, {}),
    "batched_nn": (((2, 16), 40, 24), {}, {}),
    "tile128": ((136, 200, 144), {"ta": True}, {"sm_count": 1}),
    "tile128_nn": ((136, 96, 200), {}, {"sm_count": 1}),
    "split_k": ((16, 936, 24), {"ta": True}, {}),
}
TYPES = (("bf16", ml_dtypes.bfloat16, 7, -126), ("f16", np.float16, 10, -14))


def lowered_kernels(text: str, opts: dict):
    module = gradir.parse(text)
    lower_to_nvvm(module.operation, stop_after="kernels", chip="sm_90", **opts)
    return module


def layouts(lowered: str) -> str:
    """A's and B's layouts of the first wgmma.mma_async (row/col)."""
    line = next(l for l in lowered.splitlines() if "nvvm.wgmma.mma_async" in l)
    a = line.split("A[")[1].split("]")[0].split("<")[-1].rstrip(">")
    b = line.split("B[")[1].split("]")[0].split("<")[-1].rstrip(">")
    return f"A {a} B {b}"


def tile_stores(lowered: str) -> int:
    """Thread stores into the workgroup tiles (cooperative loads)."""
    return sum(1 for l in lowered.splitlines()
               if "memref.store" in l and "workgroup" in l)


def check(text, args, t, bits, emin, opts) -> str:
    """Runs the GEMM's kernels: within one ulp of the float64 result, plus
    what f32 accumulation may lose (K 2^-24 (|A| @ |B|): results that
    cancel to near 0); returns the kernels' IR."""
    f64 = gradir.parse(text.replace(f"x{t}>", "xf64>"))
    wide = [a.astype(np.float64) for a in args]
    want = np.asarray(gradir.interpret(f64, "main", *wide))
    mags = np.asarray(gradir.interpret(f64, "main", *[np.abs(a) for a in wide]))
    k = max(max(a.shape) for a in args)         # at least K
    module = lowered_kernels(text, opts)
    lowered = print_module(module)
    (got,) = run(module.operation, "main", *args)
    got = np.asarray(got, np.float64).reshape(want.shape)
    diff = np.abs(got - want)
    assert (diff <= ulp(want, bits, emin) + k * 2.0 ** -24 * mags).all(), (t, diff.max())
    return lowered


rng = np.random.default_rng(0)
for t, dtype, bits, emin in TYPES:
    for name, (shape, trans, opts) in CASES.items():
        text = matmul(*shape, **trans, t=t)
        args = inputs(gradir.parse(text), rng, dtype)
        lowered = check(text, args, t, bits, emin, opts)
        if t == "bf16":
            print(name, layouts(lowered), "copied:", lowered.count("llvm.addrspacecast"),
                  "thread stores:", tile_stores(lowered))
    print(t, "within one ulp of float64")
# CHECK: nn A row B row copied: 2 thread stores: 0
# CHECK-NEXT: tn A col B row copied: 2 thread stores: 0
# CHECK-NEXT: nt A row B col copied: 2 thread stores: 0
# CHECK-NEXT: tt A col B col copied: 2 thread stores: 0
# K = 100: rows of K are not 16-byte aligned, so only M and N are copied
# CHECK-NEXT: ragged_k A col B row copied: 2 thread stores: 0
# CHECK-NEXT: batched A col B row copied: 2 thread stores: 0
# CHECK-NEXT: batched_nn A row B row copied: 2 thread stores: 0
# CHECK-NEXT: tile128 A col B row copied: 2 thread stores: 0
# CHECK-NEXT: tile128_nn A row B row copied: 2 thread stores: 0
# CHECK-NEXT: split_k A col B row copied: 2 thread stores: 0
# CHECK-NEXT: bf16 within one ulp of float64
# CHECK-NEXT: f16 within one ulp of float64


# The tiles: MN-major [rows / A][BK][A] (A = 64 elements of the 128-byte
# swizzle; 32 of the 64-byte one for 32-wide tiles), K-major [rows / 8][8][BK].
for name in ("nn", "tile128", "split_k"):
    shape, trans, opts = CASES[name]
    lowered = print_module(lowered_kernels(matmul(*shape, **trans, t="bf16"), opts))
    start = lowered.index("workgroup(", lowered.index("_wgmma"))
    print(name, " ".join(p.split(",")[0] for p in lowered[start:].split("memref<")[1:3]))
# CHECK-NEXT: nn 4x8x8x32xbf16 4x1x32x32xbf16
# CHECK-NEXT: tile128 3x2x32x64xbf16 3x2x32x64xbf16
# CHECK-NEXT: split_k 4x1x32x64xbf16 4x1x32x32xbf16


# The interleaved layout (SWIZZLE off): MN-major core matrices
# [rows / 8][BK / 8][8][8].
wgmma_kernels.SWIZZLE = False
for name in ("tn", "tt", "tile128", "batched", "split_k"):
    shape, trans, opts = CASES[name]
    text = matmul(*shape, **trans, t="bf16")
    args = inputs(gradir.parse(text), rng, ml_dtypes.bfloat16)
    lowered = check(text, args, "bf16", 7, -126, opts)
    assert "x4x8x8xbf16" in lowered and "<col>], B" in lowered, name
wgmma_kernels.SWIZZLE = True
print("interleaved: MN-major bf16 agrees")
# CHECK-NEXT: interleaved: MN-major bf16 agrees


# TF32 keeps K-major tiles: the N-innermost operand of x @ w is loaded by
# the threads, and a transposed TF32 wgmma is refused by the emulator.
text = matmul(40, 72, 48)
lowered = print_module(lowered_kernels(text, {"precision": "tf32"}))
print("tf32", layouts(lowered), "copied:", lowered.count("llvm.addrspacecast"))
# CHECK-NEXT: tf32 A row B col copied: 1


def transpose_tf32(module):
    for op in find(module, "nvvm.wgmma.mma_async"):
        op.attributes["layoutB"] = ir.Attribute.parse("#nvvm.mma_layout<row>", op.context)


print(mutation_error(text, transpose_tf32, {"precision": "tf32"}))
# CHECK-NEXT: wgmma.mma_async on tf32 with a transposed (MN-major) operand: PTX transposes only .f16/.bf16


# LBO and SBO swapped in the MN-major descriptors (128x128 tiles: B has two
# atoms along N): the emulator reads other elements, so the result differs.
shape, trans, opts = CASES["tile128_nn"]
text = matmul(*shape, **trans, t="bf16")
args = inputs(gradir.parse(text), rng, ml_dtypes.bfloat16)
check(text, args, "bf16", 7, -126, opts)
bits = wgmma_layout.Layout.bits
wgmma_layout.Layout.bits = property(lambda s: wgmma_layout.descriptor_bits(s.sbo, s.lbo, s.mode)
                                    if s.mn_major else bits.fget(s))
try:
    check(text, args, "bf16", 7, -126, opts)
    print("swapped: agrees")
except AssertionError:
    print("swapped: differs")
finally:
    wgmma_layout.Layout.bits = bits
# CHECK-NEXT: swapped: differs

# RUN: %PYTHON %s | FileCheck %s
# Hopper GEMMs (kernels/wgmma.py: wgmma.mma_async on sm_90) in the emulator,
# which decodes wgmma's shared-memory matrix descriptors and accumulator
# layout as the PTX ISA specifies them (gpu_emulator/wgmma.py):
#
# * bf16 and f16 programs: within one ulp of the interpreter's result;
# * precision="tf32": within 2e-6 of a float64 product of the operands
#   rounded to TF32 (to nearest), and with the emulator's exact_tf32 (whole
#   f32 operands) fp32's result: the data flow is right apart from rounding;
# * compute_dtype="bf16": within 2e-6 of a product of bf16-rounded operands;
# * ragged shapes, transposed operands, batches, both tile sizes, split-K,
#   a fused epilogue, a dense layer's and a convolution's adjoints; tiles
#   staged with the 128-byte (TF32) and 64-byte (bf16) swizzles, and a few
#   cases in the interleaved (unswizzled) layout; operands with K innermost
#   and 16-byte aligned rows copied with cp.async into a multi-stage
#   pipeline (emulate_wgmma_pipeline.py checks it in detail), the others
#   loaded cooperatively;
# * sm_80 keeps mma.sync; sm_90 launches no mma.sync kernel;
# * the emulator refuses a kernel that drops the async-proxy fence, the
#   wgmma.fence, the wait or the barrier after it, or that changes what its
#   MMAs read before their wait.

import os
import sys

import numpy as np
import ml_dtypes
from mlir import ir
from mlir.dialects import arith, gpu, memref

import gradir
import gradir._compat
from gradir.conversion.gpu.kernels import wgmma as wgmma_kernels
from gradir.conversion.gpu.launches import launch_breakdown
from gradir.conversion.gpu.nvvm import lower_to_nvvm
from gradir.ir import print_module
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated, run
from gradir.testing.gpu_emulator.tensor_cores import tf32_round

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import find, first, inputs, matmul, mutation_error, rel, ulp  # noqa: E402,E501

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)


DENSE = """
func.func @main(%x: tensor<40x72xf32>, %w: tensor<72x36xf32>, %b: tensor<36xf32>) -> tensor<f32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x72xf32>, tensor<72x36xf32>) -> tensor<40x36xf32>
  %z = "rlx.add"(%y, %b) : (tensor<40x36xf32>, tensor<36xf32>) -> tensor<40x36xf32>
  %r = "rlx.tanh"(%z) : (tensor<40x36xf32>) -> tensor<40x36xf32>
  %s = "rlx.sum"(%r) : (tensor<40x36xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""

CONV = """
func.func @main(%x: tensor<2x16x6x6xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<f32> {
  %y = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x16x6x6xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x6x6xf32>
  %r = "rlx.tanh"(%y) : (tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  %s = "rlx.sum"(%r) : (tensor<2x32x6x6xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""

MATMULS = {
    "square": (matmul(64, 64, 64), {}),
    "ragged": (matmul(37, 29, 45), {}),
    "a_transposed": (matmul(40, 24, 56, ta=True), {}),
    "b_transposed": (matmul(33, 40, 24, tb=True), {}),
    "both_transposed": (matmul(24, 40, 40, ta=True, tb=True), {}),
    "batched": (matmul((3, 20), 36, 28), {}),
    "batched_transposed": (matmul((2, 24), 20, 16, tb=True), {}),
    "tile128": (matmul(136, 140, 72), {"sm_count": 1}),
    "split_k": (matmul(16, 1024, 24), {}),
}


def f64(text: str) -> str:
    return text.replace("xf32>", "xf64>").replace("<f32>", "<f64>")


def reference(text, args, fn="main"):
    module = gradient_module(f64(text)) if fn == "main_adjoint" else gradir.parse(f64(text))
    return gradir.interpret(module, fn, *[np.asarray(a, np.float64) for a in args])


def emulate(text, args, fn="main", exact=False, chip="sm_90", **options):
    module = gradient_module(text) if fn == "main_adjoint" else gradir.parse(text)
    exe = Emulated(module, chip=chip, **options)
    exe.emulator.exact_tf32 = exact
    kinds = dict(launch_breakdown(exe.lowered.operation, fn)["kinds"])
    return exe[fn](*args), kinds, str(exe.lowered)


def bf16_round(a):
    return a.astype(ml_dtypes.bfloat16).astype(np.float64)


rng = np.random.default_rng(0)
for name, (text, opts) in MATMULS.items():
    module = gradir.parse(text)
    args = inputs(module, rng)
    exact = first(reference(text, args))
    got, kinds, lowered = emulate(text, args, precision="tf32", **opts)
    assert "nvvm.wgmma.mma_async" in lowered and "nvvm.mma.sync" not in lowered, name
    rounded = rel(got, first(reference(text, [tf32_round(a).view(np.float32) for a in args])))
    err = rel(got, exact)
    assert rounded < 2e-6 and err > 20 * rounded, (name, rounded, err)
    got, _, _ = emulate(text, args, exact=True, precision="tf32", **opts)
    assert rel(got, exact) < 1e-6, (name, rel(got, exact))
    got, _, lowered = emulate(text, args, compute_dtype="bf16", **opts)
    rounded = rel(got, first(reference(text, [bf16_round(a) for a in args])))
    assert "nvvm.wgmma.mma_async" in lowered and rounded < 2e-6, (name, rounded)
    print(name, " ".join(sorted(kinds)))
# CHECK: square wgmma
# CHECK-NEXT: ragged wgmma
# CHECK-NEXT: a_transposed wgmma
# CHECK-NEXT: b_transposed wgmma
# CHECK-NEXT: both_transposed wgmma
# CHECK-NEXT: batched wgmma
# CHECK-NEXT: batched_transposed wgmma
# CHECK-NEXT: tile128 wgmma
# CHECK-NEXT: split_k map wgmma_splitk

# Tiles: 128x128 (two warpgroups, 256 threads) and 64x32 (one warpgroup),
# staged swizzled: [rows / 8][8][BK] (TF32 rows of 128 bytes: the 128-byte
# swizzle, descriptor mode 1; bf16 rows of 64 bytes: mode 2), in stages
# where A is copied with cp.async (its K innermost): three of BK = 16 (rows
# of 64 bytes, mode 2) for 128x128 TF32 tiles, four of BK = 32 for 64x32
# ones (48 KiB); two where neither operand is (ragged: K = 45; each thread
# holds the next slab in registers).
for name, want in (("tile128", "memref<3x16x8x16xi32"), ("square", "memref<4x8x8x32xi32"),
                   ("ragged", "memref<2x8x8x32xi32")):
    text, opts = MATMULS[name]
    draw = rng if name != "ragged" else np.random.default_rng(2)    # rng's later draws as before
    _, _, lowered = emulate(text, inputs(gradir.parse(text), draw), precision="tf32", **opts)
    threads = "in (%arg12 = %c256" in lowered.replace("%c256_", "%c256")
    print(name, want in lowered, "256 threads" if threads else "128 threads")
# CHECK-NEXT: tile128 True 256 threads
# CHECK-NEXT: square True 128 threads
# CHECK-NEXT: ragged True 128 threads

# The interleaved layout (no swizzle: core matrices [rows / 8][BK / ke][8][ke],
# descriptor mode 0), as the kernel builds it with SWIZZLE off.
wgmma_kernels.SWIZZLE = False
for name in ("ragged", "tile128", "split_k", "both_transposed"):
    text, opts = MATMULS[name]
    args = inputs(gradir.parse(text), rng)
    got, _, lowered = emulate(text, args, exact=True, precision="tf32", **opts)
    assert "x8x4xi32" in lowered, name
    assert rel(got, first(reference(text, args))) < 1e-6, name
    got, _, lowered = emulate(text, args, compute_dtype="bf16", **opts)
    assert "x4x8x8xbf16" in lowered, name
    assert rel(got, first(reference(text, [bf16_round(a) for a in args]))) < 2e-6, name
wgmma_kernels.SWIZZLE = True
print("interleaved: tf32 and bf16 agree")
# CHECK-NEXT: interleaved: tf32 and bf16 agree

# The one-stage loop (ASYNC off: cooperative loads, wait_group 0 per slab).
wgmma_kernels.ASYNC = False
for name in ("ragged", "tile128", "split_k", "a_transposed"):
    text, opts = MATMULS[name]
    args = inputs(gradir.parse(text), np.random.default_rng(3))
    got, _, lowered = emulate(text, args, exact=True, precision="tf32", **opts)
    assert "nvvm.cp.async" not in lowered and "wait.group.sync.aligned 1" not in lowered, name
    assert rel(got, first(reference(text, args))) < 1e-6, name
wgmma_kernels.ASYNC = True
print("one stage: tf32 agrees")
# CHECK-NEXT: one stage: tf32 agrees


# Whole programs with exact_tf32 (fp32's result): the epilogue (bias, tanh)
# in the GEMM's stores, transposed GEMMs of the adjoints, implicit GEMMs.
for name, text in (("dense", DENSE), ("conv", CONV)):
    module = gradir.parse(text)
    args = [a * np.float32(0.25) for a in inputs(module, rng)]
    for fn in ("main", "main_adjoint"):
        want = reference(text, args, fn)
        got, kinds, _ = emulate(text, args, fn, exact=True, precision="tf32")
        got, want = (x if isinstance(x, tuple) else (x,) for x in (got, want))
        errs = [rel(g, w) for g, w in zip(got, want)]
        assert max(errs) < 1e-5, (name, fn, errs)
        assert not any(k.startswith(("gemm", "mma")) for k in kinds), (name, fn, kinds)
        print(name, fn, "wgmma kernels:", sum(n for k, n in kinds.items()
                                              if k.startswith("wgmma")))
# CHECK-NEXT: dense main wgmma kernels: 1
# CHECK-NEXT: dense main_adjoint wgmma kernels: 3
# CHECK-NEXT: conv main wgmma kernels: 1
# CHECK-NEXT: conv main_adjoint wgmma kernels: 3


# bf16 and f16 programs: wgmma on sm_90, mma.sync on sm_80, within one ulp.
for t, dtype, bits, emin in (("bf16", ml_dtypes.bfloat16, 7, -126), ("f16", np.float16, 10, -14)):
    for name in ("ragged", "b_transposed", "batched", "square"):
        text = MATMULS[name][0].replace("xf32>", f"x{t}>")
        args = inputs(gradir.parse(text), rng, dtype)
        interp_args = [a.astype(np.float32) if t == "bf16" else a for a in args]
        want = first(gradir.interpret(gradir.parse(text), "main", *interp_args))
        for chip in ("sm_90", "sm_80"):
            module = gradir.parse(text)
            lower_to_nvvm(module.operation, stop_after="kernels", chip=chip,
                          **MATMULS[name][1])
            lowered = print_module(module)
            (got,) = run(module.operation, "main", *args)
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            assert (diff <= ulp(want.astype(np.float64), bits, emin)).all(), \
                (t, name, chip, diff.max())
            assert ("nvvm.wgmma.mma_async" in lowered) == (chip == "sm_90"), (t, name, chip)
            assert ("nvvm.mma.sync" in lowered) == (chip == "sm_80"), (t, name, chip)
    print(t, "programs: wgmma on sm_90, mma.sync on sm_80")
# CHECK-NEXT: bf16 programs: wgmma on sm_90, mma.sync on sm_80
# CHECK-NEXT: f16 programs: wgmma on sm_90, mma.sync on sm_80


# The emulator's checks: a kernel without the async-proxy fence after its
# stores, without wgmma.fence before the MMAs, without the wait before its
# accumulators are read, or without the barrier before the next tiles
# overwrite what the MMAs read, is an error (the one-stage kernel of
# cooperative loads; emulate_wgmma_pipeline.py mutates the pipelined one).
def overwrite(module):
    """A barrier and a store of 3 into the A tile between the MMAs and their
    wait: no race, but what the MMAs read changes before they complete."""
    wait = find(module, "nvvm.wgmma.wait.group.sync.aligned")[0]
    store = next(o for o in find(module, "memref.store")
                 if "workgroup" in str(o.operands[1].type))
    with ir.InsertionPoint(wait), wait.location:
        gpu.BarrierOp()
        three = arith.ConstantOp(ir.BF16Type.get(), 3.0).result
        memref.StoreOp(three, store.operands[1], list(store.operands)[2:])


def mutated(drop: str, which: int = 0):
    def mutate(module):
        if drop == "overwrite":
            overwrite(module)
        else:
            find(module, drop)[which].erase()
    wgmma_kernels.ASYNC = False          # the one-stage kernel (lowered with ASYNC off)
    try:
        return mutation_error(matmul(37, 72, 45, t="bf16"), mutate)     # three K slabs
    finally:
        wgmma_kernels.ASYNC = True


print(mutated("nvvm.fence.proxy"))
# CHECK-NEXT: wgmma.mma_async reads shared memory written without a fence.proxy.async after it
print(mutated("nvvm.wgmma.fence.aligned"))
# CHECK-NEXT: wgmma.mma_async takes accumulators from registers without a wgmma.fence before it
print(mutated("nvvm.wgmma.wait.group.sync.aligned"))
# CHECK-NEXT: an accumulator of wgmma.mma_async is read before a wgmma.wait_group completed it
print(mutated("gpu.barrier", 1))
# CHECK-NEXT: data race: a thread overwrites an element another thread read without a barrier in between
print(mutated("overwrite"))
# CHECK-NEXT: shared memory read by wgmma.mma_async changed before its wgmma.wait_group

# RUN: %PYTHON %s | FileCheck %s
# The multi-stage pipeline of the Hopper GEMMs (kernels/wgmma_pipeline.py:
# cp.async of the operands with K innermost in 16-byte rows, S-1 slabs
# ahead, into swizzled stages; one group of MMAs in flight) in the emulator,
# which decodes wgmma's descriptors (gpu_emulator/wgmma.py) and completes
# cp.async copies at their wait (gpu_emulator/async_copies.py):
#
# * precision="tf32": within 2e-6 of a float64 product of the operands
#   rounded to TF32 to nearest (so the copied slabs are rounded in place,
#   not truncated as wgmma would read raw f32), and with exact_tf32 within
#   1e-6 of fp32's result; bf16 and f16 programs within one ulp of the
#   interpreter's float64 result;
# * both operands copied (x @ w^T), one copied and one loaded cooperatively
#   (x @ w, x^T @ w^T), ragged M, N and K (zero-filled chunks), batches,
#   128x128 tiles (TF32: three stages of BK = 16), more slabs than stages,
#   split-K with a last split past K, the interleaved layout;
# * the emulator refuses a pipelined kernel without its cp.async wait (or
#   with one slab too shallow), without the async-proxy fence, without
#   either barrier, or without the wgmma.wait_group that keeps a stage from
#   being overwritten while its MMAs run.

import os
import sys

import numpy as np
import ml_dtypes
from mlir import ir

import gradir
import gradir._compat
from gradir.conversion.gpu.kernels import wgmma as wgmma_kernels
from gradir.conversion.gpu.nvvm import lower_to_nvvm
from gradir.ir import print_module
from gradir.testing.gpu_emulator import run
from gradir.testing.gpu_emulator.tensor_cores import tf32_round

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import (emulate_main as emulate, find, first, inputs,  # noqa: E402
                             matmul, mutation_error, rel, ulp)

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

# name: ((M, K, N), transposes, options); K in 16-byte rows for f32 and bf16
CASES = {
    "nt": ((37, 96, 29), {"tb": True}, {}),
    "nn": ((40, 72, 36), {}, {}),
    "tt": ((24, 64, 40), {"ta": True, "tb": True}, {}),
    "ragged_k": ((33, 104, 45), {"tb": True}, {}),
    "long_k": ((20, 392, 24), {"tb": True}, {"sm_count": 1}),
    "batched": (((3, 20), 72, 28), {"tb": True}, {}),
    "tile128": ((136, 200, 140), {"tb": True}, {"sm_count": 1}),
    "split_k": ((16, 936, 24), {"tb": True}, {}),
}


def reference(text, args):
    f64 = text.replace("xf32>", "xf64>")
    return first(gradir.interpret(gradir.parse(f64), "main",
                                  *[np.asarray(a, np.float64) for a in args]))


def staging(lowered: str) -> str:
    """The wgmma kernel's tile types (the first two workgroup buffers)."""
    start = lowered.index("workgroup(", lowered.index("_wgmma"))
    types = [p.split(",")[0] for p in lowered[start:].split("memref<")[1:3]]
    return " ".join(types)


def copies(lowered: str) -> int:
    """How many of A and B the kernel copies with cp.async (the global
    pointer each copied operand is read through)."""
    return lowered.count("llvm.addrspacecast")


rng = np.random.default_rng(0)
for name, (shape, trans, opts) in CASES.items():
    text = matmul(*shape, **trans)
    args = inputs(gradir.parse(text), rng)
    exact = reference(text, args)
    got, lowered = emulate(text, args, precision="tf32", **opts)
    assert "nvvm.cp.async.shared.global" in lowered, name
    rounded = rel(got, reference(text, [tf32_round(a).view(np.float32) for a in args]))
    err = rel(got, exact)
    assert rounded < 2e-6 and err > 20 * rounded, (name, rounded, err)
    got, _ = emulate(text, args, exact=True, precision="tf32", **opts)
    assert rel(got, exact) < 1e-6, (name, rel(got, exact))
    print(name, "copied:", copies(lowered), "tiles:", staging(lowered))
# CHECK: nt copied: 2 tiles: 4x8x8x32xi32 4x4x8x32xi32
# CHECK-NEXT: nn copied: 1 tiles: 4x8x8x32xi32 4x4x8x32xi32
# CHECK-NEXT: tt copied: 1 tiles: 4x8x8x32xi32 4x4x8x32xi32
# CHECK-NEXT: ragged_k copied: 2 tiles: 4x8x8x32xi32 4x4x8x32xi32
# CHECK-NEXT: long_k copied: 2 tiles: 3x16x8x16xi32 3x16x8x16xi32
# CHECK-NEXT: batched copied: 2 tiles: 4x8x8x32xi32 4x4x8x32xi32
# CHECK-NEXT: tile128 copied: 2 tiles: 3x16x8x16xi32 3x16x8x16xi32
# CHECK-NEXT: split_k copied: 2 tiles: 4x8x8x32xi32 4x4x8x32xi32


# bf16 and f16 programs (staged as stored): within one ulp of the interpreter.
for t, dtype, bits, emin in (("bf16", ml_dtypes.bfloat16, 7, -126), ("f16", np.float16, 10, -14)):
    for name in ("nt", "nn", "ragged_k", "batched", "tile128", "split_k"):
        shape, trans, opts = CASES[name]
        text = matmul(*shape, **trans, t=t)
        args = inputs(gradir.parse(text), rng, dtype)
        want = first(gradir.interpret(gradir.parse(text.replace(f"x{t}>", "xf64>")), "main",
                                      *[a.astype(np.float64) for a in args]))
        module = gradir.parse(text)
        lower_to_nvvm(module.operation, stop_after="kernels", chip="sm_90", **opts)
        assert "nvvm.cp.async.shared.global" in print_module(module), (t, name)
        (got,) = run(module.operation, "main", *args)
        diff = np.abs(got.astype(np.float64) - want)
        assert (diff <= ulp(want, bits, emin)).all(), (t, name, diff.max())
    print(t, "programs pipelined within one ulp of float64")
# CHECK-NEXT: bf16 programs pipelined within one ulp of float64
# CHECK-NEXT: f16 programs pipelined within one ulp of float64


# The interleaved layout (SWIZZLE off): the copies' destinations in core
# matrices [rows / 8][BK / ke][8][ke].
wgmma_kernels.SWIZZLE = False
for name in ("nt", "tile128", "split_k"):
    shape, trans, opts = CASES[name]
    text = matmul(*shape, **trans)
    args = inputs(gradir.parse(text), rng)
    got, lowered = emulate(text, args, exact=True, precision="tf32", **opts)
    assert "x8x4xi32" in staging(lowered) and "nvvm.cp.async" in lowered, name
    assert rel(got, reference(text, args)) < 1e-6, name
wgmma_kernels.SWIZZLE = True
print("interleaved: pipelined tf32 agrees")
# CHECK-NEXT: interleaved: pipelined tf32 agrees


# The emulator's checks on the pipelined kernel (bf16 x @ w^T, 10 slabs in
# 4 stages): each mutation is refused.
def mutated(what: str, which: int = 0, shallow: bool = False):
    """The error of the pipelined kernel with op ``what`` (the ``which``-th)
    erased, or (``shallow``) its cp.async wait leaving 3 groups in flight."""
    def mutate(module):
        op = find(module, what)[which]
        if shallow:
            op.attributes["n"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(32, context=module.context), 3)
        else:
            op.erase()
    return mutation_error(matmul(40, 320, 36, tb=True, t="bf16"), mutate)


print(mutated("nvvm.cp.async.wait.group"))
# CHECK-NEXT: wgmma.mma_async reads shared memory whose cp.async has not completed (cp.async.wait.group)
print(mutated("nvvm.cp.async.wait.group", shallow=True))
# CHECK-NEXT: wgmma.mma_async reads shared memory whose cp.async has not completed (cp.async.wait.group)
print(mutated("nvvm.fence.proxy"))
# CHECK-NEXT: wgmma.mma_async reads shared memory written without a fence.proxy.async after it
print(mutated("gpu.barrier", 0))
# CHECK-NEXT: data race: a thread reads an element another thread wrote without a barrier in between
print(mutated("gpu.barrier", 1))
# CHECK-NEXT: data race: a thread overwrites an element another thread read without a barrier in between
print(mutated("nvvm.wgmma.wait.group.sync.aligned", 0))
# CHECK-NEXT: shared memory read by wgmma.mma_async changed before its wgmma.wait_group

# RUN: %PYTHON %s | FileCheck %s
# RUN: %if ptxas %{ %PYTHON %s --ptxas | FileCheck %s --check-prefix=PTXAS %}
# TMA loads of the Hopper GEMMs (kernels/tma.py, wgmma.TMA on): operands with
# K innermost in 16-byte rows are loaded slab by slab with
# cp.async.bulk.tensor from a tensor map the host encodes
# (mgpuGradirTensorMap), each stage completed on its mbarrier, in the emulator
# (gpu_emulator/tma.py: the map's box, zero fill past the dims and swizzle,
# mbarrier phases and transaction bytes):
#
# * precision="tf32" within 2e-6 of a float64 product of TF32-rounded
#   operands (the landed slabs rounded in place) and exact_tf32 within 1e-6
#   of fp32; bf16 and f16 within one ulp of float64;
# * both operands, one operand (the other loaded cooperatively), ragged M,
#   N and K, a batch, 128x128 tiles of BK = 16 (64-byte swizzle), split-K
#   with a last split past K;
# * the PTX holds the bulk tensor copies, the mbarrier waits and
#   wgmma.mma_async, and ptxas assembles it for sm_90a;
# * the emulator refuses a kernel without the mbarrier wait, init or
#   arrival, without the barrier before a stage is reloaded, without the
#   wgmma.wait_group that keeps it from being overwritten while read, or
#   (TF32) without the async-proxy fence after the in-place rounding.

import os
import sys

import numpy as np
import ml_dtypes

import gradir
import gradir._compat
from gradir.conversion.gpu.kernels import wgmma as wgmma_kernels
from gradir.conversion.gpu.nvvm import find_ptxas, lower_to_nvvm
from gradir.ir import print_module
from gradir.testing.gpu_emulator import run
from gradir.testing.gpu_emulator.tensor_cores import tf32_round

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import (emulate_main as emulate, find, first, inputs, matmul,  # noqa: E402
                             mutation_error, rel, ulp)

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
wgmma_kernels.TMA = True

CASES = {
    "nt": ((37, 96, 29), {"tb": True}, {}),
    "nn": ((40, 72, 36), {}, {}),
    "ragged_k": ((33, 104, 45), {"tb": True}, {}),
    "batched": (((3, 20), 72, 28), {"tb": True}, {}),
    "tile128": ((136, 200, 140), {"tb": True}, {"sm_count": 1}),
    "split_k": ((16, 936, 24), {"tb": True}, {}),
}


def reference(text, args, t="f32"):
    f64 = text.replace(f"x{t}>", "xf64>")
    return first(gradir.interpret(gradir.parse(f64), "main",
                                  *[np.asarray(a, np.float64) for a in args]))


rng = np.random.default_rng(0)
for name, (shape, trans, opts) in CASES.items():
    text = matmul(*shape, **trans)
    args = inputs(gradir.parse(text), rng)
    exact = reference(text, args)
    got, lowered = emulate(text, args, precision="tf32", **opts)
    rounded = rel(got, reference(text, [tf32_round(a).view(np.float32) for a in args]))
    err = rel(got, exact)
    assert rounded < 2e-6 and err > 20 * rounded, (name, rounded, err)
    got, _ = emulate(text, args, exact=True, precision="tf32", **opts)
    assert rel(got, exact) < 1e-6, (name, rel(got, exact))
    print(name, "tensor maps:", lowered.count("llvm.call @mgpuGradirTensorMap"),
          "bulk copies:", lowered.count("nvvm.cp.async.bulk.tensor"),
          "cp.async:", "nvvm.cp.async.shared.global" in lowered)
# (bulk copies: S per operand, S-1 before the loop and one in it; TF32
# stages of 64x32 (12 KiB) and 128x128 (BK = 16, 16 KiB) tiles beside the
# mbarriers in 48 KiB: S = 3 and 2)
# CHECK: nt tensor maps: 2 bulk copies: 6 cp.async: False
# CHECK-NEXT: nn tensor maps: 1 bulk copies: 3 cp.async: False
# CHECK-NEXT: ragged_k tensor maps: 2 bulk copies: 6 cp.async: False
# CHECK-NEXT: batched tensor maps: 2 bulk copies: 6 cp.async: False
# CHECK-NEXT: tile128 tensor maps: 2 bulk copies: 4 cp.async: False
# CHECK-NEXT: split_k tensor maps: 2 bulk copies: 6 cp.async: False


for t, dtype, bits, emin in (("bf16", ml_dtypes.bfloat16, 7, -126), ("f16", np.float16, 10, -14)):
    for name in ("nt", "nn", "batched", "tile128", "split_k"):
        shape, trans, opts = CASES[name]
        text = matmul(*shape, **trans, t=t)
        args = inputs(gradir.parse(text), rng, dtype)
        want = reference(text, args, t)
        module = gradir.parse(text)
        lower_to_nvvm(module.operation, stop_after="kernels", chip="sm_90", **opts)
        assert "nvvm.cp.async.bulk.tensor" in print_module(module), (t, name)
        (got,) = run(module.operation, "main", *args)
        diff = np.abs(got.astype(np.float64) - want)
        assert (diff <= ulp(want, bits, emin)).all(), (t, name, diff.max())
    print(t, "programs with TMA within one ulp of float64")
# CHECK-NEXT: bf16 programs with TMA within one ulp of float64
# CHECK-NEXT: f16 programs with TMA within one ulp of float64


# The PTX (and, with ptxas, the cubin for sm_90a).
def binary(module, name: str) -> str:
    text = print_module(module)
    start = text.index(f"gpu.binary @{name}")
    return text[start:text.index("\n", start)].replace("\\0A", "\n").replace("\\09", " ")


text = matmul(40, 96, 36, tb=True)
module = gradir.parse(text)
lower_to_nvvm(module.operation, chip="sm_90", precision="tf32", format="isa")
ptx = " ".join(binary(module, "main_kernels_sm90a").split())
for needle in (".target sm_90a", "mbarrier.init.shared.b64",
               "mbarrier.arrive.expect_tx.shared.b64",
               "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
               "mbarrier.try_wait.parity.shared.b64", "fence.proxy.async.shared::cta",
               "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32",
               "wgmma.wait_group.sync.aligned 1;"):
    assert needle in ptx, needle
print("ptx: bulk tensor copies, mbarrier waits, wgmma")
# CHECK-NEXT: ptx: bulk tensor copies, mbarrier waits, wgmma
if "--ptxas" in sys.argv:      # (the second RUN line, where lit finds ptxas)
    assert find_ptxas(), "no ptxas"
    for opts in ({"precision": "tf32"}, {"precision": "tf32", "sm_count": 1}, {}):
        t = "f32" if opts else "bf16"
        module = gradir.parse(matmul((2, 40), 96, 36, tb=True, t=t))
        lower_to_nvvm(module.operation, chip="sm_90", format="bin", **opts)
        assert 'bin = "\\7FELF' in binary(module, "main_kernels_sm90a"), opts
    print("ptxas: sm_90a cubins")
# PTXAS: ptxas: sm_90a cubins


# The emulator's checks on the TMA kernel (bf16 x @ w^T, 10 slabs in 4
# stages): each mutation is refused.  Thread 0 issues a stage's copies, so
# with one warpgroup its own wgmma.wait_group orders them after the MMAs
# that read the stage; the barrier after it matters with two warpgroups.
def mutated(what: str, which: int = 0, t: str = "bf16", **opts):
    return mutation_error(matmul(40, 320, 36, tb=True, t=t),
                          lambda module: find(module, what)[which].erase(), opts)


print(mutated("nvvm.mbarrier.try_wait.parity"))
# CHECK-NEXT: wgmma.mma_async reads shared memory before the mbarrier phase of its bulk tensor copy completed (mbarrier.try_wait.parity)
print(mutated("nvvm.mbarrier.init"))
# CHECK-NEXT: mbarrier.arrive on an mbarrier not initialized
print(mutated("nvvm.mbarrier.arrive.expect_tx"))
# CHECK-NEXT: mbarrier.try_wait.parity waits for a phase that never completes (deadlock)
print(mutated("gpu.barrier", 2, sm_count=1))
# CHECK-NEXT: data race: a thread overwrites an element another thread read without a barrier in between
print(mutated("nvvm.wgmma.wait.group.sync.aligned", 0))
# CHECK-NEXT: shared memory read by wgmma.mma_async changed before its wgmma.wait_group
# TF32: the slabs rounded in place by the threads (generic proxy) need the
# fence before wgmma reads them
print(mutated("nvvm.fence.proxy", t="f32", precision="tf32"))
# CHECK-NEXT: wgmma.mma_async reads shared memory written without a fence.proxy.async after it

# RUN: %PYTHON %s | FileCheck %s
# RUN: %if ptxas %{ %PYTHON %s --ptxas | FileCheck %s --check-prefix=PTXAS %}
# Dynamic workgroup (shared) memory for the Hopper GEMMs' stages
# (kernels/wgmma.py with DYNAMIC_SMEM on): where the stages need more than
# the 48 KiB of static workgroup memory, the launch carries
# dynamic_shared_memory_size and the kernel views its tiles in
# gpu.dynamic_shared_memory, the first rounded up to a 1024-byte boundary
# (the window is aligned to 16 bytes only: the emulator places it 16 bytes
# past a boundary, so the rounding is exercised):
#
# * 128x128 tiles: TF32 keeps BK = 32 (four stages, 128 KiB instead of
#   three of BK = 16 in 48 KiB), bf16 four stages (64 KiB instead of
#   three); TF32 with exact_tf32 within 1e-6 of fp32, bf16 within one ulp
#   (plus f32 accumulation) of float64; the same with TMA (mbarriers in
#   the dynamic memory too);
# * smaller tiles keep static workgroup memory (no dynamic size);
# * the PTX declares no static tile and ptxas assembles it for sm_90a;
# * the emulator refuses static workgroup memory over 48 KiB per block and
#   static plus dynamic over 227 KiB.

import os
import sys

import numpy as np
from mlir import ir

import gradir
import gradir._compat
from gradir.conversion.gpu.kernels import wgmma as wgmma_kernels
from gradir.conversion.gpu.nvvm import find_ptxas, lower_to_nvvm
from gradir.ir import print_module
from gradir.testing.gpu_emulator import run
from gradir.testing.gpu_emulator.values import EmulationError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import emulate_main, find, inputs, matmul, rel, ulp  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
wgmma_kernels.DYNAMIC_SMEM = True


def launch_smem(lowered: str) -> str:
    """The wgmma launch's dynamic size and its tile types."""
    line = next(l for l in lowered.splitlines() if "gpu.launch" in l and "%c256" in l
                or "gpu.launch" in l and "%c128" in l)
    size = "none"
    if "dynamic_shared_memory_size" in line:
        name = line.split("dynamic_shared_memory_size ")[1].split()[0]
        size = next(l.split("arith.constant ")[1].split(" :")[0] for l in lowered.splitlines()
                    if l.strip().startswith(f"{name} = arith.constant"))
    views = [l.split(" to memref<")[1].split(",")[0] for l in lowered.splitlines()
             if "memref.view" in l and "workgroup" in l]
    return f"dynamic {size} tiles {' '.join(views)}"


rng = np.random.default_rng(0)
for name, tma in (("cp.async", False), ("tma", True)):
    wgmma_kernels.TMA = tma
    text = matmul(136, 200, 140, tb=True)
    args = inputs(gradir.parse(text), rng)
    got, lowered = emulate_main(text, args, exact=True, precision="tf32", sm_count=1)
    want = gradir.interpret(gradir.parse(text.replace("xf32>", "xf64>")), "main",
                            *[a.astype(np.float64) for a in args])
    assert rel(got, want) < 1e-6, (name, rel(got, want))
    print(name, "tf32", launch_smem(lowered))
    text = matmul(136, 200, 144, ta=True, t="bf16")
    args = inputs(gradir.parse(text), rng)
    wide = [a.astype(np.float64) for a in args]
    f64 = gradir.parse(text.replace("xbf16>", "xf64>"))
    want = np.asarray(gradir.interpret(f64, "main", *wide))
    mags = np.asarray(gradir.interpret(f64, "main", *[np.abs(a) for a in wide]))
    module = gradir.parse(text)
    lower_to_nvvm(module.operation, stop_after="kernels", chip="sm_90", sm_count=1)
    (got,) = run(module.operation, "main", *args)
    diff = np.abs(np.asarray(got, np.float64).reshape(want.shape) - want)
    assert (diff <= ulp(want, 7, -126) + 200 * 2.0 ** -24 * mags).all(), name
    print(name, "bf16", launch_smem(print_module(module)))
wgmma_kernels.TMA = False
# CHECK: cp.async tf32 dynamic 132096 tiles 4x16x8x32xi32 4x16x8x32xi32
# CHECK-NEXT: cp.async bf16 dynamic 66560 tiles 4x2x32x64xbf16 4x2x32x64xbf16
# CHECK-NEXT: tma tf32 dynamic 133120 tiles 4x16x8x32xi32 4x16x8x32xi32 4xi64
# (x^T @ w in bf16: both operands MN-major, copied with cp.async, no mbarrier)
# CHECK-NEXT: tma bf16 dynamic 66560 tiles 4x2x32x64xbf16 4x2x32x64xbf16

# 64x32 tiles: four stages in 24 KiB of static workgroup memory.
text = matmul(40, 96, 36, tb=True)
_, lowered = emulate_main(text, inputs(gradir.parse(text), rng), precision="tf32")
print("small", launch_smem(lowered))
# CHECK-NEXT: small dynamic none tiles


# The PTX: no static tiles (MLIR's declaration of the dynamic window, an
# internal zero-length array, prints as one byte), and ptxas for sm_90a.
def binary(module, name: str) -> str:
    text = print_module(module)
    start = text.index(f"gpu.binary @{name}")
    return text[start:text.index("\n", start)].replace("\\0A", "\n").replace("\\09", " ")


for opts in ({"precision": "tf32"}, {}):
    t = "f32" if opts else "bf16"
    module = gradir.parse(matmul(136, 200, 144, ta=not opts, tb=bool(opts), t=t))
    lower_to_nvvm(module.operation, chip="sm_90", sm_count=1, format="isa", **opts)
    ptx = binary(module, "main_kernels_sm90a")
    shared = sorted(l.split()[-1] for l in ptx.splitlines() if l.strip().startswith(".shared"))
    print(t, "static shared:", shared)
    if "--ptxas" in sys.argv:  # (the second RUN line, where lit finds ptxas)
        assert find_ptxas(), "no ptxas"
        module = gradir.parse(matmul(136, 200, 144, ta=not opts, tb=bool(opts), t=t))
        lower_to_nvvm(module.operation, chip="sm_90", sm_count=1, format="bin", **opts)
        assert 'bin = "\\7FELF' in binary(module, "main_kernels_sm90a"), opts
        print(t, "ptxas: sm_90a cubin")
# CHECK-NEXT: f32 static shared: ['__dynamic_shmem__0;']
# CHECK-NEXT: bf16 static shared: ['__dynamic_shmem__0;']
# PTXAS: f32 static shared: ['__dynamic_shmem__0;']
# PTXAS-NEXT: f32 ptxas: sm_90a cubin
# PTXAS-NEXT: bf16 static shared: ['__dynamic_shmem__0;']
# PTXAS-NEXT: bf16 ptxas: sm_90a cubin


# The emulator's limits: static workgroup memory over 48 KiB, and a dynamic
# size that takes static plus dynamic over 227 KiB.
STATIC = """
func.func @main(%x: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%w : memref<WORDSxf32, #gpu.address_space<workgroup>>) {
    %v = arith.constant 1.0 : f32
    memref.store %v, %w[%c0] : memref<WORDSxf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}"""


def error(fn) -> str:
    try:
        fn()
    except EmulationError as err:
        return str(err).split(": ", 1)[1]
    return "no error"


for words in (12288, 12289):
    module = gradir.parse(STATIC.replace("WORDS", str(words)))
    print(words * 4, error(lambda: run(module.operation, "main", np.ones(4, np.float32))))
# CHECK-NEXT: 49152 no error
# CHECK-NEXT: 49156 49156 bytes of static workgroup memory per block exceed 49152 (48 KiB)


def oversized(module):
    launch = next(op for op in find(module, "gpu.launch") if len(op.operands) > 6)
    size = launch.operands[6].owner
    size.attributes["value"] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(32, context=module.context), 227 * 1024 + 16)


text = matmul(136, 200, 144, ta=True, t="bf16")
module = gradir.parse(text)
lower_to_nvvm(module.operation, stop_after="kernels", chip="sm_90", sm_count=1)
oversized(module)
args = inputs(gradir.parse(text), rng)
print(error(lambda: run(module.operation, "main", *args)))
# CHECK-NEXT: 0 bytes of static and 232464 of dynamic workgroup memory per block exceed 232448 (227 KiB)

# RUN: %PYTHON %s | FileCheck %s
# The pipelined tensor-core GEMMs (kernels/mma.py, kernels/mma_pipeline.py)
# on sm_80 in the emulator, which runs cp.async (zero-fill past src-size,
# commit and wait groups: a copy lands when a wait completes its group),
# ldmatrix (x2/x4, .trans) and mma.sync as the PTX ISA defines them:
#
# * bf16 and f16 programs: within one ulp of float64 (f32 sums rounded once
#   to the program's type; the interpreter's f16 sums are coarser) plus
#   2^-22 of the sum of the products' magnitudes, on shapes that
#   are and are not multiples of the tiles, every transpose, batches, every
#   tile size, split-K; each case prints which operands are copied with
#   cp.async (chunk bytes), how many ldmatrix (plain, .trans) it issues and
#   the wait depth (1: three stages, 0: two);
# * TF32 (precision="tf32"): f32 operands copied as they are and rounded to
#   TF32 in the fragment reads: within 2e-6 of a float64 product of the
#   operands rounded to TF32, and with the emulator's exact_tf32 within
#   1e-6 of float64 (the data flow is right apart from rounding);
# * the emulator refuses a kernel whose pipeline is broken: no wait, a wait
#   too shallow, no barrier after the wait, no alignment of the workgroup
#   buffers; without zero-fill (src-size) at the edges the result is wrong;
# * every workgroup buffer is a multiple of 16 bytes long.

import os
import re
import sys

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import arith

import gradir
import gradir._compat
from gradir.conversion.gpu.common import walk
from gradir.conversion.gpu.nvvm import lower_to_nvvm
from gradir.ir import print_module
from gradir.testing.gpu_emulator import Emulated, EmulationError, run
from gradir.testing.gpu_emulator.tensor_cores import tf32_round

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import matmul  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

CHIP = "sm_80"


# name: (M, K, N or matmul's arguments, sm_count)
CASES = {
    "square": ((64, 64, 64), {}, 132),
    "ragged": ((37, 40, 45), {}, 132),
    "ragged_k": ((40, 100, 48), {}, 132),
    "a_transposed": ((40, 24, 56), {"ta": True}, 132),
    "b_transposed": ((33, 40, 24), {"tb": True}, 132),
    "both_transposed": ((24, 40, 40), {"ta": True, "tb": True}, 132),
    "batched": (((3, 20), 36, 28), {}, 132),
    "batched_transposed": (((2, 24), 20, 16), {"tb": True}, 132),
    "tile128": ((136, 72, 140), {}, 1),
    "tile64": ((136, 40, 140), {}, 8),
    "split_k": ((16, 1024, 24), {}, 132),
}
DTYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}


def ulp(x, bits: int, emin: int):
    """The spacing of a float format with ``bits`` mantissa bits at ``x``."""
    e = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** emin)))
    return 2.0 ** (np.maximum(e, emin) - bits)


def first(x):
    return x[0] if isinstance(x, tuple) else x


def reference(text, t, args):
    """The program in float64, by the interpreter."""
    f64 = gradir.parse(text.replace(f"x{t}>", "xf64>"))
    return gradir.interpret(f64, "main", *[np.asarray(a, np.float64) for a in args])


def rel(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / np.abs(want).max())


def lowered(text, **opts):
    module = gradir.parse(text)
    lower_to_nvvm(module.operation, stop_after="kernels", chip=CHIP, **opts)
    return module


def inputs(text, rng, t):
    fn_type = gradir.parse(text).body.operations[0].type
    return [rng.standard_normal(x.shape).astype(DTYPES[t]) for x in fn_type.inputs]


def summary(module) -> str:
    """Which operands the kernel copies with cp.async (chunk sizes), its
    ldmatrix (plain/.trans) and its wait depth."""
    text = print_module(module)
    # every workgroup buffer is a multiple of 16 bytes long (docs/gpu.md:
    # then any placement keeps the tiles 16-byte aligned)
    for dims, t in re.findall(r"memref<([0-9x]+)x(bf16|f16|f32|i32), #gpu.address_space<work",
                              text):
        size = int(np.prod([int(d) for d in dims.split("x")])) * (4 if "32" in t else 2)
        assert size % 16 == 0, (dims, t)
    chunks = sorted(set(re.findall(r"nvvm.cp.async.shared.global .*?, (\d+), cache", text)))
    plain = len(re.findall(r"nvvm.ldmatrix .*layout = #nvvm.mma_layout<row>", text))
    trans = len(re.findall(r"nvvm.ldmatrix .*layout = #nvvm.mma_layout<col>", text))
    waits = sorted(set(re.findall(r"nvvm.cp.async.wait.group (\d+)", text)))
    kinds = sorted(set(re.findall(r"@main_(mma_splitk|mma|gemm)_\d+", text)))
    return (f"{'/'.join(kinds)} cp.async {','.join(chunks) or '-'} ldmatrix {plain}/{trans} "
            f"wait {','.join(waits) or '-'}")


rng = np.random.default_rng(0)
for t, bits, emin in (("bf16", 7, -126), ("f16", 10, -14)):
    for name, (shape, flags, sm) in CASES.items():
        text = matmul(*shape, t=t, **flags)
        args = inputs(text, rng, t)
        want = first(reference(text, t, args))
        module = lowered(text, sm_count=sm)
        (got,) = run(module.operation, "main", *args)
        diff = np.abs(got.astype(np.float64) - want)
        # one ulp, and f32 sums' error where terms cancel
        sums = first(reference(text, t, [np.abs(np.asarray(a, np.float64)) for a in args]))
        assert (diff <= ulp(want, bits, emin) + 2.0 ** -22 * sums).all(), (t, name, diff.max())
        print(t, name, summary(module))
# CHECK: bf16 square mma cp.async 16 ldmatrix 2/2 wait 1
# CHECK-NEXT: bf16 ragged mma cp.async 16 ldmatrix 2/0 wait 1
# CHECK-NEXT: bf16 ragged_k mma cp.async 16,8 ldmatrix 2/2 wait 1
# CHECK-NEXT: bf16 a_transposed mma cp.async 16 ldmatrix 0/4 wait 1
# CHECK-NEXT: bf16 b_transposed mma cp.async 16 ldmatrix 4/0 wait 1
# CHECK-NEXT: bf16 both_transposed mma cp.async 16 ldmatrix 2/2 wait 1
# CHECK-NEXT: bf16 batched mma cp.async 8 ldmatrix 2/2 wait 1
# CHECK-NEXT: bf16 batched_transposed mma cp.async 8 ldmatrix 4/0 wait 1
# CHECK-NEXT: bf16 tile128 mma cp.async 16,8 ldmatrix 8/4 wait 0
# CHECK-NEXT: bf16 tile64 mma cp.async 16,8 ldmatrix 4/2 wait 1
# CHECK-NEXT: bf16 split_k mma_splitk cp.async 16 ldmatrix 2/2 wait 1
# CHECK-NEXT: f16 square mma cp.async 16 ldmatrix 2/2 wait 1
# CHECK-NEXT: f16 ragged mma cp.async 16 ldmatrix 2/0 wait 1
# CHECK-NEXT: f16 ragged_k mma cp.async 16,8 ldmatrix 2/2 wait 1
# CHECK-NEXT: f16 a_transposed mma cp.async 16 ldmatrix 0/4 wait 1
# CHECK-NEXT: f16 b_transposed mma cp.async 16 ldmatrix 4/0 wait 1
# CHECK-NEXT: f16 both_transposed mma cp.async 16 ldmatrix 2/2 wait 1
# CHECK-NEXT: f16 batched mma cp.async 8 ldmatrix 2/2 wait 1
# CHECK-NEXT: f16 batched_transposed mma cp.async 8 ldmatrix 4/0 wait 1
# CHECK-NEXT: f16 tile128 mma cp.async 16,8 ldmatrix 8/4 wait 0
# CHECK-NEXT: f16 tile64 mma cp.async 16,8 ldmatrix 4/2 wait 1
# CHECK-NEXT: f16 split_k mma_splitk cp.async 16 ldmatrix 2/2 wait 1

# TF32: the f32 operands copied as they are (4-byte chunks where a row's
# length is odd), rounded to TF32 as the fragments are read.
worst = 0.0
for name, (shape, flags, sm) in CASES.items():
    text = matmul(*shape, **flags)
    args = inputs(text, rng, "f32")
    exe = Emulated(gradir.parse(text), chip=CHIP, sm_count=sm, precision="tf32")
    got = first(exe["main"](*args))
    rounded = first(reference(text, "f32", [tf32_round(a).view(np.float32) for a in args]))
    exact = first(reference(text, "f32", args))
    err = rel(got, rounded)
    assert err < 2e-6 and rel(got, exact) > 20 * err, (name, err, rel(got, exact))
    worst = max(worst, err)
    exe.emulator.exact_tf32 = True
    assert rel(first(exe["main"](*args)), exact) < 1e-6, name
    print("tf32", name, summary(exe.lowered))
print(f"tf32: within {worst:.0e} < 2e-6 of the TF32-rounded operands' product")
# CHECK: tf32 square mma cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 ragged mma cp.async 16,4 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 ragged_k mma cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 a_transposed mma cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 b_transposed mma cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 both_transposed mma cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 batched mma cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 batched_transposed mma cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32 tile128 mma cp.async 16 ldmatrix 0/0 wait 0
# CHECK-NEXT: tf32 tile64 mma cp.async 16 ldmatrix 0/0 wait 0
# CHECK-NEXT: tf32 split_k mma_splitk cp.async 16 ldmatrix 0/0 wait 1
# CHECK-NEXT: tf32: within {{.*}} < 2e-6 of the TF32-rounded operands' product

# A broken pipeline is refused (or, without zero-fill, wrong): a bf16
# GEMM with ragged M and K (K = 36: 8-byte chunks, the last one short).
BROKEN = matmul(37, 36, 48, t="bf16")
B_ARGS = inputs(BROKEN, rng, "bf16")
B_WANT = first(reference(BROKEN, "bf16", B_ARGS))


def ops(module, name):
    return [op for op in walk(module.operation) if op.name == name]


def no_wait(module):
    for op in ops(module, "nvvm.cp.async.wait.group"):
        op.erase()


def shallow_wait(module):
    for op in ops(module, "nvvm.cp.async.wait.group"):
        op.attributes["n"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2)


def no_barrier_after_wait(module):
    for op in ops(module, "nvvm.cp.async.wait.group"):
        block_ops = [o.operation for o in op.operation.block.operations]
        at = block_ops.index(op.operation)
        assert block_ops[at + 1].name == "gpu.barrier"
        block_ops[at + 1].erase()


def unaligned(module):
    for op in ops(module, "llvm.ptrtoint"):
        with ir.InsertionPoint(op), op.location:
            zero = arith.constant(ir.IntegerType.get_signless(64), 0)
        op.results[0].replace_all_uses_with(zero)


def no_zero_fill(module):
    for op in ops(module, "nvvm.cp.async.shared.global"):
        if len(op.operands) == 3:
            with ir.InsertionPoint(op), op.location:
                op.operands[2] = arith.constant(ir.IntegerType.get_signless(32), 8)


for mutate in (None, no_wait, shallow_wait, no_barrier_after_wait, unaligned, no_zero_fill):
    module = lowered(BROKEN)
    with module.context:
        if mutate is not None:
            mutate(module)
        try:
            (got,) = run(module.operation, "main", *B_ARGS)
            print(getattr(mutate, "__name__", "pipeline"), "ran, right:",
                  rel(got, B_WANT) < 1e-2)
        except EmulationError as err:
            print(mutate.__name__, "refused:", str(err).split(": ", 1)[1])
# CHECK-NEXT: pipeline ran, right: True
# CHECK-NEXT: no_wait refused: ldmatrix reads bytes whose cp.async has not completed (cp.async.wait.group)
# CHECK-NEXT: shallow_wait refused: ldmatrix reads bytes whose cp.async has not completed (cp.async.wait.group)
# CHECK-NEXT: no_barrier_after_wait refused: data race: a thread reads an element another thread wrote without a barrier in between
# CHECK-NEXT: unaligned refused: cp.async destination address not aligned to 8 bytes
# CHECK-NEXT: no_zero_fill ran, right: False

# TF32 reads its f32 tiles with loads: a load before the wait is refused too.
TF32 = matmul(37, 36, 48)
T_ARGS = inputs(TF32, rng, "f32")
for mutate in (None, no_wait):
    module = lowered(TF32, precision="tf32")
    with module.context:
        if mutate is not None:
            mutate(module)
        try:
            (got,) = run(module.operation, "main", *T_ARGS)
            print("tf32", getattr(mutate, "__name__", "pipeline"), "ran, right:",
                  rel(got, first(reference(TF32, "f32", T_ARGS))) < 1e-2)
        except EmulationError as err:
            print("tf32", mutate.__name__, "refused:", str(err).split(": ", 1)[1])
# CHECK-NEXT: tf32 pipeline ran, right: True
# CHECK-NEXT: tf32 no_wait refused: a load of an element whose cp.async has not completed (cp.async.wait.group)

# ldmatrix on its own: a warp fills four 8x8 matrices of 16-bit values with
# their element numbers (matrix q, row r, column c: 64 q + 8 r + c; lane
# 8 q + r points at its row, the buffer's address rounded up to 16 bytes),
# and every lane's registers must hold what the PTX ISA says: register q,
# lane (g, p) = lane / 4, lane % 4: elements (g, 2p) and (g, 2p + 1) of
# matrix q, the first in the low half; .trans: (2p, g) and (2p + 1, g).
LDMATRIX = """
!ws = !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)>
func.func @main(%out: memref<8x32xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %d = gpu.alloc () : memref<8x32xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%a = %c32, %b = %c1, %cc = %c1) workgroup(%s : memref<264xi16, #gpu.address_space<workgroup>>) {
    %desc = builtin.unrealized_conversion_cast %s : memref<264xi16, #gpu.address_space<workgroup>> to !ws
    %base = llvm.extractvalue %desc[1] : !ws
    %addr = llvm.ptrtoint %base : !llvm.ptr<3> to i64
    %m15 = arith.constant 15 : i64
    %b16 = arith.constant 16 : i64
    %two = arith.constant 2 : i64
    %mis = arith.andi %addr, %m15 : i64
    %gap = arith.subi %b16, %mis : i64
    %gap2 = arith.andi %gap, %m15 : i64
    %sh64 = arith.divui %gap2, %two : i64
    %sh = arith.index_cast %sh64 : i64 to index
    %row = arith.muli %tx, %c8 : index
    scf.for %j = %c0 to %c8 step %c1 {
      %i = arith.addi %row, %j : index
      %v = arith.index_cast %i : index to i16
      %at = arith.addi %sh, %i : index
      memref.store %v, %s[%at] : memref<264xi16, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %first = arith.addi %sh, %row : index
    %f64 = arith.index_cast %first : index to i64
    %p = llvm.getelementptr %base[%f64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i16
    %r = nvvm.ldmatrix %p {num = 4 : i32, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
    %t = nvvm.ldmatrix %p {num = 4 : i32, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
    %r0 = llvm.extractvalue %r[0] : !llvm.struct<(i32, i32, i32, i32)>
    %r1 = llvm.extractvalue %r[1] : !llvm.struct<(i32, i32, i32, i32)>
    %r2 = llvm.extractvalue %r[2] : !llvm.struct<(i32, i32, i32, i32)>
    %r3 = llvm.extractvalue %r[3] : !llvm.struct<(i32, i32, i32, i32)>
    %t0 = llvm.extractvalue %t[0] : !llvm.struct<(i32, i32, i32, i32)>
    %t1 = llvm.extractvalue %t[1] : !llvm.struct<(i32, i32, i32, i32)>
    %t2 = llvm.extractvalue %t[2] : !llvm.struct<(i32, i32, i32, i32)>
    %t3 = llvm.extractvalue %t[3] : !llvm.struct<(i32, i32, i32, i32)>
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %c7 = arith.constant 7 : index
    memref.store %r0, %d[%c0, %tx] : memref<8x32xi32>
    memref.store %r1, %d[%c1, %tx] : memref<8x32xi32>
    memref.store %r2, %d[%c2, %tx] : memref<8x32xi32>
    memref.store %r3, %d[%c3, %tx] : memref<8x32xi32>
    memref.store %t0, %d[%c4, %tx] : memref<8x32xi32>
    memref.store %t1, %d[%c5, %tx] : memref<8x32xi32>
    memref.store %t2, %d[%c6, %tx] : memref<8x32xi32>
    memref.store %t3, %d[%c7, %tx] : memref<8x32xi32>
    gpu.terminator
  }
  gpu.memcpy %out, %d : memref<8x32xi32>, memref<8x32xi32>
  gpu.dealloc %d : memref<8x32xi32>
  return
}"""
module = gradir.parse(LDMATRIX)
with module.context:
    (got,) = run(module.operation, "main")
lane = np.arange(32)
g, p = lane // 4, lane % 4
want = np.zeros((8, 32), np.int64)
for q in range(4):
    lo = 64 * q + 8 * g + 2 * p                      # matrix q, row g, columns 2p, 2p + 1
    want[q] = lo | (lo + 1) << 16
    lo_t = 64 * q + 8 * (2 * p) + g                  # .trans: rows 2p, 2p + 1, column g
    want[4 + q] = lo_t | (lo_t + 8) << 16
print("ldmatrix x4 and x4.trans registers as the PTX ISA lays them out:",
      np.array_equal(got.astype(np.int64) & 0xFFFFFFFF, want))
# CHECK-NEXT: ldmatrix x4 and x4.trans registers as the PTX ISA lays them out: True

# cp.async on its own: thread t copies a 16-byte chunk reading 4 t bytes
# (src-size) of it; after the wait and a barrier the chunks hold the source
# there and zeros in the rest.
CP_ASYNC = """
!ws = !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)>
!gs = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
func.func @main(%src: memref<32xi16>, %out: memref<32xi16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %g = gpu.alloc () : memref<32xi16>
  %d = gpu.alloc () : memref<32xi16>
  gpu.memcpy %g, %src : memref<32xi16>, memref<32xi16>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%a = %c4, %b = %c1, %cc = %c1) workgroup(%s : memref<40xi16, #gpu.address_space<workgroup>>) {
    %desc = builtin.unrealized_conversion_cast %s : memref<40xi16, #gpu.address_space<workgroup>> to !ws
    %base = llvm.extractvalue %desc[1] : !ws
    %addr = llvm.ptrtoint %base : !llvm.ptr<3> to i64
    %m15 = arith.constant 15 : i64
    %b16 = arith.constant 16 : i64
    %two = arith.constant 2 : i64
    %mis = arith.andi %addr, %m15 : i64
    %gap = arith.subi %b16, %mis : i64
    %gap2 = arith.andi %gap, %m15 : i64
    %sh64 = arith.divui %gap2, %two : i64
    %sh = arith.index_cast %sh64 : i64 to index
    %gd = builtin.unrealized_conversion_cast %g : memref<32xi16> to !gs
    %gp = llvm.extractvalue %gd[1] : !gs
    %gg = llvm.addrspacecast %gp : !llvm.ptr to !llvm.ptr<1>
    %row = arith.muli %tx, %c8 : index
    %r64 = arith.index_cast %row : index to i64
    %at = arith.addi %sh64, %r64 : i64
    %dst = llvm.getelementptr %base[%at] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i16
    %from = llvm.getelementptr %gg[%r64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i16
    %n = arith.index_cast %tx : index to i32
    %four = arith.constant 4 : i32
    %bytes = arith.muli %n, %four : i32
    nvvm.cp.async.shared.global %dst, %from, 16, cache = cg, %bytes : !llvm.ptr<3>, !llvm.ptr<1>, i32
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    gpu.barrier
    scf.for %j = %c0 to %c8 step %c1 {
      %o = arith.muli %j, %c4 : index
      %i = arith.addi %o, %tx : index
      %k = arith.addi %sh, %i : index
      %v = memref.load %s[%k] : memref<40xi16, #gpu.address_space<workgroup>>
      memref.store %v, %d[%i] : memref<32xi16>
    }
    gpu.terminator
  }
  gpu.memcpy %out, %d : memref<32xi16>, memref<32xi16>
  gpu.dealloc %g : memref<32xi16>
  gpu.dealloc %d : memref<32xi16>
  return
}"""
module = gradir.parse(CP_ASYNC)
SRC = np.arange(1, 33, dtype=np.int16)
with module.context:
    (got,) = run(module.operation, "main", SRC)
want = np.where(np.arange(32) % 8 < 2 * (np.arange(32) // 8), SRC, 0)
print("cp.async src-size 0, 4, 8, 12 of 16 bytes, the rest zeros:", np.array_equal(got, want))
# CHECK-NEXT: cp.async src-size 0, 4, 8, 12 of 16 bytes, the rest zeros: True

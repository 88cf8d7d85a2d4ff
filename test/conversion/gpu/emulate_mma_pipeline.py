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

import re

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

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

CHIP = "sm_80"


def matmul(a, b, c, ta=False, tb=False, t="f32"):
    """``A @ B`` for A (a x b) and B (b x c), read transposed when asked;
    leading batch dims in ``a`` (a tuple) are a batched matmul."""
    *batch, m = a if isinstance(a, tuple) else (a,)
    pre = "".join(f"{d}x" for d in batch)
    xa = f"tensor<{pre}{b}x{m}x{t}>" if ta else f"tensor<{pre}{m}x{b}x{t}>"
    xb = f"tensor<{pre}{c}x{b}x{t}>" if tb else f"tensor<{pre}{b}x{c}x{t}>"
    perm = ", ".join(str(i) for i in range(len(batch))) + (", " if batch else "")
    perm += f"{len(batch) + 1}, {len(batch)}"
    lines, x, w = [], "%x", "%w"
    if ta:
        lines.append(f'%xt = "rlx.permute_dims"(%x) {{axes = array<i64: {perm}>}} : ({xa}) -> '
                     f"tensor<{pre}{m}x{b}x{t}>")
        x = "%xt"
    if tb:
        lines.append(f'%wt = "rlx.permute_dims"(%w) {{axes = array<i64: {perm}>}} : ({xb}) -> '
                     f"tensor<{pre}{b}x{c}x{t}>")
        w = "%wt"
    out = f"tensor<{pre}{m}x{c}x{t}>"
    lines.append(f'%y = "rlx.matmul"({x}, {w}) : (tensor<{pre}{m}x{b}x{t}>, '
                 f"tensor<{pre}{b}x{c}x{t}>) -> {out}")
    body = "\n  ".join(lines)
    return (f"func.func @main(%x: {xa}, %w: {xb}) -> {out} {{\n  {body}\n"
            f"  return %y : {out}\n}}")


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

# RUN: %PYTHON %s | FileCheck %s
# Tensor-core GEMMs (kernels/mma.py: mma.sync on sm_80+) in the SIMT
# emulator, which runs mma.sync as the PTX ISA defines it (TF32 operands
# read from the upper 19 bits of their registers, f32 accumulation):
#
# * precision="tf32": f32 matmuls (ragged shapes, transposed operands,
#   batches, every tile size, split-K, a fused epilogue, a dense layer's
#   adjoint, convolutions and their gradients) within 1e-2 of float64
#   (max error over max magnitude), agreeing with a float64 product of the
#   operands rounded to TF32 to nearest, farther from truncated operands
#   and from exact fp32: the kernel rounds (cvt.rna.tf32.f32) and the
#   result is TF32's, not fp32's;
# * compute_dtype="bf16": within 3e-2 of float64, agreeing with a float64
#   product of the operands rounded to bf16;
# * bf16 and f16 programs: within one ulp of the interpreter's result
#   (an f32 product rounded once), on tensor cores by default;
# * precision="fp32" (default) and chips before sm_80: no mma.sync, exact fp32;
# * with the emulator's exact_tf32 (MMAs on whole f32 operands) the TF32
#   kernels give fp32's result: their data flow is right apart from rounding.

import os
import re
import sys

import numpy as np
import ml_dtypes

import gradir
import gradir._compat
from gradir.conversion.gpu.launches import launch_breakdown
from gradir.conversion.gpu.nvvm import lower_to_nvvm
from gradir.ir import print_module
from gradir.runtime.signature import CompileError
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated, run
from gradir.testing.gpu_emulator.tensor_cores import tf32_round

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import matmul  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
CHIP = "sm_80"      # mma.sync (sm_90 runs wgmma: emulate_wgmma.py)


DENSE = """
func.func @main(%x: tensor<40x72xT>, %w: tensor<72x36xT>, %b: tensor<36xT>) -> tensor<T> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x72xT>, tensor<72x36xT>) -> tensor<40x36xT>
  %z = "rlx.add"(%y, %b) : (tensor<40x36xT>, tensor<36xT>) -> tensor<40x36xT>
  %r = "rlx.tanh"(%z) : (tensor<40x36xT>) -> tensor<40x36xT>
  %s = "rlx.sum"(%r) : (tensor<40x36xT>) -> tensor<T>
  return %s : tensor<T>
}"""

CONV = """
func.func @main(%x: tensor<2x16x6x6xT>, %w: tensor<32x16x3x3xT>) -> tensor<T> {
  %y = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x16x6x6xT>, tensor<32x16x3x3xT>) -> tensor<2x32x6x6xT>
  %r = "rlx.tanh"(%y) : (tensor<2x32x6x6xT>) -> tensor<2x32x6x6xT>
  %s = "rlx.sum"(%r) : (tensor<2x32x6x6xT>) -> tensor<T>
  return %s : tensor<T>
}"""

# name: (program, options of Emulated); every program a single GEMM of its inputs
MATMULS = {
    "square": (matmul(64, 64, 64), {}),
    "ragged": (matmul(37, 29, 45), {}),
    "a_transposed": (matmul(40, 24, 56, ta=True), {}),
    "b_transposed": (matmul(33, 40, 24, tb=True), {}),
    "both_transposed": (matmul(24, 40, 40, ta=True, tb=True), {}),
    "batched": (matmul((3, 20), 36, 28), {}),
    "batched_transposed": (matmul((2, 24), 20, 16, tb=True), {}),
    "tile128": (matmul(136, 40, 140), {"sm_count": 1}),
    "tile64": (matmul(136, 40, 140), {"sm_count": 8}),
    "split_k": (matmul(16, 1024, 24), {}),
}


def inputs(module, rng, dtype=np.float32):
    fn_type = module.body.operations[0].type
    return [rng.standard_normal(t.shape).astype(dtype) for t in fn_type.inputs]


def f64(text: str) -> str:
    return text.replace("xf32>", "xf64>").replace("<f32>", "<f64>")


def rel(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / np.abs(want).max())


def first(x):
    return x[0] if isinstance(x, tuple) else x


def emulate(text, args, fn="main", exact=False, **options):
    module = gradient_module(text) if fn == "main_adjoint" else gradir.parse(text)
    exe = Emulated(module, chip=CHIP, **options)
    exe.emulator.exact_tf32 = exact
    kinds = dict(launch_breakdown(exe.lowered.operation, fn)["kinds"])
    lowered = str(exe.lowered)
    return exe[fn](*args), kinds, lowered


def reference(text, args, fn="main"):
    module = gradient_module(f64(text)) if fn == "main_adjoint" else gradir.parse(f64(text))
    return gradir.interpret(module, fn, *[a.astype(np.float64) for a in args])


def bf16_round(a):
    return a.astype(ml_dtypes.bfloat16).astype(np.float64)


def tf32_trunc(a):
    return (np.asarray(a, np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)


rng = np.random.default_rng(0)
worst = {"tf32": 0.0, "bf16": 0.0}
for name, (text, opts) in MATMULS.items():
    module = gradir.parse(text)
    args = inputs(module, rng)
    exact = first(reference(text, args))
    fp32 = first(gradir.interpret(module, "main", *args))
    got, kinds, lowered = emulate(text, args, precision="tf32", **opts)
    assert "nvvm.mma.sync" in lowered and "nvvm.convert.float.to.tf32" in lowered, name
    assert not any(k.startswith("gemm") for k in kinds), (name, kinds)
    err = rel(got, exact)
    rounded = rel(got, first(reference(text, [tf32_round(a).view(np.float32) for a in args])))
    truncated = rel(got, first(reference(text, [tf32_trunc(a) for a in args])))
    assert err < 1e-2, (name, err)
    assert rel(got, fp32) < 1e-2, name                      # the interpreter's (fp32) result
    assert rounded < 2e-6, (name, rounded)                  # TF32 to nearest, f32 sums
    assert err > 20 * rounded and truncated > 20 * rounded, (name, err, truncated, rounded)
    assert rel(fp32, exact) < 1e-6                          # what fp32 would give
    worst["tf32"] = max(worst["tf32"], err)
    # the same kernel on whole f32 operands (exact_tf32): fp32's result
    got, _, _ = emulate(text, args, exact=True, precision="tf32", **opts)
    assert rel(got, exact) < 1e-6, (name, rel(got, exact))
    got, kinds, lowered = emulate(text, args, compute_dtype="bf16", **opts)
    assert "nvvm.mma.sync" in lowered and "arith.truncf" in lowered, name
    err = rel(got, exact)
    rounded = rel(got, first(reference(text, [bf16_round(a) for a in args])))
    assert err < 3e-2 and rounded < 2e-6 and err > 20 * rounded, (name, err, rounded)
    worst["bf16"] = max(worst["bf16"], err)
    print(name, " ".join(sorted(kinds)))
# CHECK: square mma
# CHECK-NEXT: ragged mma
# CHECK-NEXT: a_transposed mma
# CHECK-NEXT: b_transposed mma
# CHECK-NEXT: both_transposed mma
# CHECK-NEXT: batched mma
# CHECK-NEXT: batched_transposed mma
# CHECK-NEXT: tile128 mma
# CHECK-NEXT: tile64 mma
# CHECK-NEXT: split_k map mma_splitk
print(f"worst error vs float64: tf32 {worst['tf32']:.1e} < 1e-2, bf16 {worst['bf16']:.1e} < 3e-2")
# CHECK-NEXT: worst error vs float64: tf32 {{.*}} < 1e-2, bf16 {{.*}} < 3e-2

# Tile sizes: 128x128 and 64x64 block tiles, their f32 tiles copied with
# cp.async in two stages (three would pass 48 KiB): BK 16 for 128x128 (the
# K-innermost operand in rows of 16 + 4, the other in rows of 128 + 8, and
# 16 bytes of slack each), BK 32 for 64x64; under compute_dtype=bf16 the
# operands are rounded as they are staged (cooperative loads, one [k][mn]
# tile of BK x (BM + 8) each).
for name in ("tile128", "tile64"):
    for opts in ({"precision": "tf32"}, {"compute_dtype": "bf16"}):
        _, _, lowered = emulate(MATMULS[name][0], inputs(gradir.parse(MATMULS[name][0]), rng),
                                **opts, **MATMULS[name][1])
        wg = re.search(r"function\(@main_mma_0\) workgroup\((.*)\)", lowered).group(1)
        print(name, next(iter(opts)), re.findall(r"memref<([0-9x]+\w+),", wg))
# CHECK-NEXT: tile128 precision ['5124xf32', '4356xf32']
# CHECK-NEXT: tile128 compute_dtype ['32x136xbf16', '32x136xbf16']
# CHECK-NEXT: tile64 precision ['4612xf32', '4612xf32']
# CHECK-NEXT: tile64 compute_dtype ['32x72xbf16', '32x72xbf16']

worst_program = {}
# Whole programs: the GEMM's epilogue (bias, tanh) in its stores, a dense
# layer's adjoint (transposed GEMMs), a convolution and its gradients
# (implicit GEMMs), all on tensor cores.
for name, text in (("dense", DENSE), ("conv", CONV)):
    text = text.replace("T>", "f32>")
    module = gradir.parse(text)
    args = [a * np.float32(0.25) for a in inputs(module, rng)]   # tanh not saturated
    for fn in ("main", "main_adjoint"):
        want = reference(text, args, fn)
        for opts, tol in (({"precision": "tf32"}, 1e-2), ({"compute_dtype": "bf16"}, 3e-2)):
            got, kinds, lowered = emulate(text, args, fn, **opts)
            got, want_t = (x if isinstance(x, tuple) else (x,) for x in (got, want))
            errs = [rel(g, w) for g, w in zip(got, want_t)]
            assert max(errs) < tol, (name, fn, opts, errs)
            key = next(iter(opts))
            worst_program[key] = max(worst_program.get(key, 0.0), *errs)
            assert not any(k.startswith("gemm") for k in kinds), (name, fn, kinds)
        print(name, fn, "mma kernels:", sum(n for k, n in kinds.items() if k.startswith("mma")))
# CHECK-NEXT: dense main mma kernels: 1
# CHECK-NEXT: dense main_adjoint mma kernels: 3
# CHECK-NEXT: conv main mma kernels: 1
# CHECK-NEXT: conv main_adjoint mma kernels: 3
print(f"programs: tf32 {worst_program['precision']:.1e} < 1e-2, "
      f"bf16 {worst_program['compute_dtype']:.1e} < 3e-2")
# CHECK-NEXT: programs: tf32 {{.*}} < 1e-2, bf16 {{.*}} < 3e-2

# bf16 and f16 programs: their matmuls read the narrow operands (the casts
# fold into the contraction) and run on tensor cores by default, rounded
# once from the f32 accumulator; within one ulp of the interpreter's.
def ulp(x, bits: int, emin: int):
    """The spacing of a float format with ``bits`` mantissa bits at ``x``."""
    e = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** emin)))
    return 2.0 ** (np.maximum(e, emin) - bits)


for t, dtype, bits, emin in (("bf16", ml_dtypes.bfloat16, 7, -126), ("f16", np.float16, 10, -14)):
    for name in ("ragged", "b_transposed", "batched"):
        text = MATMULS[name][0].replace("xf32>", f"x{t}>")
        args = inputs(gradir.parse(text), rng, dtype)
        interp_args = [a.astype(np.float32) if t == "bf16" else a for a in args]
        want = first(gradir.interpret(gradir.parse(text), "main", *interp_args))
        for chip in (CHIP, "sm_75"):
            module = gradir.parse(text)
            lower_to_nvvm(module.operation, stop_after="kernels", chip=chip)
            lowered = print_module(module)
            (got,) = run(module.operation, "main", *args)
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            assert (diff <= ulp(want.astype(np.float64), bits, emin)).all(), \
                (t, name, chip, diff.max())
            mma = lowered.count("nvvm.mma.sync") > 0
            assert mma == (chip == CHIP), (t, name, chip)
            assert lowered.count("gpu.launch ") == 1, (t, name, chip)   # no cast kernels
    print(t, "programs: mma on sm_80, SIMT on sm_75, one launch each")
# CHECK-NEXT: bf16 programs: mma on sm_80, SIMT on sm_75, one launch each
# CHECK-NEXT: f16 programs: mma on sm_80, SIMT on sm_75, one launch each

# The default stays exact fp32 SIMT: no tensor cores, the SIMT kernel.
text = MATMULS["ragged"][0]
module = gradir.parse(text)
args = inputs(module, rng)
got, kinds, lowered = emulate(text, args)
np.testing.assert_allclose(got, first(gradir.interpret(module, "main", *args)), rtol=1e-5,
                           atol=1e-5)
print("fp32:", "nvvm.mma.sync" in lowered, sorted(kinds))
# CHECK-NEXT: fp32: False ['gemm']

# Refusals: bad values, chips without tensor cores, the CPU target.
for target, opts in (("cuda", {"precision": "fp16"}), ("cuda", {"compute_dtype": "f16"}),
                     ("cuda", {"precision": "tf32", "chip": "sm_75"}),
                     ("cuda", {"compute_dtype": "bf16", "chip": "sm_70"}),
                     ("cpu", {"precision": "high"}), ("cpu", {"precision": "highest"}),
                     ("cpu", {"compute_dtype": "bf16"}),
                     ("cuda", {"sm_count": 0}), ("cuda", {"sm_count": True}),
                     ("cuda", {"sm_count": "132"}), ("cpu", {"sm_count": 108})):
    try:
        gradir.compile(module, target=target, **opts)
        print("compiled", opts)
    except CompileError as err:
        print(f"{target} {opts}: {err}")
# CHECK-NEXT: cuda {'precision': 'fp16'}: precision must be 'fp32' (alias 'highest') or 'tf32' (alias 'high'), not 'fp16'
# CHECK-NEXT: cuda {'compute_dtype': 'f16'}: compute_dtype must be None or 'bf16', not 'f16'
# CHECK-NEXT: cuda {'precision': 'tf32', 'chip': 'sm_75'}: precision 'tf32' runs f32 contractions on TF32 tensor cores, which need chip sm_80 or later, not sm_75
# CHECK-NEXT: cuda {'compute_dtype': 'bf16', 'chip': 'sm_70'}: compute_dtype 'bf16' runs contractions on bf16 tensor cores, which need chip sm_80 or later, not sm_70
# CHECK-NEXT: cpu {'precision': 'high'}: precision='high' and compute_dtype=None: target 'cpu' computes in the program's own types (precision 'fp32', compute_dtype None); these options are for target 'cuda'
# CHECK-NEXT: compiled {'precision': 'highest'}
# CHECK-NEXT: cpu {'compute_dtype': 'bf16'}: precision='fp32' and compute_dtype='bf16': target 'cpu' computes in the program's own types (precision 'fp32', compute_dtype None); these options are for target 'cuda'
# CHECK-NEXT: cuda {'sm_count': 0}: sm_count must be None or a positive integer for target 'cuda', not 0
# CHECK-NEXT: cuda {'sm_count': True}: sm_count must be None or a positive integer for target 'cuda', not True
# CHECK-NEXT: cuda {'sm_count': '132'}: sm_count must be None or a positive integer for target 'cuda', not '132'
# CHECK-NEXT: cpu {'sm_count': 108}: sm_count must be None or a positive integer for target 'cuda', not 108 (target 'cpu')

# RUN: %PYTHON %s | FileCheck %s
# gpu-fuse-generics checked end to end: programs whose generics it merges
# (elementwise chains with multi-use intermediates, independent gradients,
# sibling reductions, a producer moved into a reduction, the pieces of a
# concatenation), their adjoints and the MLP training step, compiled to the
# kernels stage and run by the SIMT emulator (which fails on data races
# between the threads of a kernel) against the reference interpreter.
# Prints the kernels launched per call without and with the pass (the
# small MLP's bias adds also go into their GEMMs' epilogues without it).

import os
import sys

import numpy as np

import gradir
from gradir.conversion.gpu import gpu_fuse_generics
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))
from mlp import build_mlp, differentiate, init_params  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

PROGRAMS = {
    # tanh(x * w + b) with x * w + b and tanh both read by the adjoint
    "dense_tanh": """
func.func @main(%x: tensor<6x5xf32>, %w: tensor<5x7xf32>, %b: tensor<7xf32>) -> tensor<f32> {
  %m = "rlx.matmul"(%x, %w) : (tensor<6x5xf32>, tensor<5x7xf32>) -> tensor<6x7xf32>
  %bb = "rlx.broadcast_to"(%b) : (tensor<7xf32>) -> tensor<6x7xf32>
  %a = "rlx.add"(%m, %bb) : (tensor<6x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  %t = "rlx.tanh"(%a) : (tensor<6x7xf32>) -> tensor<6x7xf32>
  %e = "rlx.exp"(%a) : (tensor<6x7xf32>) -> tensor<6x7xf32>
  %p = "rlx.multiply"(%t, %e) : (tensor<6x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  %s = "rlx.sum"(%p) : (tensor<6x7xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""",
    # independent elementwise gradients and two column sums of one input
    "siblings": """
func.func @main(%x: tensor<9x33xf32>, %y: tensor<9x33xf32>) -> tensor<f32> {
  %a = "rlx.sin"(%x) : (tensor<9x33xf32>) -> tensor<9x33xf32>
  %b = "rlx.exp"(%y) : (tensor<9x33xf32>) -> tensor<9x33xf32>
  %p = "rlx.multiply"(%a, %b) : (tensor<9x33xf32>, tensor<9x33xf32>) -> tensor<9x33xf32>
  %s0 = "rlx.sum"(%p) {axis = array<i64: 0>} : (tensor<9x33xf32>) -> tensor<33xf32>
  %s1 = "rlx.sum"(%a) {axis = array<i64: 0>} : (tensor<9x33xf32>) -> tensor<33xf32>
  %q = "rlx.multiply"(%s0, %s1) : (tensor<33xf32>, tensor<33xf32>) -> tensor<33xf32>
  %r = "rlx.sum"(%q) : (tensor<33xf32>) -> tensor<f32>
  return %r : tensor<f32>
}""",
    # a transposed consumer (loop dims matched up to a permutation)
    "transposed": """
func.func @main(%x: tensor<4x6xf32>, %y: tensor<6x4xf32>) -> tensor<f32> {
  %e = "rlx.exp"(%x) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %t = "rlx.permute_dims"(%e) {axes = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %m = "rlx.multiply"(%t, %y) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %n = "rlx.tanh"(%e) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = "rlx.sum"(%m) : (tensor<6x4xf32>) -> tensor<f32>
  %u = "rlx.sum"(%n) : (tensor<4x6xf32>) -> tensor<f32>
  %r = "rlx.add"(%s, %u) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}""",
    # the pieces of a concatenation (disjoint subviews of one buffer)
    "concat": """
func.func @main(%x: tensor<3x8xf32>, %y: tensor<3x8xf32>, %w: tensor<6x8xf32>) -> tensor<f32> {
  %a = "rlx.exp"(%x) : (tensor<3x8xf32>) -> tensor<3x8xf32>
  %b = "rlx.sin"(%y) : (tensor<3x8xf32>) -> tensor<3x8xf32>
  %c = "rlx.concat"(%a, %b) {axis = array<i64: 0>} : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<6x8xf32>
  %m = "rlx.multiply"(%c, %w) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = "rlx.sum"(%m) : (tensor<6x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""",
}


def compare(module, fn, args, tol=2e-5):
    """Launches per call without and with gpu-fuse-generics; the fused
    program's results against the interpreter."""
    want = gradir.interpret(module, fn, *args)
    counts = []
    for fuse in (False, True):
        saved = gpu_fuse_generics.GpuFuseGenerics.apply
        if not fuse:
            gpu_fuse_generics.GpuFuseGenerics.apply = lambda self, m: None
        try:
            exe = Emulated(module.operation.clone() if hasattr(module, "operation") else module)
            got = exe[fn](*args)
        finally:
            gpu_fuse_generics.GpuFuseGenerics.apply = saved
        counts.append(exe.emulator.last_launches)
        got, exp = (x if isinstance(x, tuple) else (x,) for x in (got, want))
        assert len(got) == len(exp)
        for g, w in zip(got, exp):
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    return counts


rng = np.random.default_rng(0)
for name, text in PROGRAMS.items():
    fn_type = gradir.parse(text).body.operations[0].type
    args = [rng.standard_normal(t.shape).astype(np.float32) for t in fn_type.inputs]
    for fn, module in (("main", gradir.parse(text)), ("main_adjoint", gradient_module(text))):
        before, after = compare(module, fn, args)
        print(f"{name} {fn}: ok, launches {before} -> {after}", "(fewer)" if after < before else
              "(same)" if after == before else "(MORE)")
# CHECK: dense_tanh main: ok
# CHECK: dense_tanh main_adjoint: ok
# CHECK: siblings main: ok, {{.*}} (fewer)
# CHECK: siblings main_adjoint: ok, {{.*}} (fewer)
# CHECK: transposed main: ok
# CHECK: transposed main_adjoint: ok, {{.*}} (fewer)
# CHECK: concat main: ok
# CHECK: concat main_adjoint: ok
# CHECK-NOT: (MORE)

batch, sizes = 37, [50, 33, 20, 7]
module = build_mlp(batch, sizes)
differentiate(module)
x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
labels = rng.integers(0, sizes[-1], batch)
before, after = compare(module, "main_adjoint", [x, labels, *init_params(sizes)], tol=1e-4)
print(f"mlp step: ok, launches {before} -> {after}", "(fewer)" if after < before else
      "(same)" if after == before else "(MORE)")
# CHECK: mlp step: ok
# CHECK-NOT: (MORE)

# RUN: %PYTHON %s | FileCheck %s
# GEMM epilogue fusion (gpu-linalg-to-kernels, kernels/gemm.py): the
# elementwise generic right after a GEMM (a bias add and relu, a residual)
# is applied by the GEMM's stores, not launched on its own.  Dense layers
# relu(x @ W + b) and x @ W + b + r, forward and adjoint, compiled up to the
# kernels stage and run by the SIMT emulator against the reference
# interpreter; the forward is one launch.  A deep K (split-K, atomics)
# keeps its epilogue a kernel of its own.

import os
import sys

import numpy as np

import gradir
import gradir._compat
from gradir.conversion.gpu.launches import launch_breakdown
from gradir.testing import gradient_module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from emulate_helpers import assert_emulated  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

PROGRAMS = {
    "dense_relu": ("""
func.func @main(%x: tensor<32x64xf32>, %w: tensor<64x48xf32>, %b: tensor<48xf32>) -> tensor<f32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
  %z = "rlx.add"(%y, %b) : (tensor<32x48xf32>, tensor<48xf32>) -> tensor<32x48xf32>
  %r = "rlx.relu"(%z) : (tensor<32x48xf32>) -> tensor<32x48xf32>
  %s = "rlx.sum"(%r) : (tensor<32x48xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""", """
func.func @main(%x: tensor<32x64xf32>, %w: tensor<64x48xf32>, %b: tensor<48xf32>) -> tensor<32x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
  %z = "rlx.add"(%y, %b) : (tensor<32x48xf32>, tensor<48xf32>) -> tensor<32x48xf32>
  %r = "rlx.relu"(%z) : (tensor<32x48xf32>) -> tensor<32x48xf32>
  return %r : tensor<32x48xf32>
}"""),
    "dense_residual": ("""
func.func @main(%x: tensor<20x40xf32>, %w: tensor<40x24xf32>, %b: tensor<24xf32>, %res: tensor<20x24xf32>) -> tensor<f32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<20x40xf32>, tensor<40x24xf32>) -> tensor<20x24xf32>
  %z = "rlx.add"(%y, %b) : (tensor<20x24xf32>, tensor<24xf32>) -> tensor<20x24xf32>
  %q = "rlx.add"(%z, %res) : (tensor<20x24xf32>, tensor<20x24xf32>) -> tensor<20x24xf32>
  %t = "rlx.tanh"(%q) : (tensor<20x24xf32>) -> tensor<20x24xf32>
  %s = "rlx.sum"(%t) : (tensor<20x24xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""", """
func.func @main(%x: tensor<20x40xf32>, %w: tensor<40x24xf32>, %b: tensor<24xf32>, %res: tensor<20x24xf32>) -> tensor<20x24xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<20x40xf32>, tensor<40x24xf32>) -> tensor<20x24xf32>
  %z = "rlx.add"(%y, %b) : (tensor<20x24xf32>, tensor<24xf32>) -> tensor<20x24xf32>
  %q = "rlx.add"(%z, %res) : (tensor<20x24xf32>, tensor<20x24xf32>) -> tensor<20x24xf32>
  return %q : tensor<20x24xf32>
}"""),
    "split_k": (None, """
func.func @main(%x: tensor<8x2048xf32>, %w: tensor<2048x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<8x2048xf32>, tensor<2048x16xf32>) -> tensor<8x16xf32>
  %z = "rlx.add"(%y, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = "rlx.relu"(%z) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}"""),
}


def check(module, fn, args):
    exe = assert_emulated(module, fn, args, f"{fn} result", rtol=1e-4, atol=1e-5)
    return launch_breakdown(exe.lowered.operation, fn)


rng = np.random.default_rng(0)
for name, (loss, layer) in PROGRAMS.items():
    module = gradir.parse(layer)
    fn_type = module.body.operations[0].type
    args = [rng.standard_normal(t.shape).astype(np.float32) for t in fn_type.inputs]
    count = check(module, "main", args)
    print(name, "layer:", count["launches"], "launches", sorted(count["kinds"]))
    if loss is not None:
        check(gradient_module(loss), "main_adjoint", args)
        print(name, "adjoint ok")
# CHECK: dense_relu layer: 1 launches ['gemm']
# CHECK: dense_relu adjoint ok
# CHECK: dense_residual layer: 1 launches ['gemm']
# CHECK: dense_residual adjoint ok
# CHECK: split_k layer: {{[0-9]+}} launches ['gemm_splitk', 'map'

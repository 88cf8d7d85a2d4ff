# RUN: %PYTHON %s | FileCheck %s
# Broadcasts the GPU pipeline reads through indexing maps, compiled for the
# GPU (target="cuda" all the way to PTX, and up to the kernels stage for the
# SIMT emulator) with their adjoints, against the reference interpreter:
# - a sum of a broadcast along the reduced dimension (collapse_sum_to of
#   broadcast_to): gpu-fold-transposes keeps that broadcast, since folding it
#   left the reduction loop without an extent (non-invertible indexing maps);
# - rlx.full of a 0-d argument fused into its consumer: the scalar the host
#   would read from device memory is read in the kernel, before the body op
#   that uses it (gpu-linalg-to-kernels).

import os
import sys

import numpy as np

import gradir
from gradir.testing import gradient_module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from emulate_helpers import assert_emulated  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

PROGRAMS = {
    "collapse_sum_of_broadcast": """
func.func @main(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<f32> {
  %b = "rlx.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<4x3xf32>
  %s = "rlx.collapse_sum_to"(%b) : (tensor<4x3xf32>) -> tensor<3xf32>
  %t = "rlx.tanh"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  %m = "rlx.multiply"(%t, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = "rlx.sum"(%m) : (tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}""",
    "square_of_broadcast": """
func.func @main(%x: tensor<2x5xf32>, %y: tensor<2x5xf32>) -> tensor<f32> {
  %bx = "rlx.broadcast_to"(%x) : (tensor<2x5xf32>) -> tensor<4x2x5xf32>
  %by = "rlx.broadcast_to"(%y) : (tensor<2x5xf32>) -> tensor<4x2x5xf32>
  %p = "rlx.multiply"(%bx, %by) : (tensor<4x2x5xf32>, tensor<4x2x5xf32>) -> tensor<4x2x5xf32>
  %s = "rlx.sum"(%p) {axis = array<i64: 0>} : (tensor<4x2x5xf32>) -> tensor<2x5xf32>
  %e = "rlx.exp"(%s) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %r = "rlx.sum"(%e) : (tensor<2x5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}""",
    "sum_of_full_times_x": """
func.func @main(%c: tensor<f32>, %x: tensor<4x3xf32>) -> tensor<f32> {
  %f = "rlx.full"(%c) : (tensor<f32>) -> tensor<4x3xf32>
  %m = "rlx.multiply"(%f, %x) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = "rlx.sum"(%m) : (tensor<4x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""",
    "full_in_a_reduction": """
func.func @main(%c: tensor<f32>, %x: tensor<6x40xf32>) -> tensor<f32> {
  %f = "rlx.full"(%c) : (tensor<f32>) -> tensor<6x40xf32>
  %e = "rlx.exp"(%x) : (tensor<6x40xf32>) -> tensor<6x40xf32>
  %m = "rlx.subtract"(%e, %f) : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  %q = "rlx.multiply"(%m, %m) : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  %s = "rlx.sum"(%q) {axis = array<i64: 1>} : (tensor<6x40xf32>) -> tensor<6xf32>
  %r = "rlx.max"(%s) : (tensor<6xf32>) -> tensor<f32>
  return %r : tensor<f32>
}""",
}

rng = np.random.default_rng(0)
for name, text in PROGRAMS.items():
    fn_type = gradir.parse(text).body.operations[0].type
    args = [rng.standard_normal(t.shape).astype(np.float32) for t in fn_type.inputs]
    for fn, module in (("main", gradir.parse(text)), ("main_adjoint", gradient_module(text))):
        exe = gradir.compile(module, target="cuda", functions=(fn,))
        assert exe.format in ("bin", "isa"), exe.format
        for opt_level in (3, 0):
            assert_emulated(module, fn, args, f"{name} {fn} O{opt_level}", rtol=2e-5,
                            atol=1e-5, opt_level=opt_level)
    print(name, "ok")
# CHECK: collapse_sum_of_broadcast ok
# CHECK: square_of_broadcast ok
# CHECK: sum_of_full_times_x ok
# CHECK: full_in_a_reduction ok

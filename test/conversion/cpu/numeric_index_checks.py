# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_PARALLEL_COMPILE=1 %PYTHON %s | FileCheck %s
# Indices read from an input: rlx.take (mode "fast") and rlx.nll_loss. The
# compiled code (JIT, exported library) and the interpreter agree on every
# in-range index, forward and adjoint; an index out of range is a located
# error in all three (ExecutionError from the compiled code: it clamped the
# index and returned another answer before), never a crash. "clip" and
# "wrap" define every index: no check, the same answers.
# (conversion/cpu/runtime_checks.py, add_index_checks)

import os
import tempfile

import numpy as np

import gradir
from gradir.testing import gradient_module, outcome

# matmuls first, so that GRADIR_PARALLEL_COMPILE=1 cuts the functions in parts
TAKE = """
func.func @main(%x: tensor<5x4xf64>, %w: tensor<4x4xf64>, %i: tensor<2x3xi32>) -> tensor<f64> {
  %a = "rlx.matmul"(%x, %w) : (tensor<5x4xf64>, tensor<4x4xf64>) -> tensor<5x4xf64>
  %b = "rlx.tanh"(%a) : (tensor<5x4xf64>) -> tensor<5x4xf64>
  %c = "rlx.matmul"(%b, %w) : (tensor<5x4xf64>, tensor<4x4xf64>) -> tensor<5x4xf64>
  %t = "rlx.take"(%c, %i) {axis = array<i64: 0>} : (tensor<5x4xf64>, tensor<2x3xi32>) -> tensor<2x3x4xf64>
  %f = "rlx.take"(%c, %i) : (tensor<5x4xf64>, tensor<2x3xi32>) -> tensor<2x3xf64>
  %k = "rlx.take"(%c, %i) {axis = array<i64: 1>, mode = "clip"} : (tensor<5x4xf64>, tensor<2x3xi32>) -> tensor<5x2x3xf64>
  %s = "rlx.sum"(%t) : (tensor<2x3x4xf64>) -> tensor<f64>
  %g = "rlx.sum"(%f) : (tensor<2x3xf64>) -> tensor<f64>
  %h = "rlx.sum"(%k) : (tensor<5x2x3xf64>) -> tensor<f64>
  %y = "rlx.add"(%s, %g) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %z = "rlx.add"(%y, %h) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %z : tensor<f64>
}
"""

NLL = """
func.func @main(%x: tensor<4x3xf64>, %w: tensor<3x3xf64>, %t: tensor<4xi64>) -> tensor<f64> {
  %a = "rlx.matmul"(%x, %w) : (tensor<4x3xf64>, tensor<3x3xf64>) -> tensor<4x3xf64>
  %b = "rlx.tanh"(%a) : (tensor<4x3xf64>) -> tensor<4x3xf64>
  %c = "rlx.matmul"(%b, %w) : (tensor<4x3xf64>, tensor<3x3xf64>) -> tensor<4x3xf64>
  %p = "rlx.log_softmax"(%c) {axis = array<i64: -1>} : (tensor<4x3xf64>) -> tensor<4x3xf64>
  %l = "rlx.nll_loss"(%p, %t) {ignore_index = 2 : i64} : (tensor<4x3xf64>, tensor<4xi64>) -> tensor<f64>
  %n = "rlx.nll_loss"(%p, %t) {reduction = "none", ignore_index = 2 : i64} : (tensor<4x3xf64>, tensor<4xi64>) -> tensor<4xf64>
  %s = "rlx.sum"(%n) : (tensor<4xf64>) -> tensor<f64>
  %y = "rlx.add"(%l, %s) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %y : tensor<f64>
}
"""

rng = np.random.default_rng(0)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def check(name, program, args, cases):
    module = gradient_module(program, wrt=[0, 1])
    exe = gradir.compile(module, cache=False)
    if os.environ.get("GRADIR_PARALLEL_COMPILE") == "1":
        assert getattr(exe, "_plans", None), "the function was not cut in parts"
    with tempfile.TemporaryDirectory() as tmp:
        lib = gradir.runtime.load(exe.export_library(os.path.join(tmp, name + ".so")))
        for label, index in cases:
            for fn in ("main", "main_adjoint"):
                want = outcome(lambda *a: gradir.interpret(module, fn, *a), *args, index)
                for kind, call in (("jit", exe[fn]), ("library", lib[fn])):
                    got = outcome(call, *args, index)
                    if isinstance(want[0], np.ndarray):
                        assert isinstance(got[0], np.ndarray), (label, fn, kind, got)
                        for g, v in zip(got, want):
                            np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-12)
                    else:
                        # the interpreter names numpy's IndexError; the
                        # compiled code the range and the offending index
                        assert isinstance(got[0], str) and got[0] == want[0], (label, fn, got)
                        if fn == "main" and kind == "jit":
                            print(label, "->", got[1])
            print(label, "ok")


@run
def take():
    x, w = rng.normal(size=(5, 4)), rng.normal(size=(4, 4)) * 0.5
    ok = np.array([[0, 4, -5], [2, -1, 3]], np.int32)
    high = np.array([[0, 4, 5], [2, -1, 3]], np.int32)
    low = np.array([[0, 4, 1], [2, -6, 3]], np.int32)
    check("take", TAKE, (x, w), [("in range", ok), ("5", high), ("-6", low)])
# CHECK-LABEL: TEST: take
# CHECK: in range ok
# CHECK: 5 -> 'rlx.take' op index out of range [-5, 5) on axis 0, got 5
# CHECK: 5 ok
# CHECK: -6 -> 'rlx.take' op index out of range [-5, 5) on axis 0, got -6
# CHECK: -6 ok


@run
def take_flat():
    # the flattened input's 20 elements: 5..19 are in range there, not on axis 0
    x, w = rng.normal(size=(5, 4)), rng.normal(size=(4, 4)) * 0.5
    program = TAKE.replace('%t = "rlx.take"(%c, %i) {axis = array<i64: 0>}',
                           '%t0 = "rlx.take"(%c, %i) {axis = array<i64: 0>, mode = "wrap"}')
    program = program.replace("%s = \"rlx.sum\"(%t)", "%s = \"rlx.sum\"(%t0)")
    ok = np.array([[0, 19, -20], [7, -1, 13]], np.int32)
    high = np.array([[0, 19, 20], [7, -1, 13]], np.int32)
    check("flat", program, (x, w), [("in range", ok), ("20", high)])
# CHECK-LABEL: TEST: take_flat
# CHECK: in range ok
# CHECK: 20 -> 'rlx.take' op index out of range [-20, 20) of the flattened input, got 20
# CHECK: 20 ok


@run
def nll_loss():
    x, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 3)) * 0.5
    cases = [("in range", np.array([0, 1, 2, 1])), ("3", np.array([0, 3, 2, 1])),
             ("-1", np.array([0, -1, 2, 1])), ("-100", np.array([-100, 1, 2, 1]))]
    check("nll", NLL, (x, w), cases)
# CHECK-LABEL: TEST: nll_loss
# CHECK: in range ok
# CHECK: 3 -> 'rlx.nll_loss' op target out of range [0, 3), got 3
# CHECK: 3 ok
# CHECK: -1 -> 'rlx.nll_loss' op target out of range [0, 3), got -1
# CHECK: -1 ok
# CHECK: -100 -> 'rlx.nll_loss' op target out of range [0, 3), got -100
# CHECK: -100 ok

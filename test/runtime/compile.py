# RUN: %PYTHON %s | FileCheck %s
# gradir.compile: results equal the interpreter, tuples come back as tuples,
# inputs are left untouched, and bad calls raise ArgumentError naming the
# argument.

import numpy as np

import gradir
from gradir.runtime import ArgumentError
from gradir.runtime.signature import CompileError

SRC = """
func.func @main(%x: tensor<2x3xf32>, %p: tuple<tensor<3xf32>, tensor<3x4xf32>>)
    -> (tuple<tensor<2x4xf32>, tensor<f32>>, tensor<2x3xf32>) {
  %b = "rlx.tuple_get_item"(%p) {index = 0 : i64} : (tuple<tensor<3xf32>, tensor<3x4xf32>>) -> tensor<3xf32>
  %w = "rlx.tuple_get_item"(%p) {index = 1 : i64} : (tuple<tensor<3xf32>, tensor<3x4xf32>>) -> tensor<3x4xf32>
  %h = "rlx.add"(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %m = "rlx.matmul"(%h, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = "rlx.sum"(%m) : (tensor<2x4xf32>) -> tensor<f32>
  %t = "rlx.tuple"(%m, %s) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x4xf32>, tensor<f32>) -> tuple<tensor<2x4xf32>, tensor<f32>>
  return %t, %h : tuple<tensor<2x4xf32>, tensor<f32>>, tensor<2x3xf32>
}
"""


def run(fn):
    print(f"TEST: {fn.__name__}")
    fn()
    return fn


module = gradir.parse(SRC)
exe = gradir.compile(module)
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 3)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
w = rng.standard_normal((3, 4)).astype(np.float32)


@run
def results_match_interpreter():
    x0, b0, w0 = x.copy(), b.copy(), w.copy()
    (m, s), h = exe["main"](x, (b, w))
    (em, es), eh = gradir.interpret(module, "main", x, (b, w))
    assert isinstance(m, np.ndarray) and m.dtype == np.float32 and m.shape == (2, 4)
    np.testing.assert_allclose(m, em, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, es, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h, eh, rtol=1e-6)
    assert np.array_equal(x, x0) and np.array_equal(b, b0) and np.array_equal(w, w0)
    print("ok", exe.functions)
# CHECK-LABEL: TEST: results_match_interpreter
# CHECK: ok ['main']


@run
def non_contiguous_inputs_are_accepted():
    xt = np.asfortranarray(x)
    (m, _), _ = exe["main"](xt, (b, w))
    np.testing.assert_allclose(m, (x + b) @ w, rtol=1e-5, atol=1e-6)
    print("ok")
# CHECK-LABEL: TEST: non_contiguous_inputs_are_accepted
# CHECK: ok


@run
def bad_calls():
    f = exe["main"]
    for args in [(x,), (x.astype(np.float64), (b, w)), (x.T, (b, w)), (x, b),
                 (x, (b, w, w)), ("nope", (b, w)), (x, (b, w.reshape(4, 3)))]:
        try:
            f(*args)
        except ArgumentError as err:
            print(err)
        else:
            raise AssertionError("no error")
    try:
        exe["missing"]
    except KeyError as err:
        print(err.args[0])
# CHECK-LABEL: TEST: bad_calls
# CHECK-NEXT: @main takes 2 arguments, got 1
# CHECK-NEXT: @main: argument 0 must be a float32 array of shape (2, 3), got a float64 array (convert it with .astype(np.float32))
# CHECK-NEXT: @main: argument 0 must be a float32 array of shape (2, 3), got shape (3, 2)
# CHECK-NEXT: @main: argument 1 must be a tuple of 2 values, got ndarray
# CHECK-NEXT: @main: argument 1 must be a tuple of 2 values, got a tuple of 3
# CHECK-NEXT: @main: argument 0 must be a float32 array of shape (2, 3), got str
# CHECK-NEXT: @main: argument 1[1] must be a float32 array of shape (3, 4), got shape (4, 3)
# CHECK-NEXT: no public function @missing; compiled functions: main


@run
def refusals():
    for src in ["func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n  return %x : tensor<?xf32>\n}",
                "func.func private @decl(%x: tensor<2xf32>) -> tensor<2xf32>"]:
        try:
            gradir.compile(gradir.parse(src, source_name="bad.mlir"))
        except CompileError as err:
            print(err)
    try:
        gradir.compile(module, target="tpu")
    except CompileError as err:
        print(err)
    for level in (99, -1, "3", True):
        try:
            gradir.compile(module, opt_level=level)
        except CompileError as err:
            print(err)
    try:
        gradir.compile(SRC)
    except TypeError as err:
        print(err)
# CHECK-LABEL: TEST: refusals
# CHECK-NEXT: cannot compile @main: argument 0 has type tensor<?xf32>; only statically shaped tensors (and tuples of them) cross the numpy boundary
# CHECK-NEXT: the module has no public function with a body to compile
# CHECK-NEXT: unknown target 'tpu' (expected one of: cpu, cuda)
# CHECK-NEXT: opt_level must be an integer from 0 to 3, not 99
# CHECK-NEXT: opt_level must be an integer from 0 to 3, not -1
# CHECK-NEXT: opt_level must be an integer from 0 to 3, not '3'
# CHECK-NEXT: opt_level must be an integer from 0 to 3, not True
# CHECK-NEXT: gradir.compile expects an MLIR module (gradir.parse(text)), not str


@run
def gradient_program_runs():
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main mode=vjp})")
    exe2 = gradir.compile(module)
    cot = ((np.ones((2, 4), np.float32), np.float32(2.0)), np.ones((2, 3), np.float32))
    got = exe2["main_vjp"](x, (b, w), *cot)
    want = gradir.interpret(module, "main_vjp", x, (b, w), *cot)

    def flat(v):
        return [a for t in v for a in flat(t)] if isinstance(v, tuple) else [v]
    for g, e in zip(flat(got), flat(want)):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    print("ok", len(flat(got)))
# CHECK-LABEL: TEST: gradient_program_runs
# CHECK: ok 6

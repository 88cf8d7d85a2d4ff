# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_PARALLEL_COMPILE=1 %PYTHON %s | FileCheck %s
# An scf.for step computed at run time: the compiled code (JIT, exported
# library) and the interpreter agree on every step, forward and adjoint; a
# step <= 0 is the same located error in all three (ExecutionError from the
# compiled code, which runs no trip of the loop), never a crash (a step of 0
# killed the process with SIGSEGV in the adjoint).  Constant steps <= 0:
# test/dialects/scf/invalid.mlir.

import os
import tempfile

import numpy as np

import gradir
from gradir.interp import InterpreterError
from gradir.testing import gradient_module, outcome

# The step is an input; the loop is nested in another one (the inner loop's
# step is checked on each outer trip) and comes after matmuls, so that
# GRADIR_PARALLEL_COMPILE=1 cuts the function in parts.
PROGRAM = """
func.func @main(%x: tensor<4x4xf64>, %w: tensor<4x4xf64>, %n: tensor<i64>) -> tensor<f64> {
  %a = "rlx.matmul"(%x, %w) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %b = "rlx.tanh"(%a) : (tensor<4x4xf64>) -> tensor<4x4xf64>
  %c = "rlx.matmul"(%b, %w) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%g = %c) -> (tensor<4x4xf64>) {
    %e = tensor.extract %n[] : tensor<i64>
    %s = arith.index_cast %e : i64 to index
    %q = scf.for %i = %c1 to %c7 step %s iter_args(%h = %g) -> (tensor<4x4xf64>) {
      %m = "rlx.matmul"(%h, %w) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
      %t = "rlx.sin"(%m) : (tensor<4x4xf64>) -> tensor<4x4xf64>
      scf.yield %t : tensor<4x4xf64>
    }
    scf.yield %q : tensor<4x4xf64>
  }
  %o = "rlx.multiply"(%r, %r) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %y = "rlx.sum"(%o) : (tensor<4x4xf64>) -> tensor<f64>
  return %y : tensor<f64>
}
"""
LOOP_LINE = next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if "step %s" in line)

rng = np.random.default_rng(0)
x, w = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.5


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


@run
def steps():
    module = gradient_module(PROGRAM)
    exe = gradir.compile(module, cache=False)
    if os.environ.get("GRADIR_PARALLEL_COMPILE") == "1":
        assert getattr(exe, "_plans", None), "the function was not cut in parts"
    with tempfile.TemporaryDirectory() as tmp:
        lib = gradir.runtime.load(exe.export_library(os.path.join(tmp, "steps.so")))
        for fn in ("main", "main_adjoint"):
            for step in (1, 2, 5, 9, 0, -1, -4):
                args = (x, w, np.array(step))
                want = outcome(lambda *a: gradir.interpret(module, fn, *a), *args)
                for where, table in (("jit", exe), ("library", lib)):
                    got = outcome(table[fn], *args)
                    if isinstance(want[0], str):
                        assert got == want, (fn, step, where, got, want)
                    else:
                        assert len(got) == len(want), (fn, step, where)
                        for g, v in zip(got, want):
                            np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-14)
                if isinstance(want[0], str):
                    print(fn, step, want[0].rsplit(":", 2)[-2] == str(LOOP_LINE), want[1])
                else:
                    print(fn, step, "same results")
            # a failed call leaves nothing behind: the next one succeeds
            assert outcome(exe[fn], x, w, np.array(3))[0].shape == ()
# CHECK-LABEL: TEST: steps
# CHECK: main 1 same results
# CHECK: main 2 same results
# CHECK: main 5 same results
# CHECK: main 9 same results
# CHECK: main 0 True 'scf.for' op step must be positive, got 0
# CHECK: main -1 True 'scf.for' op step must be positive, got -1
# CHECK: main -4 True 'scf.for' op step must be positive, got -4
# CHECK: main_adjoint 1 same results
# CHECK: main_adjoint 2 same results
# CHECK: main_adjoint 5 same results
# CHECK: main_adjoint 9 same results
# CHECK: main_adjoint 0 True 'scf.for' op step must be positive, got 0
# CHECK: main_adjoint -1 True 'scf.for' op step must be positive, got -1
# CHECK: main_adjoint -4 True 'scf.for' op step must be positive, got -4


@run
def threads():
    # ExecutionError is per calling thread: a failing call in one thread is
    # not reported by another's
    from concurrent.futures import ThreadPoolExecutor
    module = gradient_module(PROGRAM)
    exe = gradir.compile(module, cache=False)
    want = gradir.interpret(module, "main_adjoint", x, w, np.array(2))

    def call(k):
        return outcome(exe["main_adjoint"], x, w, np.array(2 if k % 2 else 0))

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(call, range(64)))
    for k, got in enumerate(results):
        if k % 2:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-14)
        else:
            assert got[1] == "'scf.for' op step must be positive, got 0", got
    print("threads: each call its own outcome")
# CHECK-LABEL: TEST: threads
# CHECK: threads: each call its own outcome


INTEGER_LOOP = """
func.func @main(%x: tensor<3xf64>, %n: tensor<iN>) -> tensor<f64> {
  %c1 = arith.constant 1 : iN
  %c7 = arith.constant 7 : iN
  %s = tensor.extract %n[] : tensor<iN>
  %r = scf.for %i = %c1 to %c7 step %s iter_args(%h = %x) -> (tensor<3xf64>) : iN {
    %m = "rlx.sin"(%h) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
  %q = "rlx.sum"(%r) : (tensor<3xf64>) -> tensor<f64>
  return %q : tensor<f64>
}
"""


@run
def integer_loops():
    # scf.for ... : i32 / i64 (the step is checked in its own type)
    for width, dtype in ((32, np.int32), (64, np.int64)):
        module = gradir.parse(INTEGER_LOOP.replace("iN", f"i{width}"))
        exe = gradir.compile(module, cache=False)
        for step in (2, 0, -7):
            args = (x[0, :3], np.array(step, dtype))
            got = outcome(exe["main"], *args)
            want = outcome(lambda *a: gradir.interpret(module, "main", *a), *args)
            if isinstance(want[0], str):
                assert got == want, (width, step, got, want)
                print(f"i{width}", step, want[1])
            else:
                np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
                print(f"i{width}", step, "same results")
# CHECK-LABEL: TEST: integer_loops
# CHECK-NEXT: i32 2 same results
# CHECK-NEXT: i32 0 'scf.for' op step must be positive, got 0
# CHECK-NEXT: i32 -7 'scf.for' op step must be positive, got -7
# CHECK-NEXT: i64 2 same results
# CHECK-NEXT: i64 0 'scf.for' op step must be positive, got 0
# CHECK-NEXT: i64 -7 'scf.for' op step must be positive, got -7


@run
def constant_steps():
    # gradir.compile (which does not run rlx-verify) refuses a constant step
    # <= 0 at the loop, as rlx-verify and the interpreter do; so does
    # gradir.interpret
    from gradir.runtime.signature import CompileError
    for step in (0, -2):
        text = PROGRAM.replace("%s = arith.index_cast %e : i64 to index",
                               f"%s = arith.constant {step} : index")
        module = gradir.parse(text)
        try:
            gradir.compile(module, cache=False)
        except CompileError as err:
            print("compile:", str(err).splitlines()[0].split(":", 1)[1])
        try:
            gradir.interpret(module, "main", x, w, np.array(1))
        except InterpreterError as err:
            print("interpret:", str(err).split(":", 1)[1])
# CHECK-LABEL: TEST: constant_steps
# CHECK-NEXT: compile: [[LINE:[0-9]+]]:{{[0-9]+}}: error: 'scf.for' op step must be positive, got 0
# CHECK-NEXT: interpret: [[LINE]]:{{[0-9]+}}: 'scf.for' op step must be positive, got 0
# CHECK-NEXT: compile: [[LINE]]:{{[0-9]+}}: error: 'scf.for' op step must be positive, got -2
# CHECK-NEXT: interpret: [[LINE]]:{{[0-9]+}}: 'scf.for' op step must be positive, got -2

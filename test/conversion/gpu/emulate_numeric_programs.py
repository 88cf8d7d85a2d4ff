# RUN: %PYTHON %s | FileCheck %s
# The whole programs of the numeric conversion suites that are not
# numeric_helpers.Suite cases, compiled for the GPU (gradir.compile
# (target="cuda"): kernels to PTX, no GPU needed) and run by the SIMT
# emulator against the reference interpreter: every program of
# numeric_threads (MLP, convnet, reductions, batch matmul, odd packed
# matmuls, transposed rhs operands, long elementwise chains, zero-size
# tensors; their gradients) with that test's tolerances (oracle.compare).
# Pools (numeric_pool_kernels) and long sums (numeric_sums):
# emulate_pools_sums.py.

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import definitions, emulated  # noqa: E402

import gradir  # noqa: E402
from gradir.testing.oracle import compare  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

T = definitions(os.path.join(HERE, "..", "cpu", "numeric_threads.py"))
rng = np.random.default_rng(0)


def gradient(module):
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
    return module


def typed(text, t):
    return gradir.parse(text.replace("xT>", f"x{t}>").replace("<T>", f"<{t}>"))


def check(name, module, fn, args):
    width = 4 if any(a.dtype == np.float32 for a in args) else 8
    try:
        exe = emulated(module)
        got = exe[fn](*args)
        got = got if isinstance(got, tuple) else (got,)
        problems = compare(got, tuple(gradir.interpret(module, fn, *args)), name, width)
        result = "ok" if not problems else "FAIL " + "; ".join(problems)
        print(f"{name}: {result}, {exe.emulator.last_launches} launches", flush=True)
    except Exception as err:     # the next programs still run
        print(f"{name}: FAIL {type(err).__name__}: {str(err).splitlines()[0]}", flush=True)


check("mlp64 f32 gradient", gradient(T.mlp_module(64)), "main_adjoint",
      T.mlp_args(64, np.float32))
check("mlp256 f64 gradient", gradient(T.mlp_module(256, "f64")), "main_adjoint",
      T.mlp_args(256, np.float64))
for t, dt in (("f32", np.float32), ("f64", np.float64)):
    check(f"convnet {t} gradient", gradient(typed(T.CONVNET, t)), "main_adjoint",
          T.convnet_args(dt))
check("reductions f32", gradir.parse(T.REDUCE), "main",
      [rng.uniform(0, 1, 1000003).astype(np.float32),
       rng.standard_normal((300, 1001)).astype(np.float32)])
check("batch matmul f64 gradient", gradient(gradir.parse(T.BMM)), "main_adjoint",
      [rng.standard_normal((6, 97, 131)), rng.standard_normal((6, 131, 75)),
       rng.standard_normal((700, 900))])
check("packed odd matmul f32 gradient", gradient(gradir.parse(T.PACKED)), "main_adjoint",
      [rng.uniform(0, 0.1, (419, 301)).astype(np.float32),
       rng.uniform(0, 0.1, (301, 333)).astype(np.float32)])
check("zero-size f64/f32 gradient", gradient(gradir.parse(T.EMPTY)), "main_adjoint",
      [np.zeros((0, 3)), np.zeros((3, 0), np.float32)])
check("packed odd matmul f64 gradient", gradient(gradir.parse(T.PACKED_F64)), "main_adjoint",
      [rng.uniform(0, 0.1, (400, 400)), rng.uniform(0, 0.1, (400, 67)),
       rng.uniform(0, 0.1, (67, 20))])
for t, dt in (("f32", np.float32), ("f64", np.float64)):
    check(f"transposed rhs {t}", typed(T.RHS_T, t), "main", T.rhs_t_args(dt))
check("elementwise f32/f64", gradir.parse(T.ELEMENTWISE), "main",
      [rng.uniform(-3, 3, 1000003).astype(np.float32), rng.uniform(-3, 3, (300, 1001))])
# CHECK: mlp64 f32 gradient: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: mlp256 f64 gradient: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: convnet f32 gradient: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: convnet f64 gradient: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: reductions f32: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: batch matmul f64 gradient: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: packed odd matmul f32 gradient: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: zero-size f64/f32 gradient: ok, {{[0-9]+}} launches
# CHECK-NEXT: packed odd matmul f64 gradient: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: transposed rhs f32: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: transposed rhs f64: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: elementwise f32/f64: ok, {{[1-9][0-9]*}} launches

# RUN: %PYTHON %s | FileCheck %s
# Compiled (rlx-to-linalg + the CPU pipeline) against the reference
# interpreter: unary, binary (with broadcasting), compare, where, astype,
# creation ops, grad markers and matmul, in f32 and f64 (a few in f16).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, bools, ints, op, rand, run, short  # noqa: E402

from gradir.dialects.ops import BINARY, COMPARE, UNARY  # noqa: E402  (read from the IRDL file)

POSITIVE = {"log", "sqrt", "rsqrt"}
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)),
          ((2, 1, 4), (3, 1)), ((5,), ())]


@run
def test_unary_binary():
    s = Suite("elementwise")
    for dt in FLOATS:
        for name in UNARY:
            low = 0.05 if name in POSITIVE else -4.0
            x = rand((3, 4), dt, low, 4.0)
            s.case(f"{name}_{short(dt)}", lambda a, n=name: op(f"rlx.{n}", a), x)
        x = rand((), dt, -3.0, 3.0)
        s.case(f"sigmoid_0d_{short(dt)}", lambda a: op("rlx.sigmoid", a), x)
        # sigmoid far in both tails stays finite and accurate
        s.case(f"sigmoid_tails_{short(dt)}", lambda a: op("rlx.sigmoid", a),
               np.array([-200.0, -30.0, 0.0, 30.0, 200.0], dtype=dt))
        for name in BINARY:
            for sa, sb in SHAPES:
                lo = 0.1 if name in ("power", "divide") else -3.0
                a, b = rand(sa, dt, lo, 3.0), rand(sb, dt, lo, 3.0)
                s.case(f"{name}_{sa}_{sb}_{short(dt)}",
                       lambda x, y, n=name: op(f"rlx.{n}", x, y), a, b)
        nan = np.array([np.nan, 1.0, -1.0, np.nan], dtype=dt)
        s.case(f"maximum_nan_{short(dt)}", lambda x, y: op("rlx.maximum", x, y),
               nan, np.array([0.0, np.nan, 2.0, 3.0], dtype=dt))
        s.case(f"minimum_nan_{short(dt)}", lambda x, y: op("rlx.minimum", x, y),
               nan, np.array([0.0, np.nan, 2.0, 3.0], dtype=dt))
    s.case("chain_f32", lambda a, b: op("rlx.tanh", op("rlx.multiply",
                                                       op("rlx.add", a, b), b)),
           rand((4, 6), np.float32), rand((6,), np.float32))
    for name in ("add", "exp", "sigmoid", "divide"):
        args = [rand((3, 4), np.float16, 0.1, 2.0)] * (2 if name in BINARY else 1)
        s.case(f"{name}_f16", lambda *a, n=name: op(f"rlx.{n}", *a), *args)
    s.run()


@run
def test_compare_where_astype():
    s = Suite("compare/where/astype")
    for name in COMPARE:
        for dt in FLOATS + (np.int32, np.int64):
            a = rand((3, 4), dt, -2, 2) if dt in FLOATS else ints((3, 4), 3, dt, -1)
            b = rand((4,), dt, -2, 2) if dt in FLOATS else ints((4,), 3, dt, -1)
            b[0] = a[0, 0]
            s.case(f"{name}_{short(dt)}", lambda x, y, n=name: op(f"rlx.{n}", x, y), a, b)
        s.case(f"{name}_i1", lambda x, y, n=name: op(f"rlx.{n}", x, y),
               bools((2, 3)), bools((2, 3)))
        s.case(f"{name}_nan", lambda x, y, n=name: op(f"rlx.{n}", x, y),
               np.array([np.nan, 1.0, np.nan]), np.array([np.nan, np.nan, 0.0]))
    for dt in FLOATS + (np.int64, np.bool_):
        if dt in FLOATS:
            a, b = rand((4,), dt), rand((3, 1), dt)
        elif dt is np.bool_:
            a, b = bools((4,)), bools((3, 1))
        else:
            a, b = ints((4,), 9, dt), ints((3, 1), 9, dt)
        s.case(f"where_{short(dt)}", lambda c, x, y: op("rlx.where", c, x, y),
               bools((3, 4)), a, b)
    s.case("where_0d_cond", lambda c, x, y: op("rlx.where", c, x, y),
           np.array(True), rand((2, 3)), rand((3,)))
    values = np.array([-2.7, -1.5, -0.5, 0.0, 0.4, 1.5, 2.5, 1e3])
    pairs = [(np.float64, np.float32), (np.float32, np.float64), (np.float64, np.int32),
             (np.float32, np.int64), (np.int64, np.float64), (np.int32, np.float32),
             (np.int64, np.int32), (np.int32, np.int64), (np.bool_, np.float32),
             (np.float64, np.bool_), (np.int64, np.bool_), (np.bool_, np.int64),
             (np.float32, np.float16), (np.float16, np.float64)]
    for src, dst in pairs:
        x = values.astype(src) if src is not np.bool_ else values > 0
        if src is np.float64 and dst is np.bool_:
            x = np.array([0.0, -0.0, np.nan, 1.0, -3.0])
        s.case(f"astype_{short(src)}_{short(dst)}",
               lambda a, d=dst: op("rlx.astype", a, result=(a.type.shape, d)), x)
    s.run()


@run
def test_create_markers():
    s = Suite("create")
    for dt in FLOATS + (np.int32, np.int64, np.bool_):
        s.case(f"zeros_{short(dt)}", lambda a, d=dt: op("rlx.add", a, op(
            "rlx.zeros", result=((2, 3), d))) if d in FLOATS else op("rlx.zeros", result=((2, 3), d)),
            rand((2, 3), dt) if dt in FLOATS else rand((1,)))
        s.case(f"ones_{short(dt)}", lambda a, d=dt: op("rlx.ones", result=((3,), d)), rand((1,)))
        s.case(f"zeros_like_{short(dt)}", lambda a: op("rlx.zeros_like", a),
               rand((2, 2), dt) if dt in FLOATS else ints((2, 2), 2, dt) if dt is not np.bool_
               else bools((2, 2)))
        s.case(f"ones_like_{short(dt)}", lambda a: op("rlx.ones_like", a),
               rand((2, 2), dt) if dt in FLOATS else ints((2, 2), 2, dt) if dt is not np.bool_
               else bools((2, 2)))
    for src, dst in [(np.float64, np.float32), (np.float32, np.float32), (np.float64, np.int32),
                     (np.int64, np.float64), (np.int32, np.bool_)]:
        fill = np.array(-2.75).astype(src) if src is not np.int32 else np.array(3, np.int32)
        s.case(f"full_{short(src)}_{short(dst)}",
               lambda f, d=dst: op("rlx.full", f, result=((2, 3), d)), fill)
    for name in ("grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad"):
        s.case(name, lambda a, n=name: op("rlx.exp", op(n, a)), rand((3,)))
    s.run()


@run
def test_matmul():
    s = Suite("matmul")
    shapes = [((4, 5), (5, 3)), ((5,), (5, 3)), ((4, 5), (5,)), ((5,), (5,)),
              ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
              ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((1, 3, 4), (2, 4, 5)),
              ((3, 4), (1, 4, 5)), ((33, 70), (70, 65)),
              # K blocks of 256 with a partial last block; M, N padded
              ((17, 300), (300, 45)), ((2, 9, 520), (2, 520, 33)), ((64, 512), (512, 64))]
    for dt in FLOATS:
        for sa, sb in shapes:
            # f32 sums of K products agree to about K * eps (summation order)
            k = sa[-1]
            atol = 1e-6 * k if dt is np.float32 else None
            s.case(f"matmul_{sa}_{sb}_{short(dt)}", lambda a, b: op("rlx.matmul", a, b),
                   rand(sa, dt), rand(sb, dt), atol=atol)
    s.case("matmul_f16", lambda a, b: op("rlx.matmul", a, b),
           rand((4, 8), np.float16), rand((8, 3), np.float16), rtol=5e-3, atol=5e-3)
    s.run()

# CHECK-LABEL: TEST: test_unary_binary
# CHECK: ok gelu_f32
# CHECK: ok power_(2, 1, 4)_(3, 1)_f64
# CHECK: elementwise: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_compare_where_astype
# CHECK: ok less_equal_i1
# CHECK: ok where_0d_cond
# CHECK: ok astype_f64_bool
# CHECK: compare/where/astype: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_create_markers
# CHECK: ok full_int32_bool
# CHECK: create: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_matmul
# CHECK: ok matmul_(2, 1, 3, 4)_(5, 4, 2)_f64
# CHECK: matmul: all {{[0-9]+}} cases match the interpreter

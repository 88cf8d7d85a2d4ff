# RUN: %PYTHON %s | FileCheck %s
# rlx-collapse-elementwise: elementwise loops over short NCHW rows (8x8,
# 4x4, 7x7, 16x16) with per-channel operands (1xCx1x1, (0, d1, 0, 0))
# collapsed into long rows and vectorized: against the reference interpreter
# in f32 and f64 (forward and a batch norm's gradient), results bitwise the
# same from call to call and at 2 threads.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short  # noqa: E402

import gradir  # noqa: E402

SHAPES = ((8, 16, 8, 8), (4, 8, 4, 4), (5, 3, 7, 7), (4, 8, 16, 16), (3, 5, 1, 9))
AXES = [0, 2, 3]


def name(shape):
    return "x".join(map(str, shape))


def scale_shift(a, g, b):
    """(a - g) / (g * g + 1) + b * a: per-channel operands read per element."""
    d = op("rlx.divide", op("rlx.subtract", a, g),
           op("rlx.add", op("rlx.multiply", g, g), op("rlx.ones_like", g)))
    return op("rlx.add", d, op("rlx.multiply", b, a))


def batch_norm(a, g, b, eps):
    mean = op("rlx.mean", a, axis=AXES, keepdims=True)
    var = op("rlx.variance", a, axis=AXES, keepdims=True)
    y = op("rlx.multiply", op("rlx.subtract", a, mean), op("rlx.rsqrt", op("rlx.add", var, eps)))
    y = op("rlx.add", op("rlx.multiply", y, g), b)
    return op("rlx.sum", op("rlx.multiply", op("rlx.relu", y), a))


def channels(shape, dt, low=-1.0, high=1.0):
    return rand((1, shape[1], 1, 1), dt, low, high)


@run
def test_against_interpreter():
    s = Suite("collapsed elementwise")
    for dt in FLOATS:
        for shape in SHAPES:
            s.case(f"scale_shift_{name(shape)}_{short(dt)}", scale_shift, rand(shape, dt),
                   channels(shape, dt), channels(shape, dt))
        # a per-image operand (N x 1 x 1 x 1) and a per-row one (1 x 1 x H x 1)
        s.case(f"per_image_{short(dt)}", lambda a, b: op("rlx.multiply", a, b),
               rand((6, 4, 8, 8), dt), rand((6, 1, 1, 1), dt))
        s.case(f"per_row_{short(dt)}", lambda a, b: op("rlx.subtract", a, b),
               rand((6, 4, 8, 8), dt), rand((1, 1, 8, 1), dt))
    s.run()


@run
def test_batch_norm_gradient():
    s = Suite("batch norm gradient", gradient=True)
    for dt in FLOATS:
        for shape in SHAPES:
            s.case(f"batch_norm_{name(shape)}_{short(dt)}", batch_norm, rand(shape, dt),
                   channels(shape, dt, 0.5, 1.5), channels(shape, dt), np.array(1e-5, dt))
    s.run()


@run
def test_threads():
    shape = (32, 64, 8, 8)
    s = Suite("one")
    s.case("f", scale_shift, np.zeros(shape, np.float32), np.zeros((1, 64, 1, 1), np.float32),
           np.zeros((1, 64, 1, 1), np.float32))
    args = (rand(shape, np.float32), rand((1, 64, 1, 1), np.float32),
            rand((1, 64, 1, 1), np.float32))
    one = gradir.compile(s.module(), cache=False)["case0"]
    two = gradir.compile(s.module(), cache=False, threads=2)["case0"]
    first = one(*args)
    print("bitwise the same across calls:", np.array_equal(first, one(*args)))
    print("bitwise the same at 2 threads:", np.array_equal(first, two(*args)))

# CHECK-LABEL: TEST: test_against_interpreter
# CHECK: ok scale_shift_8x16x8x8_f32
# CHECK: ok scale_shift_5x3x7x7_f64
# CHECK: ok per_row_f64
# CHECK: collapsed elementwise: all 14 cases match the interpreter
# CHECK-LABEL: TEST: test_batch_norm_gradient
# CHECK: batch norm gradient: all 10 cases match the interpreter
# CHECK-LABEL: TEST: test_threads
# CHECK: bitwise the same across calls: True
# CHECK: bitwise the same at 2 threads: True

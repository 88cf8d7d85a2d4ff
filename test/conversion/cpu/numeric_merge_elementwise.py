# RUN: %PYTHON %s | FileCheck %s
# rlx-merge-elementwise: elementwise values that several ops read (batch
# norm's x - mean, its output before relu, relu's output) computed in one
# loop with their consumers: against the reference interpreter in f32 and
# f64 (forward chains with every value returned, chains whose values feed a
# reduction, a batch norm's gradient over 32x32, 16x16, 8x8 and ragged
# images), results bitwise the same from call to call, at 2 threads, and as
# without the pass (the same operations per element).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.cpu import pipeline  # noqa: E402

SHAPES = ((4, 8, 32, 32), (8, 16, 16, 16), (8, 16, 8, 8), (5, 3, 7, 9))
AXES = [0, 2, 3]


def name(shape):
    return "x".join(map(str, shape))


def chain(a, m, s, b):
    """x - m, (x - m) * s + b and relu of it, all returned."""
    xc = op("rlx.subtract", a, m)
    y = op("rlx.add", op("rlx.multiply", xc, s), b)
    return xc, y, op("rlx.relu", y)


def chain_sum(a, m, s, b):
    """The chain's values read again by a reduction and a product."""
    xc, y, r = chain(a, m, s, b)
    return op("rlx.sum", op("rlx.multiply", r, xc)), op("rlx.multiply", y, y)


def batch_norm(a, g, b, eps):
    mean = op("rlx.mean", a, axis=AXES, keepdims=True)
    var = op("rlx.variance", a, axis=AXES, keepdims=True)
    s = op("rlx.multiply", op("rlx.rsqrt", op("rlx.add", var, eps)), g)
    y = op("rlx.add", op("rlx.multiply", op("rlx.subtract", a, mean), s), b)
    return op("rlx.sum", op("rlx.multiply", op("rlx.relu", y), a))


def channels(shape, dt, low=-1.0, high=1.0):
    return rand((1, shape[1], 1, 1), dt, low, high)


@run
def test_against_interpreter():
    s = Suite("merged elementwise")
    for dt in FLOATS:
        for shape in SHAPES:
            args = (rand(shape, dt), channels(shape, dt), channels(shape, dt, 0.5, 1.5),
                    channels(shape, dt))
            s.case(f"chain_{name(shape)}_{short(dt)}", chain, *args)
            s.case(f"chain_sum_{name(shape)}_{short(dt)}", chain_sum, *args)
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
def test_same_bits():
    """At 1 and 2 threads, call to call, and with the pass left out."""
    shape = (8, 16, 8, 8)
    s = Suite("one")
    zeros = [np.zeros(shape, np.float32)] + [np.zeros((1, 16, 1, 1), np.float32)] * 3
    s.case("f", chain_sum, *zeros)
    args = (rand(shape, np.float32), channels(shape, np.float32),
            channels(shape, np.float32, 0.5, 1.5), channels(shape, np.float32))
    one = gradir.compile(s.module(), cache=False)["case0"]
    two = gradir.compile(s.module(), cache=False, threads=2)["case0"]
    original = pipeline.linalg_to_llvm_pipeline

    def without(*a, **k):
        return original(*a, **k).replace("rlx-merge-elementwise,", "")
    pipeline.linalg_to_llvm_pipeline = without
    try:
        apart = gradir.compile(s.module(), cache=False)["case0"]
    finally:
        pipeline.linalg_to_llvm_pipeline = original
    first = one(*args)

    def same(x, y):
        return all(np.array_equal(u, v) for u, v in zip(x, y))
    print("bitwise the same across calls:", same(first, one(*args)))
    print("bitwise the same at 2 threads:", same(first, two(*args)))
    print("bitwise the same without the pass:", same(first, apart(*args)))

# CHECK-LABEL: TEST: test_against_interpreter
# CHECK: ok chain_4x8x32x32_f32
# CHECK: ok chain_sum_8x16x8x8_f32
# CHECK: ok chain_5x3x7x9_f64
# CHECK: merged elementwise: all 16 cases match the interpreter
# CHECK-LABEL: TEST: test_batch_norm_gradient
# CHECK: batch norm gradient: all 8 cases match the interpreter
# CHECK-LABEL: TEST: test_same_bits
# CHECK: bitwise the same across calls: True
# CHECK: bitwise the same at 2 threads: True
# CHECK: bitwise the same without the pass: True

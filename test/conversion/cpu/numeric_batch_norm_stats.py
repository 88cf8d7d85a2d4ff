# RUN: %PYTHON %s | FileCheck %s
# Batch norm's statistics (rlx.mean and rlx.variance over (0, 2, 3) of an
# NCHW tensor) compiled in one sweep over x (rlx-to-linalg{sum-block=256}:
# shifted sums per position, merged per channel; reduce.py, "Mean and
# variance in one sweep"): against the reference interpreter in f32 and f64,
# ragged shapes, ranks 3 to 5, channels of a constant (variance exactly 0)
# and of 1e4 + N(0, 1) in f32, where an unshifted sum of squares would
# cancel (the variance vs float64 within 2e-6, torch.var's order of error,
# where the two sweeps before gave 3e-6 to 9e-6); a batch norm forward and
# its gradient through the same statistics; results bitwise the same from
# compile to compile, call to call and at 2 threads.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short  # noqa: E402

import gradir  # noqa: E402

AXES = [0, 2, 3]
rng = np.random.default_rng(7)


def stats(a, keep=True):
    return (op("rlx.mean", a, axis=AXES, keepdims=keep),
            op("rlx.variance", a, axis=AXES, keepdims=keep))


def batch_norm(a, g, b, eps):
    """relu((x - mean) * rsqrt(var + eps) * gamma + beta), summed against x
    (a 0-d target for the gradient suite)."""
    mean, var = stats(a)
    y = op("rlx.multiply", op("rlx.subtract", a, mean), op("rlx.rsqrt", op("rlx.add", var, eps)))
    y = op("rlx.add", op("rlx.multiply", y, g), b)
    return op("rlx.sum", op("rlx.multiply", op("rlx.relu", y), a))


def compiled(shape, dt, **options):
    s = Suite("one")
    s.case("stats", stats, np.zeros(shape, dt))
    return gradir.compile(s.module(), cache=False, **options)["case0"]


@run
def test_against_interpreter():
    s = Suite("batch norm statistics")
    for dt in FLOATS:
        t = short(dt)
        for shape in ((32, 16, 8, 8), (5, 4, 7, 9), (3, 6, 20, 20), (2, 3, 33, 5)):
            s.case(f"stats_{'x'.join(map(str, shape))}_{t}", stats, rand(shape, dt, -1.0, 3.0))
        s.case(f"stats_dropped_dims_{t}", lambda a: stats(a, keep=False),
               rand((8, 4, 16, 16), dt))
        s.case(f"variance_alone_{t}", lambda a: op("rlx.variance", a, axis=AXES),
               rand((8, 4, 16, 16), dt))
        s.case(f"mean_alone_{t}", lambda a: op("rlx.mean", a, axis=AXES),
               rand((8, 4, 16, 16), dt))
        # other ranks and axes: kept axes between reduced ones, two leading
        # reduced axes, a kept h between the batch and w
        for shape, axes in (((40, 3, 20), [0, 2]), ((8, 3, 5, 6, 7), [0, 2, 4]),
                            ((4, 3, 4, 5, 6), [0, 1, 3, 4]), ((40, 5, 7, 9), [0, 3])):
            s.case(f"stats_{'x'.join(map(str, shape))}_{axes}_{t}",
                   lambda a, ax=axes: (op("rlx.mean", a, axis=ax),
                                       op("rlx.variance", a, axis=ax, keepdims=True)),
                   rand(shape, dt, 4.0, 6.0))
        # 300 images: more than 256 in the leading axis (the two sweeps)
        s.case(f"stats_long_batch_{t}", stats, rand((300, 2, 4, 4), dt))
        big = (1e4 + rng.standard_normal((16, 4, 16, 16))).astype(dt)
        s.case(f"stats_large_mean_{t}", stats, big, rtol=1e-5 if dt == np.float32 else None)
        const = np.broadcast_to(np.array([3.3, -7.1, 1e4], dt)[None, :, None, None],
                                (9, 3, 10, 10)).copy()
        s.case(f"stats_constant_{t}", stats, const)
    s.run()


@run
def test_against_float64():
    """The f32 variance of 1e4 + N(0, 1) vs float64, and of a constant."""
    for shape in ((32, 32, 32, 32), (32, 64, 8, 8)):
        x = (1e4 + rng.standard_normal(shape)).astype(np.float32)
        f = compiled(shape, np.float32)
        mean, var = f(x)
        x64 = x.astype(np.float64)
        want = x64.var(axis=tuple(AXES), keepdims=True)
        err = float(np.max(np.abs(var - want) / want))
        merr = float(np.max(np.abs(mean - x64.mean(axis=tuple(AXES), keepdims=True))))
        print(f"{'x'.join(map(str, shape))}: variance within 2e-6: {err < 2e-6}, "
              f"mean within 1e-3: {merr < 1e-3}")
    const = np.full((9, 3, 10, 10), 3.3, np.float32)
    _, var = compiled(const.shape, np.float32)(const)
    print("constant channels: variance 0:", bool(np.all(var == 0)))


@run
def test_batch_norm_gradient():
    s = Suite("batch norm gradient", gradient=True)
    for dt in FLOATS:
        t = short(dt)
        for shape in ((16, 4, 8, 8), (5, 3, 9, 7)):
            c = shape[1]
            s.case(f"batch_norm_{'x'.join(map(str, shape))}_{t}", batch_norm,
                   rand(shape, dt), rand((1, c, 1, 1), dt, 0.5, 1.5), rand((1, c, 1, 1), dt),
                   np.array(1e-5, dt))
    s.run()


@run
def test_deterministic():
    shape = (32, 16, 16, 16)
    x = (5 + 2 * rng.standard_normal(shape)).astype(np.float32)
    a, b = compiled(shape, np.float32), compiled(shape, np.float32)
    first = a(x)
    same = all(np.array_equal(u, v) for u, v in zip(first, a(x)))
    same = same and all(np.array_equal(u, v) for u, v in zip(first, b(x)))
    threaded = compiled(shape, np.float32, threads=2)(x)
    print("bitwise the same across compiles and calls:", same)
    print("bitwise the same at 2 threads:",
          all(np.array_equal(u, v) for u, v in zip(first, threaded)))

# CHECK-LABEL: TEST: test_against_interpreter
# CHECK: ok stats_32x16x8x8_f32
# CHECK: ok stats_5x4x7x9_f32
# CHECK: ok stats_large_mean_f32
# CHECK: ok stats_constant_f32
# CHECK: ok stats_2x3x33x5_f64
# CHECK: ok stats_8x3x5x6x7_[0, 2, 4]_f64
# CHECK: ok stats_4x3x4x5x6_[0, 1, 3, 4]_f64
# CHECK: ok stats_long_batch_f64
# CHECK: batch norm statistics: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_against_float64
# CHECK: 32x32x32x32: variance within 2e-6: True, mean within 1e-3: True
# CHECK: 32x64x8x8: variance within 2e-6: True, mean within 1e-3: True
# CHECK: constant channels: variance 0: True
# CHECK-LABEL: TEST: test_batch_norm_gradient
# CHECK: batch norm gradient: all 4 cases match the interpreter
# CHECK-LABEL: TEST: test_deterministic
# CHECK: bitwise the same across compiles and calls: True
# CHECK: bitwise the same at 2 threads: True

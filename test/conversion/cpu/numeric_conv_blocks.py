# RUN: %PYTHON %s | FileCheck %s
# Convolutions run per block of images, each block padding its own images in
# its iteration (conversion/linalg/conv.py, PAD_PER_BLOCK), against the
# reference interpreter in f32 and f64: asymmetric padding (every side
# different, one side 0), stride 2, dilation 2, blocks of one image and of
# several, batch 1 (no image blocks), and the transposed convolution of stride
# 1 (a conv2d of the input padded by the kernel's reach less the padding);
# then at 2 threads (the blocks run on the threads): the same results
# bitwise on repeated runs and as at 1 thread, and the same bits with the
# whole input padded before the loop (PAD_PER_BLOCK off).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short, sum_atol  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.cpu import rlx_parallel_loops  # noqa: E402
from gradir.conversion.linalg import conv  # noqa: E402


CONVS = [  # (data shape, weight shape, strides, padding, dilation)
    # 3 images of 1 channel, 28x28 (25 x 784 per image): blocks of 3 images,
    # asymmetric padding (top 1, left 2, bottom 3, right 0).
    ((6, 1, 28, 28), (6, 1, 5, 5), [1, 1], [1, 2, 3, 0], [1, 1]),
    # A block per image (288 x 256 per image), padding 1, as bench/cnn.py's
    # 16x16 convs, and one row/column of padding more at the bottom/right.
    ((3, 32, 16, 16), (8, 32, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),
    ((2, 32, 16, 15), (8, 32, 3, 3), [1, 1], [0, 1, 2, 2], [1, 1]),
    # Stride 2 (bench/cnn.py's 32 -> 64 over 16x16), odd output width.
    ((4, 32, 17, 16), (16, 32, 3, 3), [2, 2], [1, 1, 1, 0], [1, 1]),
    # Dilation 2, stride (1, 2), blocks of 2 images.
    ((4, 16, 20, 22), (4, 16, 3, 3), [1, 2], [2, 0, 1, 3], [2, 2]),
    # Batch 1: one image, its matrix over the budget (blocks of channels,
    # the whole input padded first).
    ((1, 32, 16, 16), (8, 32, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),
    # The stem's 3 channels over 32x32 (blocks of 2 images).
    ((4, 3, 32, 32), (8, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),
]
CONV_T = [  # (data, weight IOHW, padding): stride 1, the flipped conv2d per block
    ((3, 32, 16, 16), (32, 16, 3, 3), [1, 1, 1, 1]),
    ((2, 64, 8, 8), (64, 16, 3, 3), [1, 0, 1, 2]),
]


def conv_case(s, name, xs, ws, st, pd, dl, dt):
    s.case(name, lambda a, b: op("rlx.conv2d", a, b, strides=st, padding=pd, dilation=dl),
           rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, np.prod(ws[1:])))


@run
def test_blocks():
    s = Suite("conv blocks")
    for dt in FLOATS:
        t = short(dt)
        for i, (xs, ws, st, pd, dl) in enumerate(CONVS):
            conv_case(s, f"conv2d_{i}_{t}", xs, ws, st, pd, dl, dt)
        for i, (xs, ws, pd) in enumerate(CONV_T):
            s.case(f"conv2d_transpose_{i}_{t}",
                   lambda a, b, pd=pd: op("rlx.conv2d_transpose", a, b, padding=pd),
                   rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, xs[1] * np.prod(ws[2:])))
    s.run()


def compiled(threads):
    s = Suite("conv blocks")
    for dt in FLOATS:
        for i, (xs, ws, st, pd, dl) in enumerate(CONVS):
            conv_case(s, "", xs, ws, st, pd, dl, dt)
    return s, gradir.compile(s.module(), threads=threads, cache=False)


@run
def test_threads():
    # the pass's own threshold: every block loop of these small convs is
    # worth the threads
    rlx_parallel_loops.PIPELINE_MIN_WORK = rlx_parallel_loops.MIN_WORK
    s, one = compiled(1)
    _, two = compiled(2)
    conv.PAD_PER_BLOCK = False
    try:
        _, whole = compiled(2)
    finally:
        conv.PAD_PER_BLOCK = True
    for i, (_, _, inputs, _, _) in enumerate(s.cases):
        want = one[f"case{i}"](*inputs)
        runs = [two[f"case{i}"](*inputs) for _ in range(3)] + [whole[f"case{i}"](*inputs)]
        assert all(np.array_equal(r, want) for r in runs), f"case {i}: bits differ"
    print(f"{len(s.cases)} cases: 2 threads, 3 runs and the whole input padded: same bits")

# CHECK-LABEL: TEST: test_blocks
# CHECK: ok conv2d_0_f32
# CHECK: ok conv2d_transpose_1_f64
# CHECK: conv blocks: all 18 cases match the interpreter
# CHECK-LABEL: TEST: test_threads
# CHECK: 14 cases: 2 threads, 3 runs and the whole input padded: same bits

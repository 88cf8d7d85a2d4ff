# RUN: %PYTHON %s | FileCheck %s
# The implicit-GEMM convolution kernel (conversion/cpu/conv_kernels.py, called
# by rlx-conv-kernels for conversion/linalg/conv.py's marked conv2d) against
# the reference interpreter in f32 and f64: pixel counts that leave a ragged
# last tile, output rows shorter than a vector (several runs per tile) and
# longer than a tile, output channels not a multiple of the register tile's
# rows, K over one K block, asymmetric padding, dilation, batch 1, blocks of
# images, the stride-1 transposed convolution (a flipped conv2d), stride 2
# (the panels' two-vector shuffles) and 3 (element by element;
# CONV_KERNEL_STRIDES widened);
# then the same bits as the im2col GEMM (CONV_KERNEL off: the same FMA
# chains in the same K order), and at 2 threads (the blocks of images on
# the threads) the same bits on repeated runs and as at 1 thread.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short, sum_atol  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.cpu import rlx_parallel_loops  # noqa: E402
from gradir.conversion.linalg import conv  # noqa: E402


CONVS = [  # (data shape, weight shape, strides, padding, dilation)
    # 13x13 output pixels (169: a last tile of 9 columns), 10 output channels
    ((2, 5, 14, 14), (10, 5, 3, 3), [1, 1], [1, 0, 1, 0], [1, 1]),
    # batch 1, 64 channels (K 576: two K blocks), asymmetric padding
    ((1, 64, 8, 9), (16, 64, 3, 3), [1, 1], [1, 2, 0, 1], [1, 1]),
    # output rows of 9 (several runs in a tile), dilation 2
    ((3, 4, 13, 13), (8, 4, 3, 3), [1, 1], [1, 1, 2, 0], [2, 2]),
    # output rows of 40 (a run over a tile), a 5x3 kernel
    ((2, 3, 12, 40), (7, 3, 5, 3), [1, 1], [2, 1, 2, 1], [1, 1]),
    # the stem's 3 channels over 32x32, blocks of 4 images
    ((8, 3, 32, 32), (16, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),
    # stride 2 and (1, 2): the panels' runs as two masked vectors and a
    # shuffle of their even lanes (odd widths: runs of 9, 19 = a vector and
    # 3, ragged tiles; the last image's last run ends at the buffer's end)
    ((2, 6, 17, 18), (8, 6, 3, 3), [2, 2], [1, 1, 1, 0], [1, 1]),
    ((2, 4, 12, 30), (8, 4, 3, 3), [1, 2], [0, 1, 2, 1], [2, 1]),
    ((3, 3, 21, 37), (6, 3, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1]),
    ((2, 4, 19, 23), (5, 4, 3, 3), [2, 2], [0, 1, 0, 0], [1, 2]),
    ((1, 2, 9, 39), (3, 2, 1, 1), [2, 2], [0, 0, 0, 0], [1, 1]),
    # stride 3: element by element
    ((2, 3, 26, 29), (4, 3, 3, 3), [3, 3], [1, 1, 1, 1], [1, 1]),
]
CONV_T = [((2, 16, 8, 8), (16, 16, 3, 3), [1, 0, 1, 2])]   # (data, weight IOHW, padding)


def build(dts):
    s = Suite("conv kernels")
    for dt in dts:
        t = short(dt)
        for i, (xs, ws, st, pd, dl) in enumerate(CONVS):
            s.case(f"conv2d_{i}_{t}",
                   lambda a, b, st=st, pd=pd, dl=dl: op("rlx.conv2d", a, b, strides=st,
                                                        padding=pd, dilation=dl),
                   rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, np.prod(ws[1:])))
        for i, (xs, ws, pd) in enumerate(CONV_T):
            s.case(f"conv2d_transpose_{i}_{t}",
                   lambda a, b, pd=pd: op("rlx.conv2d_transpose", a, b, padding=pd),
                   rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, xs[1] * np.prod(ws[2:])))
    return s


conv.CONV_KERNEL_STRIDES = ((1, 1), (2, 2), (1, 2), (3, 3))


@run
def test_interpreter():
    s = build(FLOATS)
    s.run()
    exe = gradir.compile(s.module(), threads=1, cache=False)
    ir = exe.llvm_ir
    print("calls the f32 and f64 kernels:", all(f"_conv_{t}" in ir for t in ("f32", "f64")),
          "im2col GEMMs:", "_matmul_f" in ir)


def compiled(threads, kernel=True):
    s = build(FLOATS)
    conv.CONV_KERNEL = kernel
    try:
        return s, gradir.compile(s.module(), threads=threads, cache=False)
    finally:
        conv.CONV_KERNEL = True


@run
def test_bits():
    rlx_parallel_loops.PIPELINE_MIN_WORK = rlx_parallel_loops.MIN_WORK
    s, one = compiled(1)
    _, im2col = compiled(1, kernel=False)
    _, two = compiled(2)
    for i, (_, _, inputs, _, _) in enumerate(s.cases):
        want = one[f"case{i}"](*inputs)
        assert np.array_equal(im2col[f"case{i}"](*inputs), want), f"case {i}: im2col bits differ"
        runs = [two[f"case{i}"](*inputs) for _ in range(3)]
        assert all(np.array_equal(r, want) for r in runs), f"case {i}: threads' bits differ"
    print(f"{len(s.cases)} cases: the im2col GEMM's bits, 2 threads x 3 runs the same bits")

# CHECK-LABEL: TEST: test_interpreter
# CHECK: ok conv2d_0_f32
# CHECK: ok conv2d_transpose_0_f64
# CHECK: conv kernels: all 24 cases match the interpreter
# CHECK: calls the f32 and f64 kernels: True im2col GEMMs: False
# CHECK-LABEL: TEST: test_bits
# CHECK: 24 cases: the im2col GEMM's bits, 2 threads x 3 runs the same bits

# RUN: %PYTHON %s | FileCheck %s
# The weight gradient's implicit-GEMM kernel (conversion/cpu/conv_kernels.py, convw_driver,
# called by rlx-conv-kernels for conversion/linalg/conv.py's convw-marked
# conv2d: few output pixels per image, an image's im2col matrix over the
# budget, here COL_BLOCK_BYTES lowered to 16 KiB) against the reference
# interpreter in f32 and f64: kernel rows of 16 and 32 (a multiple of the
# vector: one load per chunk of K steps), 8, 10, 5 and 7 (chunks across
# runs: two or more masked loads), column dilation 2 (the panels element
# by element), row dilation 2, stride 2, columns that leave a ragged last
# tile (63, 75) or fill less than a vector (9: one image), K over several
# K blocks; then the same bits as the im2col lowering (CONVW_KERNEL off:
# the same FMA chains in the same K order), and at 2 threads (a range of
# the columns each) the same bits on repeated runs and as at 1 thread.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short, sum_atol  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.cpu import rlx_parallel_loops  # noqa: E402
from gradir.conversion.linalg import conv  # noqa: E402


CONVS = [  # (data shape, weight shape, strides, padding, dilation)
    # kernel rows of 16: 5x5 pixels, 75 columns (a ragged last tile)
    ((3, 2, 18, 18), (5, 2, 16, 16), [1, 1], [1, 1, 1, 1], [1, 1]),
    # rows of 32, K 3072 (several K blocks)
    ((2, 3, 34, 34), (4, 3, 32, 32), [1, 1], [0, 0, 0, 0], [1, 1]),
    # rows of 8 (two runs a chunk of 16), padding 1
    ((6, 5, 10, 10), (7, 5, 8, 8), [1, 1], [1, 1, 1, 1], [1, 1]),
    # rows of 10 (LeNet's conv2 weight gradient's form)
    ((5, 6, 12, 12), (9, 6, 10, 10), [1, 1], [0, 0, 0, 0], [1, 1]),
    # rows of 5, asymmetric padding, 210 columns
    ((7, 20, 8, 9), (4, 20, 5, 5), [1, 1], [1, 0, 1, 0], [1, 1]),
    # column dilation 2 (element by element; CONVW_KERNEL_DILATIONS widened)
    ((4, 3, 17, 17), (5, 3, 8, 8), [1, 1], [1, 1, 0, 0], [2, 2]),
    # one image: 9 columns (less than a vector)
    ((1, 4, 12, 12), (3, 4, 10, 10), [1, 1], [0, 0, 0, 0], [1, 1]),
    # 7 images: 63 columns
    ((7, 4, 10, 10), (6, 4, 8, 8), [1, 1], [0, 0, 0, 0], [1, 1]),
    # stride 2
    ((3, 4, 21, 21), (5, 4, 16, 16), [2, 2], [0, 0, 0, 0], [1, 1]),
    # rows of 7, row dilation 2
    ((3, 4, 15, 11), (5, 4, 5, 7), [1, 1], [0, 0, 0, 0], [2, 1]),
    # one image, stride 2 and row dilation 2
    ((1, 3, 27, 21), (4, 3, 8, 16), [2, 2], [0, 1, 0, 0], [2, 1]),
]


def build(dts):
    s = Suite("convw kernels")
    for dt in dts:
        t = short(dt)
        for i, (xs, ws, st, pd, dl) in enumerate(CONVS):
            s.case(f"conv2d_{i}_{t}",
                   lambda a, b, st=st, pd=pd, dl=dl: op("rlx.conv2d", a, b, strides=st,
                                                        padding=pd, dilation=dl),
                   rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, np.prod(ws[1:])))
    return s


conv.COL_BLOCK_BYTES = 16 << 10
conv.CONVW_KERNEL_DILATIONS = (1, 2)


@run
def test_interpreter():
    s = build(FLOATS)
    s.run()
    exe = gradir.compile(s.module(), threads=1, cache=False)
    ir = exe.llvm_ir
    print("calls the f32 and f64 kernels:", all(f"_wgrad_conv_{t}" in ir for t in ("f32", "f64")))


def compiled(threads, kernel=True):
    s = build(FLOATS)
    conv.CONVW_KERNEL = kernel
    try:
        return s, gradir.compile(s.module(), threads=threads, cache=False)
    finally:
        conv.CONVW_KERNEL = True


@run
def test_bits():
    rlx_parallel_loops.PIPELINE_HOT_MIN_WORK = 0
    s, one = compiled(1)
    _, im2col = compiled(1, kernel=False)
    _, two = compiled(2)
    assert "_wgrad_conv_f32" in two.llvm_ir and "_wgrad_conv_f32" not in im2col.llvm_ir
    for i, (_, _, inputs, _, _) in enumerate(s.cases):
        want = one[f"case{i}"](*inputs)
        assert np.array_equal(im2col[f"case{i}"](*inputs), want), f"case {i}: im2col bits differ"
        runs = [two[f"case{i}"](*inputs) for _ in range(3)]
        assert all(np.array_equal(r, want) for r in runs), f"case {i}: threads' bits differ"
    print(f"{len(s.cases)} cases: the im2col lowering's bits, 2 threads x 3 runs the same bits")

# CHECK-LABEL: TEST: test_interpreter
# CHECK: ok conv2d_0_f32
# CHECK: ok conv2d_10_f64
# CHECK: convw kernels: all 22 cases match the interpreter
# CHECK: calls the f32 and f64 kernels: True
# CHECK-LABEL: TEST: test_bits
# CHECK: 22 cases: the im2col lowering's bits, 2 threads x 3 runs the same bits

# RUN: %PYTHON %s | FileCheck %s
# Convolutions of permute_dims(x, [1, 0, 2, 3]) read x through the maps
# (conversion/linalg/conv.py's SWAPPED_IMAGES: no transposed copy; the
# kernels get a memref.transpose view, conversion/cpu/rlx_conv_kernels.py),
# against the reference interpreter in f32 and f64, with COL_BLOCK_BYTES
# lowered to 16 KiB and CONV_KERNEL_BLOCK_PIXELS to 256 so that small
# shapes take every form: the forward kernel per block of images, the
# im2col GEMM in one piece and per block of images (stride 2), the weight
# gradient's kernel, its blocks of channels (column dilation 2), built
# transposed (kernel rows of 16) per half of the images or, one image, in
# one piece; odd sizes, padding 0, 1, 2 and asymmetric.  Then the conv2d
# VJP rule's gradients (rlx-gradient: the weight gradient is such a
# convolution) with strides, dilation, groups and output_padding.  Then the
# same bits as with the permute copied (SWAPPED_IMAGES off), and at 2
# threads the same bits on repeated runs and as at 1 thread.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short, sum_atol  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.cpu import rlx_parallel_loops  # noqa: E402
from gradir.conversion.linalg import conv  # noqa: E402

SWAP = [1, 0, 2, 3]
CONVS = [  # (x, whose first two dims the conv's data swaps; weights; strides, padding, dilation)
    # the forward kernel, blocks of one image
    ((3, 5, 12, 12), (16, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),
    ((3, 7, 13, 11), (4, 3, 5, 5), [1, 1], [2, 2, 2, 2], [1, 1]),
    # the im2col GEMM in one piece, padding 0
    ((2, 3, 6, 7), (4, 2, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1]),
    # per block of images, stride 2
    ((8, 6, 17, 16), (8, 8, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1]),
    # the weight gradient's kernel
    ((6, 8, 12, 12), (5, 6, 10, 10), [1, 1], [1, 1, 1, 1], [1, 1]),
    ((6, 5, 11, 13), (3, 6, 9, 11), [1, 1], [0, 1, 2, 0], [1, 1]),
    # blocks of channels (column dilation 2)
    ((6, 8, 17, 17), (5, 6, 8, 8), [1, 1], [1, 1, 0, 0], [2, 2]),
    # built transposed (rows of 16): per half of the images, one image
    ((6, 4, 33, 33), (5, 6, 16, 16), [1, 1], [1, 1, 0, 0], [2, 2]),
    ((6, 1, 33, 33), (5, 6, 16, 16), [1, 1], [1, 1, 0, 0], [2, 2]),
]
GRADS = [  # (data, weights, strides, padding, dilation, groups) of conv2d
    ((3, 4, 9, 11), (5, 4, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ((2, 3, 10, 7), (4, 3, 3, 2), [2, 2], [0, 0, 0, 0], [1, 1], 1),   # output_padding
    ((2, 4, 11, 9), (6, 2, 3, 3), [1, 2], [2, 2, 2, 2], [1, 1], 2),
    ((3, 2, 12, 12), (3, 2, 3, 3), [1, 1], [2, 1, 0, 2], [2, 2], 1),
    ((4, 8, 16, 16), (8, 8, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], 1),
    ((5, 6, 13, 13), (7, 6, 5, 5), [1, 1], [2, 2, 2, 2], [1, 1], 1),
]

conv.COL_BLOCK_BYTES = 16 << 10
conv.CONV_KERNEL_BLOCK_PIXELS = 256


def convs():
    s = Suite("swapped images")
    for dt in FLOATS:
        for i, (xs, ws, st, pd, dl) in enumerate(CONVS):
            s.case(f"conv2d_{i}_{short(dt)}",
                   lambda a, b, st=st, pd=pd, dl=dl: op(
                       "rlx.conv2d", op("rlx.permute_dims", a, axes=SWAP), b, strides=st,
                       padding=pd, dilation=dl),
                   rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, np.prod(ws[1:])))
    return s


def out_shape(xs, ws, st, pd, dl):
    return [xs[0], ws[0]] + [(xs[2 + i] + pd[i] + pd[i + 2] - dl[i] * (ws[2 + i] - 1) - 1)
                             // st[i] + 1 for i in (0, 1)]


def grads():
    """sum(conv2d(x, w) * r): its adjoint's gradients are the rule's dx, dw."""
    s = Suite("conv2d gradients", gradient=True)
    for dt in FLOATS:
        for i, (xs, ws, st, pd, dl, g) in enumerate(GRADS):
            s.case(f"grad_{i}_{short(dt)}",
                   lambda a, b, r, st=st, pd=pd, dl=dl, g=g: op("rlx.sum", op(
                       "rlx.multiply", op("rlx.conv2d", a, b, strides=st, padding=pd,
                                          dilation=dl, groups=g), r)),
                   rand(xs, dt), rand(ws, dt), rand(out_shape(xs, ws, st, pd, dl), dt),
                   atol=sum_atol(dt, xs[0] * np.prod(ws[1:])))
    return s


@run
def test_interpreter():
    convs().run()
    grads().run()


def compiled(suite, threads, swapped=True):
    module = suite.module()
    if suite.gradient:
        passes = ",".join(f"rlx-gradient{{func=case{i}}}" for i in range(len(suite.cases)))
        gradir.run_pipeline(module, f"builtin.module({passes})")
    conv.SWAPPED_IMAGES = swapped
    try:
        return gradir.compile(module, threads=threads, cache=False)
    finally:
        conv.SWAPPED_IMAGES = True


@run
def test_bits():
    rlx_parallel_loops.PIPELINE_MIN_WORK = rlx_parallel_loops.MIN_WORK
    rlx_parallel_loops.PIPELINE_HOT_MIN_WORK = 0
    for suite in (convs(), grads()):
        suffix = "_adjoint" if suite.gradient else ""
        one, copied, two = (compiled(suite, 1), compiled(suite, 1, swapped=False),
                            compiled(suite, 2))
        for i, (name, _, inputs, _, _) in enumerate(suite.cases):
            f = f"case{i}{suffix}"
            want = one[f](*inputs)
            want = want if isinstance(want, tuple) else (want,)

            def same(got):
                got = got if isinstance(got, tuple) else (got,)
                return all(np.array_equal(a, b) for a, b in zip(got, want))
            assert same(copied[f](*inputs)), f"{name}: bits differ from the permute copied"
            assert all(same(two[f](*inputs)) for _ in range(3)), f"{name}: threads' bits differ"
        print(f"{suite.title}: {len(suite.cases)} cases, the bits of the permute copied, "
              "2 threads x 3 runs the same bits")

# CHECK-LABEL: TEST: test_interpreter
# CHECK: ok conv2d_0_f32
# CHECK: ok conv2d_8_f64
# CHECK: swapped images: all 18 cases match the interpreter
# CHECK: ok grad_0_f32
# CHECK: ok grad_5_f64
# CHECK: conv2d gradients: all 12 cases match the interpreter
# CHECK-LABEL: TEST: test_bits
# CHECK: swapped images: 18 cases, the bits of the permute copied, 2 threads x 3 runs the same bits
# CHECK: conv2d gradients: 12 cases, the bits of the permute copied, 2 threads x 3 runs the same bits

# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_PARALLEL_COMPILE=1 %PYTHON %s | FileCheck %s
# Compiled against the reference interpreter: softmax, losses, convolution
# (groups, strides, padding, dilation), transposed convolution, pooling and
# the pooling backward ops, normalization, in f32 and f64.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, ints, op, rand, run, short, sum_atol  # noqa: E402


CONVS = [  # (data shape, weight shape, strides, padding, dilation, groups)
    ((1, 2, 5, 5), (3, 2, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), [2, 1], [1, 0, 2, 1], [1, 1], 1),
    ((1, 4, 8, 8), (6, 2, 3, 3), [1, 2], [1, 1, 1, 1], [2, 1], 2),
    ((2, 4, 6, 6), (4, 1, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 4),
    # Packed columns past one 32-wide tile (N*OH*OW = 126 -> 128), odd sizes.
    ((2, 3, 9, 11), (5, 3, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1),
    # Stride 2 and dilation 2 with asymmetric padding; C = 1 (LeNet's first layer).
    ((3, 1, 13, 12), (6, 1, 5, 5), [2, 2], [2, 1, 0, 3], [2, 2], 1),
    # The weight gradient's form: batch as channels, a large kernel, a 5x5 output.
    ((3, 8, 12, 12), (4, 8, 8, 8), [1, 1], [0, 0, 0, 0], [1, 1], 1),
    # Groups 3 with strides, dilation and odd spatial sizes.
    ((2, 6, 11, 7), (9, 2, 3, 2), [2, 3], [1, 2, 1, 0], [1, 2], 3),
    # im2col over 256 KiB: packed and multiplied per block of images (7 images,
    # one per block; padding 1).
    ((7, 3, 18, 18), (4, 3, 5, 5), [1, 1], [1, 1, 1, 1], [1, 1], 1),
    # One image's im2col over 256 KiB (288 x 256 f32, 295 KB; f64 590 KB):
    # a block per image (a ResNet 3x3 conv of padding 1).
    ((3, 32, 16, 16), (32, 32, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1),
    # The weight gradient's form with 3x3 "pixels" (blocks of channels).
    ((12, 3, 10, 10), (8, 3, 8, 8), [1, 1], [0, 0, 0, 0], [1, 1], 1),
    # The weight gradient's form with long kernel rows (16) and 3x3 "pixels":
    # the transposed im2col matrix per block of channels, per half of the
    # images (the dw form of a 3x3 conv of padding 1 over 16x16: 4 input
    # channels as "images", a batch of 32 as channels, as bench/cnn.py's).
    ((4, 32, 16, 16), (8, 32, 16, 16), [1, 1], [1, 1, 1, 1], [1, 1], 1),
]
CONV_T = [  # (data, weight IOHW, strides, padding, dilation, groups, output_padding)
    ((1, 2, 4, 4), (2, 3, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1, None),
    ((2, 3, 4, 5), (3, 2, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], 1, [1, 1]),
    ((1, 4, 3, 3), (4, 2, 2, 3), [2, 3], [0, 1, 2, 0], [1, 1], 2, [1, 0]),
    ((1, 2, 5, 4), (2, 2, 3, 3), [1, 2], [3, 2, 3, 4], [2, 1], 1, None),
    # LeNet's data gradient (conv2 dx, smaller batch): stride 1, no padding.
    ((3, 16, 8, 8), (16, 6, 5, 5), [1, 1], [0, 0, 0, 0], [1, 1], 1, None),
    # Groups 3, stride 2, dilation 2, odd sizes, output_padding.
    ((2, 6, 5, 7), (6, 2, 3, 2), [2, 2], [1, 0, 1, 1], [2, 2], 3, [1, 1]),
    # A GEMM product over 256 KiB: per block of images; groups 2, padding 1.
    ((8, 16, 8, 8), (16, 3, 5, 5), [1, 1], [1, 1, 1, 1], [1, 1], 2, None),
    # One-row and one-column kernels (col2im loops of one iteration), groups 2.
    ((2, 4, 3, 5), (4, 3, 1, 3), [2, 1], [0, 1, 0, 1], [1, 2], 2, [1, 0]),
    ((1, 3, 4, 2), (3, 2, 3, 1), [1, 3], [1, 0, 0, 0], [2, 1], 1, None),
    # Stride 1, 16 output channels or more, an output no larger than the
    # input: a conv2d with the kernel flipped (ResNet's input gradient;
    # asymmetric padding; groups 2 with dilation 2).
    ((2, 8, 6, 5), (8, 16, 3, 3), [1, 1], [1, 0, 1, 2], [1, 1], 1, None),
    ((2, 4, 7, 7), (4, 12, 3, 3), [1, 1], [2, 2, 2, 2], [2, 2], 2, None),
]
POOLS = [  # (data, pool_size, strides, padding, dilation, ceil_mode, count_include_pad)
    ((1, 2, 6, 6), [2, 2], [2, 2], [0, 0, 0, 0], None, False, False),
    ((2, 3, 7, 5), [3, 3], [2, 1], [1, 1, 1, 1], None, False, False),
    ((1, 2, 7, 7), [3, 2], [2, 2], [1, 0, 1, 0], None, True, False),
    ((1, 1, 6, 7), [2, 3], [1, 2], [1, 1, 0, 1], [2, 1], True, True),
    ((1, 2, 5, 5), [3, 3], [1, 1], [1, 1, 1, 1], None, False, True),
    # Windows tiling the input exactly (the one-pass backward): 2x2, and 3x2
    # on odd sizes.
    ((3, 5, 8, 10), [2, 2], [2, 2], [0, 0, 0, 0], None, False, False),
    ((2, 3, 9, 8), [3, 2], [3, 2], [0, 0, 0, 0], None, False, False),
    # A 5x5 window (more than 16 elements: linalg's pooling ops).
    ((1, 2, 9, 8), [5, 5], [2, 1], [2, 2, 2, 2], None, False, False),
    # A one-row overlapping window (the gather's phases: one row offset).
    ((1, 2, 5, 7), [1, 3], [1, 2], [0, 1, 0, 1], None, False, False),
    # ResNet's stem pool (3x3, stride 2, padding 1: four phases of 1, 2, 2
    # and 4 offsets), on odd and even sizes; strides over the window (phases
    # no window reaches: zeros); dilation 2 with stride 3.
    ((2, 3, 9, 8), [3, 3], [2, 2], [1, 1, 1, 1], None, False, False),
    ((1, 2, 8, 9), [2, 2], [3, 3], [0, 0, 0, 0], None, False, True),
    ((1, 2, 11, 10), [3, 2], [3, 2], [1, 0, 1, 1], [2, 2], True, False),
]


def pool_kw(size, strides, padding, dilation, ceil, include=None):
    kw = dict(pool_size=size, strides=strides, padding=padding)
    if dilation:
        kw["dilation"] = dilation
    if ceil:
        kw["ceil_mode"] = True
    if include:
        kw["count_include_pad"] = True
    return kw


@run
def test_softmax_losses():
    s = Suite("softmax/losses")
    for dt in FLOATS:
        t = short(dt)
        x = rand((3, 5), dt) * 3
        x[0, 0] = 80.0
        s.case(f"softmax_{t}", lambda a: op("rlx.softmax", a), x)
        s.case(f"softmax_axis0_{t}", lambda a: op("rlx.softmax", a, axis=[0]), x)
        s.case(f"log_softmax_{t}", lambda a: op("rlx.log_softmax", a), x)
        s.case(f"log_softmax_3d_{t}", lambda a: op("rlx.log_softmax", a, axis=[1]),
               rand((2, 3, 4), dt))
        s.case(f"cross_entropy_2d_{t}", lambda a, b: op("rlx.cross_entropy_with_logits", a, b),
               rand((4, 3), dt), rand((4, 3), dt))
        s.case(f"cross_entropy_1d_{t}", lambda a, b: op("rlx.cross_entropy_with_logits", a, b),
               rand((5,), dt), rand((5,), dt))
        p = rand((4, 3), dt)
        tg = np.array([0, 2, 1, 2], dtype=np.int64)
        for red in ("mean", "sum", "none"):
            s.case(f"nll_{red}_{t}", lambda a, b, r=red: op("rlx.nll_loss", a, b, reduction=r),
                   p, tg)
            s.case(f"nll_w_{red}_{t}",
                   lambda a, b, w, r=red: op("rlx.nll_loss", a, b, w, reduction=r),
                   p, tg, rand((3,), dt, 0.5, 2.0))
            s.case(f"nll_ignore_{red}_{t}",
                   lambda a, b, w, r=red: op("rlx.nll_loss", a, b, w, reduction=r,
                                             ignore_index=1),
                   p, np.array([1, 2, 1, 0], dtype=np.int32), rand((3,), dt, 0.5, 2.0))
            s.case(f"nll_nd_{red}_{t}", lambda a, b, r=red: op("rlx.nll_loss", a, b, reduction=r),
                   rand((2, 3, 4, 2), dt), ints((2, 4, 2), 3))
        s.case(f"nll_1d_{t}", lambda a, b: op("rlx.nll_loss", a, b, reduction="mean"),
               rand((5,), dt), np.array(3, dtype=np.int64))
    s.run()


@run
def test_conv_pool():
    s = Suite("conv/pool")
    for dt in FLOATS:
        t = short(dt)
        for i, (xs, ws, st, pd, dl, g) in enumerate(CONVS):
            s.case(f"conv2d_{i}_{t}", lambda a, b, st=st, pd=pd, dl=dl, g=g: op(
                "rlx.conv2d", a, b, strides=st, padding=pd, dilation=dl, groups=g),
                rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, np.prod(ws[1:])))
        for i, (xs, ws, st, pd, dl, g, opad) in enumerate(CONV_T):
            kw = dict(strides=st, padding=pd, dilation=dl, groups=g)
            if opad:
                kw["output_padding"] = opad
            s.case(f"conv2d_transpose_{i}_{t}",
                   lambda a, b, kw=kw: op("rlx.conv2d_transpose", a, b, **kw),
                   rand(xs, dt), rand(ws, dt), atol=sum_atol(dt, xs[1] // g * np.prod(ws[2:])))
        for i, (xs, size, st, pd, dl, ceil, incl) in enumerate(POOLS):
            x = rand(xs, dt)
            x.reshape(-1)[::7] = x.reshape(-1)[0]          # ties in the max windows
            mk = pool_kw(size, st, pd, dl, ceil)
            ak = pool_kw(size, st, pd, dl, ceil, incl)
            s.case(f"max_pool2d_{i}_{t}", lambda a, k=mk: op("rlx.max_pool2d", a, **k), x)
            s.case(f"avg_pool2d_{i}_{t}", lambda a, k=ak: op("rlx.avg_pool2d", a, **k), x)

            def mpb(a, k=mk):
                y = op("rlx.max_pool2d", a, **k)
                return op("rlx.max_pool2d_backward", op("rlx.sin", y), a, **k)

            def apb(a, k=ak):
                y = op("rlx.avg_pool2d", a, **k)
                return op("rlx.avg_pool2d_backward", op("rlx.sin", y), a, **k)

            s.case(f"max_pool2d_backward_{i}_{t}", mpb, x)
            s.case(f"avg_pool2d_backward_{i}_{t}", apb, x)
    s.run()


@run
def test_norm():
    s = Suite("norm")
    for dt in FLOATS:
        t = short(dt)
        x = rand((2, 3, 4), dt)
        for axes in ([-1], [1, 2], [2, 1], [0]):
            shape = [x.shape[a] for a in axes]
            s.case(f"layer_norm_{axes}_{t}",
                   lambda a, g, b, ax=axes: op("rlx.layer_norm", a, g, b, axes=ax, epsilon=1e-5),
                   x, rand(shape, dt), rand(shape, dt))
        s.case(f"rms_norm_{t}", lambda a, w: op("rlx.rms_norm", a, w), x, rand((4,), dt))
        s.case(f"rms_norm_axes_{t}", lambda a, w: op("rlx.rms_norm", a, w, axes=[0, 2],
                                                      epsilon=1e-3),
               x, rand((2, 4), dt))
    s.run()

# CHECK-LABEL: TEST: test_softmax_losses
# CHECK: ok nll_ignore_mean_f32
# CHECK: softmax/losses: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_conv_pool
# CHECK: ok conv2d_8_f32
# CHECK: ok conv2d_9_f32
# CHECK: ok conv2d_10_f32
# CHECK: ok conv2d_transpose_6_f32
# CHECK: ok conv2d_transpose_7_f32
# CHECK: ok conv2d_transpose_8_f32
# CHECK: ok conv2d_transpose_9_f32
# CHECK: ok conv2d_transpose_10_f32
# CHECK: ok max_pool2d_backward_3_f32
# CHECK: ok max_pool2d_backward_6_f32
# CHECK: ok avg_pool2d_backward_7_f32
# CHECK: ok max_pool2d_backward_8_f32
# CHECK: ok avg_pool2d_backward_8_f32
# CHECK: ok max_pool2d_backward_9_f32
# CHECK: ok max_pool2d_backward_10_f32
# CHECK: ok avg_pool2d_backward_11_f32
# CHECK: ok conv2d_8_f64
# CHECK: ok conv2d_transpose_2_f64
# CHECK: ok max_pool2d_backward_5_f64
# CHECK: conv/pool: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_norm
# CHECK: ok layer_norm_[2, 1]_f64
# CHECK: norm: all {{[0-9]+}} cases match the interpreter

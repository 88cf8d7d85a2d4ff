# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=0 %PYTHON %s | FileCheck %s
# RUN: env GRADIR_PARALLEL_COMPILE=1 %PYTHON %s | FileCheck %s
# Gradient programs (rlx-gradient output) compiled against the reference
# interpreter: every differentiable op inside target = sum(sin(op(...))),
# f32 and f64, plus the MLP of test/autodiff/mlp.py and checkpoint/tuple
# programs.  The second RUN line compiles without fusion or schedule.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, ints, op, rand, run, short  # noqa: E402

from gradir.dialects.ops import BINARY, UNARY  # noqa: E402  (read from the IRDL file)


def target(y):
    return op("rlx.sum", op("rlx.sin", y))


def cases(s, dt):
    t = short(dt)
    pos = rand((3, 4), dt, 0.5, 2.0)
    x = rand((3, 4), dt)
    for name in UNARY:
        s.case(f"{name}_{t}", lambda a, n=name: target(op(f"rlx.{n}", a)),
               pos if name in ("log", "sqrt", "rsqrt") else x)
    for name in BINARY:
        s.case(f"{name}_{t}", lambda a, b, n=name: target(op(f"rlx.{n}", a, b)),
               pos, rand((4,), dt, 0.5, 2.0))
    s.case(f"where_{t}", lambda c, a, b: target(op("rlx.where", op("rlx.greater", a, c), a, b)),
           rand((4,), dt), x, rand((3, 1), dt))
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 2)), ((2, 3, 4), (4, 2)), ((2, 3, 4), (1, 4, 2))]:
        s.case(f"matmul_{sa}_{sb}_{t}", lambda a, b: target(op("rlx.matmul", a, b)),
               rand(sa, dt), rand(sb, dt))
    s.case(f"shape_ops_{t}", lambda a: target(op("rlx.flatten", op("rlx.squeeze", op(
        "rlx.expand_dims", op("rlx.permute_dims", a, axes=[1, 0]), axis=[0]), axis=[0]))), x)
    s.case(f"reshape_broadcast_{t}", lambda a: target(op("rlx.broadcast_to", op(
        "rlx.reshape", a, result=((4, 1, 3), dt)), result=((4, 2, 3), dt))), x)
    s.case(f"concat_split_{t}", lambda a, b: target(op("rlx.multiply", *op(
        "rlx.split", op("rlx.concat", a, b, axis=[0]), sections=2))), x, rand((1, 4), dt))
    s.case(f"strided_slice_{t}", lambda a: target(op("rlx.strided_slice", a, axes=[1],
                                                     begin=[3], end=[0], strides=[-2])), x)
    s.case(f"take_{t}", lambda a, i: target(op("rlx.take", a, i, axis=[1])), x,
           np.array([0, 3, 3], np.int64))
    s.case(f"triu_{t}", lambda a: target(op("rlx.triu", a, k=1)), x)
    for name in ("sum", "mean", "max", "min", "prod", "variance"):
        s.case(f"{name}_{t}", lambda a, n=name: target(op(f"rlx.{n}", a, axis=[1], keepdims=True)),
               pos)
    s.case(f"cumsum_{t}", lambda a: target(op("rlx.cumsum", a, axis=[1])), x)
    s.case(f"softmax_{t}", lambda a: target(op("rlx.softmax", a)), x)
    s.case(f"log_softmax_{t}", lambda a: target(op("rlx.log_softmax", a, axis=[0])), x)
    s.case(f"cross_entropy_{t}", lambda a, b: op("rlx.cross_entropy_with_logits",
                                                 op("rlx.log_softmax", a), b),
           x, rand((3, 4), dt, 0, 1))
    s.case(f"nll_loss_{t}", lambda a, i: op("rlx.nll_loss", op("rlx.log_softmax", a), i,
                                            reduction="mean"), x, ints((3,), 4))
    # Convolution gradients are sums of a few dozen products of values up to
    # ~4 in size, accumulated in another order than the interpreter's (GEMM
    # over im2col, col2im; the GPU build's order differs again): f32 rounding
    # reaches ~5e-6 there.
    conv_atol = 1e-5 if dt == np.float32 else None
    s.case(f"conv2d_{t}", lambda a, w: target(op("rlx.conv2d", a, w, strides=[2, 1],
                                                 padding=[1, 1, 0, 1], dilation=[1, 1], groups=1)),
           rand((2, 2, 5, 5), dt), rand((3, 2, 3, 3), dt), atol=conv_atol)
    s.case(f"conv2d_groups_{t}", lambda a, w: target(op(
        "rlx.conv2d", a, w, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[2, 2], groups=2)),
        rand((1, 4, 6, 6), dt), rand((2, 2, 3, 3), dt), atol=conv_atol)
    s.case(f"max_pool2d_{t}", lambda a: target(op("rlx.max_pool2d", a, pool_size=[3, 3],
                                                   strides=[2, 2], padding=[1, 1, 1, 1])),
           rand((1, 2, 6, 6), dt))
    s.case(f"avg_pool2d_{t}", lambda a: target(op("rlx.avg_pool2d", a, pool_size=[2, 2],
                                                   strides=[2, 2], padding=[0, 0, 0, 0],
                                                   ceil_mode=True)),
           rand((1, 2, 5, 5), dt))
    s.case(f"layer_norm_{t}", lambda a, g, b: target(op("rlx.layer_norm", a, g, b, axes=[-1],
                                                        epsilon=1e-5)),
           x, rand((4,), dt), rand((4,), dt))
    s.case(f"rms_norm_{t}", lambda a, w: target(op("rlx.rms_norm", a, w)), x, rand((4,), dt))
    s.case(f"checkpoint_{t}", lambda a: target(op("grad.end_checkpoint", op(
        "rlx.tanh", op("rlx.exp", op("grad.start_checkpoint", a))))), x)
    s.case(f"no_grad_{t}", lambda a, b: target(op("rlx.multiply", a, op("grad.no_grad", b))),
           x, rand((4,), dt))


def mlp(x, w1, b1, w2, b2, t):
    h = op("rlx.relu", op("rlx.add", op("rlx.matmul", x, w1), b1))
    logits = op("rlx.add", op("rlx.matmul", h, w2), b2)
    return op("rlx.nll_loss", op("rlx.log_softmax", logits, axis=[-1]), t, reduction="mean")


@run
def test_gradients():
    s = Suite("gradients", gradient=True)
    for dt in FLOATS:
        cases(s, dt)
        args = [rand(sh, dt) for sh in [(8, 5), (5, 6), (6,), (6, 3), (3,)]]
        s.case(f"mlp_{short(dt)}", mlp, *args, ints((8,), 3))
    s.run()

# CHECK-LABEL: TEST: test_gradients
# CHECK: ok gelu_f32
# CHECK: ok mlp_f32
# CHECK: ok conv2d_groups_f64
# CHECK: ok mlp_f64
# CHECK: gradients: all {{[0-9]+}} cases match the interpreter

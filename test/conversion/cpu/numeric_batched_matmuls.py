# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=0 %PYTHON %s | FileCheck %s
# Compiled against the reference interpreter: the matmuls of a Transformer
# layer and of its gradient.  Weight gradients of batched dense layers
# (collapse_sum_to of a batched matmul: one 2-D matmul over batch and K),
# with the activation's transpose composed away or materialized, and the
# result computed transposed for an x @ W^T weight; a kernel matmul whose
# result a bias add and a reshape read; a batched lhs times a transposed
# weight.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short  # noqa: E402


def tol(k, dt):
    return 1e-6 * k if dt is np.float32 else None


def collapse(x, shape, dt):
    return op("rlx.collapse_sum_to", x, result=(shape, dt))


@run
def test_batch_sums():
    s = Suite("batch sums")
    for dt in FLOATS:
        # sum_b dy_b^T @ x_b: the transpose of dy composes away
        s.case(f"weight_{short(dt)}",
               lambda x, dy, dt=dt: collapse(
                   op("rlx.matmul", op("rlx.permute_dims", dy, axes=[0, 2, 1]), x), (9, 7), dt),
               rand((3, 5, 7), dt), rand((3, 5, 9), dt), atol=tol(15, dt))
        # an activation (B, S, E) read as (S, E, B): one transpose, and the
        # result read by a 2-D transpose only: computed transposed
        s.case(f"weight_t_{short(dt)}",
               lambda x, dy, dt=dt: op("rlx.permute_dims", collapse(
                   op("rlx.matmul", op("rlx.permute_dims", x, axes=[1, 2, 0]), dy), (6, 10), dt)),
               rand((4, 17, 6), dt), rand((17, 4, 10), dt), atol=tol(68, dt))
        # two batch dims, K of 1, odd sizes
        s.case(f"weight_4d_{short(dt)}",
               lambda a, b, dt=dt: collapse(op("rlx.matmul", a, b), (5, 3), dt),
               rand((2, 3, 5, 1), dt), rand((2, 3, 1, 3), dt), atol=tol(6, dt))
        # the product also returned: not folded
        s.case(f"shared_{short(dt)}",
               lambda a, b, dt=dt: (lambda m: (collapse(m, (4, 6), dt), m))(op("rlx.matmul", a, b)),
               rand((3, 4, 5), dt), rand((3, 5, 6), dt))
    s.run()


@run
def test_dense_layers():
    s = Suite("dense layers")
    for dt in FLOATS:
        # attention's output projection: flatten, x @ W^T + b, unflatten
        s.case(f"out_proj_{short(dt)}",
               lambda x, w, b, dt=dt: op("rlx.reshape", op("rlx.add", op(
                   "rlx.matmul", op("rlx.reshape", x, result=((40, 32), dt)),
                   op("rlx.permute_dims", w)), b), result=((5, 8, 32), dt)),
               rand((5, 8, 4, 8), dt), rand((32, 32), dt), rand((32,), dt), atol=tol(32, dt))
        # a dense layer on (B, S, E) activations: x @ W^T, W read in place
        s.case(f"dense_{short(dt)}",
               lambda x, w: op("rlx.matmul", x, op("rlx.permute_dims", w)),
               rand((3, 7, 33), dt), rand((19, 33), dt), atol=tol(33, dt))
    s.run()


# CHECK-LABEL: TEST: test_batch_sums
# CHECK: ok weight_f32
# CHECK: ok weight_4d_f32
# CHECK: ok weight_t_f64
# CHECK: ok shared_f64
# CHECK: batch sums: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_dense_layers
# CHECK: ok out_proj_f32
# CHECK: ok dense_f64
# CHECK: dense layers: all {{[0-9]+}} cases match the interpreter

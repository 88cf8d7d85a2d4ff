# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=0 %PYTHON %s | FileCheck %s
# Compiled against the reference interpreter: matmuls of odd sizes (the
# schedule peels the register-tile loops instead of padding the operands),
# matmuls whose lhs is a transpose (read in place) or rhs is one (a
# materialized transpose), a transpose shared with another use, and the MLP
# layer shapes (784 inputs, 10 classes) with their backward products.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short  # noqa: E402


ODD = [(7, 13, 29), (1, 784, 10), (64, 512, 10), (20, 784, 50), (9, 300, 33), (17, 1, 5),
       (3, 2, 70), (25, 7, 1), (8, 32, 32)]


def tolerance(k, dt):
    # f32 sums of K products agree to about K * eps (summation order)
    return 1e-6 * k if dt is np.float32 else None


@run
def test_odd_sizes():
    s = Suite("odd sizes")
    for dt in FLOATS:
        for m, k, n in ODD:
            s.case(f"matmul_{m}x{k}x{n}_{short(dt)}", lambda a, b: op("rlx.matmul", a, b),
                   rand((m, k), dt), rand((k, n), dt), atol=tolerance(k, dt))
        for b, m, k, n in [(2, 7, 13, 29), (3, 20, 300, 50), (4, 1, 5, 10)]:
            s.case(f"batch_{b}x{m}x{k}x{n}_{short(dt)}", lambda x, y: op("rlx.matmul", x, y),
                   rand((b, m, k), dt), rand((b, k, n), dt), atol=tolerance(k, dt))
    s.run()


@run
def test_transposed():
    s = Suite("transposed")
    for dt in FLOATS:
        for m, k, n in [(784, 64, 512), (512, 64, 10), (7, 13, 29), (33, 5, 70), (1, 9, 1)]:
            # x^T @ dy (x is (k, m)): read in place
            s.case(f"lhs_t_{m}x{k}x{n}_{short(dt)}",
                   lambda x, dy: op("rlx.matmul", op("rlx.permute_dims", x, axes=[1, 0]), dy),
                   rand((k, m), dt), rand((k, n), dt), atol=tolerance(k, dt))
            # dy @ W^T (W is (n, k))
            s.case(f"rhs_t_{m}x{k}x{n}_{short(dt)}",
                   lambda dy, w: op("rlx.matmul", dy, op("rlx.permute_dims", w, axes=[1, 0])),
                   rand((m, k), dt), rand((n, k), dt), atol=tolerance(k, dt))
            # both, and the permutation left to its default (reversed axes)
            s.case(f"both_t_{m}x{k}x{n}_{short(dt)}",
                   lambda x, w: op("rlx.matmul", op("rlx.permute_dims", x),
                                   op("rlx.permute_dims", w)),
                   rand((k, m), dt), rand((n, k), dt), atol=tolerance(k, dt))
        # the transpose has another use (returned as well)
        s.case(f"lhs_t_shared_{short(dt)}",
               lambda x, y: (lambda t: (op("rlx.matmul", t, y), t))(
                   op("rlx.permute_dims", x, axes=[1, 0])),
               rand((6, 11), dt), rand((6, 3), dt))
    s.run()


# CHECK-LABEL: TEST: test_odd_sizes
# CHECK: ok matmul_7x13x29_f32
# CHECK: ok matmul_1x784x10_f64
# CHECK: ok batch_3x20x300x50_f64
# CHECK: odd sizes: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_transposed
# CHECK: ok lhs_t_784x64x512_f32
# CHECK: ok rhs_t_1x9x1_f64
# CHECK: ok lhs_t_shared_f64
# CHECK: transposed: all {{[0-9]+}} cases match the interpreter

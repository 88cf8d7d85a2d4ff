# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=0 %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=1 %PYTHON %s | FileCheck %s
# RUN: env GRADIR_PARALLEL_COMPILE=1 %PYTHON %s | FileCheck %s
# Function shapes and sizes that used to crash compiled code, against the
# interpreter at every opt level: one value returned twice (SIGSEGV in
# upstream buffer-results-to-out-params), arguments and constants returned
# as results, the adjoints of sum(x + y) and exp(x) (which return one value
# twice), matmuls with a zero dimension (SIGABRT in the LLVM schedule).

import os
import sys

import numpy as np
from mlir import ir
from mlir.dialects import arith

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import Suite, op, rand, run, tensor_type  # noqa: E402


def const(values, dt=np.float32):
    arr = np.asarray(values, dt)
    attr = ir.DenseElementsAttr.get(arr, type=tensor_type(arr.shape, dt))
    return arith.ConstantOp(tensor_type(arr.shape, dt), attr).result


@run
def test_result_shapes():
    s = Suite("result shapes")
    x, y = rand((3,), np.float32), rand((3,), np.float32)
    s.case("duplicate", lambda a, b: (op("rlx.add", a, b),) * 2, x, y)
    s.case("duplicate_0d", lambda a: (op("rlx.sum", a),) * 3, x)
    s.case("argument", lambda a, b: (a, b, a), x, y)
    s.case("argument_and_op", lambda a: (op("rlx.exp", a), a, op("rlx.exp", a)), x)
    s.case("constant_twice", lambda a: (const([1.0, 2.0]), const([1.0, 2.0]), a), x)
    s.case("reshaped_argument", lambda a: (op("rlx.reshape", a, result=((1, 3), np.float32)),
                                           a), x)
    s.case("bool_twice", lambda a, b: (op("rlx.less", a, b),) * 2, x, y)
    s.run()
# CHECK-LABEL: TEST: test_result_shapes
# CHECK: result shapes: all 7 cases match the interpreter


@run
def test_adjoints_with_repeated_results():
    s = Suite("adjoints", gradient=True)
    x, y = rand((3,)), rand((3,))
    s.case("sum_add", lambda a, b: op("rlx.sum", op("rlx.add", a, b)), x, y)
    s.case("sum_exp", lambda a: op("rlx.sum", op("rlx.exp", a)), x)
    s.case("identity_0d", lambda a: a, np.float64(2.0))
    s.case("sum_sub", lambda a, b: op("rlx.sum", op("rlx.subtract", a, b)), x, y)
    s.run()
# CHECK-LABEL: TEST: test_adjoints_with_repeated_results
# CHECK: adjoints: all 4 cases match the interpreter


@run
def test_zero_size_matmul():
    s = Suite("zero-size matmul")
    mm = lambda a, b: op("rlx.matmul", a, b)  # noqa: E731
    for sa, sb in [((0, 3), (3, 5)), ((3, 0), (0, 5)), ((3, 4), (4, 0)), ((0,), (0,)),
                   ((0, 2, 3), (3, 4)), ((2, 0, 3), (2, 3, 4)), ((0,), (0, 3)), ((4, 0), (0,))]:
        s.case(f"matmul_{sa}_{sb}", mm, rand(sa, np.float32), rand(sb, np.float32))
    s.run()
# CHECK-LABEL: TEST: test_zero_size_matmul
# CHECK: zero-size matmul: all 8 cases match the interpreter


@run
def test_zero_size_ops():
    # Ops with an empty result or an empty operand (hostile-input review:
    # conv2d with 0 output channels aborted in linalg's tiling, max_pool2d of
    # 0 images failed to compile, strided_slice of an empty tensor beside
    # another result crashed --rlx-lower-to-llvm): an op whose results have
    # no element becomes tensor.empty in rlx-to-linalg; reductions over an
    # empty dimension are constants (sum 0, prod 1: the GPU pipeline's
    # reduction kernels gave NaN).
    s = Suite("zero-size ops")
    s.case("conv2d_no_out_channels", lambda a, w: op("rlx.conv2d", a, w),
           rand((1, 1, 4, 4), np.float32), rand((0, 1, 3, 3), np.float32))
    s.case("conv2d_no_in_channels", lambda a, w: op("rlx.conv2d", a, w),
           rand((1, 0, 4, 4), np.float32), rand((2, 0, 3, 3), np.float32))
    s.case("conv2d_transpose_no_in_channels", lambda a, w: op("rlx.conv2d_transpose", a, w),
           rand((1, 0, 2, 2), np.float32), rand((0, 1, 3, 3), np.float32))
    s.case("max_pool2d_no_images", lambda a: op("rlx.max_pool2d", a, pool_size=[2, 2]),
           rand((0, 1, 4, 4), np.float32))
    s.case("strided_slice_empty_and_exp",
           lambda a: (op("rlx.strided_slice", a, axes=[0], begin=[0], end=[5], strides=[1]),
                      op("rlx.exp", a)), rand((0,), np.float32))
    s.case("sum_empty_axis", lambda a: op("rlx.sum", a, axis=[1]), rand((3, 0), np.float32))
    s.case("prod_empty_axis", lambda a: op("rlx.prod", a, axis=[0]), rand((0, 2), np.float32))
    s.run()
# CHECK-LABEL: TEST: test_zero_size_ops
# CHECK: zero-size ops: all 7 cases match the interpreter


@run
def test_extreme_attributes():
    # Attribute values at the ends of int64 that the compiled code accepts
    # and the interpreter overflowed on (hostile-input review).
    s = Suite("extreme attributes")
    x = rand((3, 4), np.float32)
    for k in (-(1 << 63), (1 << 63) - 1, -3, 4):
        s.case(f"triu_k{k}", lambda a, k=k: op("rlx.triu", a, k=k), x)
    s.case("conv2d_huge_strides", lambda a, w: op("rlx.conv2d", a, w,
                                                 strides=[(1 << 63) - 1] * 2),
           rand((1, 1, 4, 4), np.float32), rand((1, 1, 3, 3), np.float32))
    s.run()
# CHECK-LABEL: TEST: test_extreme_attributes
# CHECK: extreme attributes: all 5 cases match the interpreter

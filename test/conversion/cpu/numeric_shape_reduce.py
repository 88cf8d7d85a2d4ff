# RUN: %PYTHON %s | FileCheck %s
# Compiled against the reference interpreter: shape ops (views, slices,
# gathers, concat/split, bool and integer tensors too) and reductions, in
# f32 and f64.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, bools, ints, op, rand, run, short  # noqa: E402


@run
def test_shape():
    s = Suite("shape")
    for dt in FLOATS:
        t = short(dt)
        x = rand((2, 3, 4), dt)
        s.case(f"permute_dims_{t}", lambda a: op("rlx.permute_dims", a, axes=[1, 2, 0]), x)
        s.case(f"permute_dims_rev_{t}", lambda a: op("rlx.permute_dims", a), x)
        # Rank 4 keeping the innermost axis (a copy generic): alone, and fused
        # with an elementwise producer and consumer.
        x4 = rand((2, 3, 4, 5), dt)
        s.case(f"permute_dims_rows_{t}", lambda a: op("rlx.permute_dims", a, axes=[2, 0, 1, 3]),
               x4)
        s.case(f"permute_dims_rows_fused_{t}", lambda a: op("rlx.exp", op(
            "rlx.permute_dims", op("rlx.sin", a), axes=[1, 0, 2, 3])), x4)
        for src, dst in [((2, 3), (3, 2)), ((2, 3, 4), (6, 4)), ((6,), (2, 1, 3)), ((), (1, 1)),
                         ((1, 1), ()), ((4, 6), (2, 2, 3, 2)), ((2, 1, 3), (3, 2))]:
            s.case(f"reshape_{src}_{dst}_{t}",
                   lambda a, d=dst, dd=dt: op("rlx.exp", op("rlx.reshape", a, result=(d, dd))),
                   rand(src, dt))
        for src, dst in [((3,), (2, 3)), ((3, 1), (3, 4)), ((), (2, 2)), ((1, 3, 1), (2, 3, 4)),
                         ((2, 3), (2, 3))]:
            s.case(f"broadcast_to_{src}_{dst}_{t}",
                   lambda a, d=dst, dd=dt: op("rlx.broadcast_to", a, result=(d, dd)),
                   rand(src, dt))
        for axis in ([0], [-1], [0, 3], [1]):
            s.case(f"expand_dims_{axis}_{t}", lambda a, ax=axis: op("rlx.expand_dims", a, axis=ax),
                   rand((2, 3), dt))
        s.case(f"squeeze_{t}", lambda a: op("rlx.squeeze", a), rand((1, 3, 1, 2), dt))
        s.case(f"squeeze_axis_{t}", lambda a: op("rlx.squeeze", a, axis=[2]), rand((1, 3, 1, 2), dt))
        s.case(f"flatten_{t}", lambda a: op("rlx.flatten", a), x)
        for axis in ([0], [1], [-1]):
            shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
            for i, sh in enumerate(shapes):
                sh[axis[0]] += i
            s.case(f"concat_{axis}_{t}",
                   lambda a, b, c, ax=axis: op("rlx.concat", a, b, c, axis=ax),
                   *[rand(sh, dt) for sh in shapes])
        s.case(f"concat_default_{t}", lambda a, b: op("rlx.concat", a, b),
               rand((1, 2), dt), rand((3, 2), dt))
        y = rand((7, 3), dt)
        s.case(f"split_sections_{t}",
               lambda a: tuple(op("rlx.split", a, sections=3)), y)
        s.case(f"split_sections_empty_{t}",
               lambda a: tuple(op("rlx.split", a, sections=4, axis=[1])), rand((2, 6), dt))
        s.case(f"split_indices_{t}",
               lambda a: tuple(op("rlx.split", a, indices=[1, 4])), y)
        s.case(f"split_indices_neg_{t}",
               lambda a: tuple(op("rlx.split", a, indices=[-2], axis=[0])), y)
        z = rand((6, 5), dt)
        for name, kw in [("pos", dict(axes=[0, 1], begin=[1, 0], end=[5, 5], strides=[2, 1])),
                         ("neg", dict(axes=[1], begin=[4], end=[0], strides=[-2])),
                         ("neg_full", dict(axes=[0, 1], begin=[-1, 10], end=[-10, -10],
                                           strides=[-1, -3])),
                         ("clamp", dict(axes=[1], begin=[-100], end=[100])),
                         ("empty", dict(axes=[0], begin=[3], end=[1]))]:
            s.case(f"strided_slice_{name}_{t}",
                   lambda a, k=kw: op("rlx.strided_slice", a, **k), z)
        for it in (np.int32, np.int64):
            s.case(f"take_axis0_{short(it)}_{t}", lambda a, i: op("rlx.take", a, i, axis=[0]),
                   z, np.array([[0, 5], [-1, 2]], dtype=it))
        s.case(f"take_axis1_{t}", lambda a, i: op("rlx.take", a, i, axis=[1]),
               z, np.array([4, 0, -2, 1], dtype=np.int64))
        s.case(f"take_flat_{t}", lambda a, i: op("rlx.take", a, i),
               z, np.array([29, 0, 7], dtype=np.int64))
        s.case(f"take_0d_{t}", lambda a, i: op("rlx.take", a, i, axis=[0]),
               z, np.array(3, dtype=np.int64))
        for k in (0, 1, -1):
            s.case(f"triu_{k}_{t}", lambda a, kk=k: op("rlx.triu", a, k=kk), rand((2, 4, 5), dt))
        for src, dst in [((2, 3, 4), (3, 4)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 1, 4)),
                         ((2, 3), ()), ((2, 3), (2, 3))]:
            s.case(f"collapse_sum_to_{src}_{dst}_{t}",
                   lambda a, d=dst, dd=dt: op("rlx.collapse_sum_to", a, result=(d, dd)),
                   rand(src, dt))
    b = bools((3, 4))
    s.case("bool_permute", lambda a: op("rlx.permute_dims", a), b)
    s.case("bool_permute_rows", lambda a: op("rlx.permute_dims", a, axes=[1, 0, 2]),
           bools((2, 3, 4)))
    s.case("bool_concat", lambda a, c: op("rlx.concat", a, c, axis=[1]), b, bools((3, 2)))
    s.case("bool_take", lambda a, i: op("rlx.take", a, i, axis=[1]), b,
           np.array([3, 0], np.int64))
    s.case("bool_split", lambda a: tuple(op("rlx.split", a, sections=2)), bools((4, 2)))
    s.case("bool_triu", lambda a: op("rlx.triu", a, k=0), b)
    s.case("int_reshape_slice", lambda a: op("rlx.strided_slice", op(
        "rlx.reshape", a, result=((4, 3), np.int32)), axes=[0], begin=[3], end=[0], strides=[-1]),
        ints((3, 4), 100, np.int32))
    s.case("int_broadcast", lambda a: op("rlx.broadcast_to", a, result=((2, 3), np.int64)),
           ints((3,), 9))
    # tuple-typed results (flattened by rlx-to-linalg, re-nested by the runtime)
    s.case("tuple_nested", lambda a, b: op("rlx.tuple", op("rlx.exp", a),
                                           op("rlx.tuple", b, op("rlx.greater", a, a))),
           rand((2, 3)), rand((4,)))
    s.case("tuple_get_item", lambda a, b: op("rlx.tuple_get_item", op(
        "rlx.tuple", a, op("rlx.negative", b)), index=1), rand((2,)), rand((3,)))
    s.run()


@run
def test_reduce():
    s = Suite("reduce")
    for dt in FLOATS:
        t = short(dt)
        x = rand((3, 4, 5), dt, 0.5, 1.5)
        for name in ("sum", "mean", "max", "min", "prod", "variance"):
            for axis in (None, [0], [-1], [0, 2], [1]):
                for keep in (False, True):
                    kw = {} if axis is None else {"axis": axis}
                    if keep:
                        kw["keepdims"] = True
                    s.case(f"{name}_{axis}_{keep}_{t}", lambda a, n=name, k=kw: op(f"rlx.{n}", a, **k),
                           x)
            s.case(f"{name}_0d_{t}", lambda a, n=name: op(f"rlx.{n}", a), rand((), dt))
        s.case(f"max_nan_{t}", lambda a: op("rlx.max", a, axis=[1]),
               np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 0.5]], dtype=dt))
        for axis in (None, [0], [1], [-1]):
            kw = {} if axis is None else {"axis": axis}
            s.case(f"cumsum_{axis}_{t}", lambda a, k=kw: op("rlx.cumsum", a, **k),
                   rand((4, 5), dt))
        s.case(f"cumsum_1_{t}", lambda a: op("rlx.cumsum", a, axis=[0]), rand((1, 3), dt))
    s.run()

# CHECK-LABEL: TEST: test_shape
# CHECK: ok permute_dims_rows_fused_f32
# CHECK: ok split_sections_empty_f32
# CHECK: ok strided_slice_neg_full_f64
# CHECK: ok bool_permute_rows
# CHECK: ok bool_take
# CHECK: ok tuple_nested
# CHECK: shape: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_reduce
# CHECK: ok variance_[0, 2]_True_f64
# CHECK: ok cumsum_None_f64
# CHECK: reduce: all {{[0-9]+}} cases match the interpreter

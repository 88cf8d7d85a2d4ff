# RUN: %PYTHON %s | FileCheck %s
# rlx.max_pool2d_with_indices and rlx.max_pool2d_indices_backward compiled
# (conversion/linalg/pool_indices.py; with the kernels, the saved-index
# kernels of pool_index_kernels.py for 2x2/2 and the 3x3/2 stem pool): on
# data full of ties, NaN, +-inf and -0.0, for 9 geometries (kernel ones,
# floor-mode odd sizes, overlapping, padded, dilated, ceil mode, a 5x5
# window), f32 and f64, kernels on and off, 1 and 2 threads, the values
# and positions are the interpreter's (bitwise the same with and without
# the kernels, at 1 and 2 threads), and the backward from the positions is
# bitwise max_pool2d_backward's (which recomputes them).  Each program
# is also exported, loaded and run again (oracle.export_differences).
# A gradient step cut in two parts (runtime/partition.py, forced) after
# rlx-pool-indices passes the stem pool's positions from the first part to
# the second: the same bits as the step compiled whole without the pass.

import contextlib
import os
import re

import numpy as np

import gradir
from gradir.testing.oracle import export_differences

rng = np.random.default_rng(43)
DT = {"f32": np.float32, "f64": np.float64}


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def t(shape, elt):
    return "tensor<" + "x".join(map(str, shape)) + f"x{elt}>"


def out_size(size, k, s, p0, p1, d, ceil):
    span = size + p0 + p1 - d * (k - 1) - 1
    return (-(-span // s) if ceil else span // s) + 1


def module(xs, k, s, pad, dil=(1, 1), ceil=False, elt="f32"):
    attrs = (f"{{pool_size = array<i64: {k[0]}, {k[1]}>, strides = array<i64: {s[0]}, {s[1]}>, "
             f"padding = array<i64: {', '.join(map(str, pad))}>, dilation = array<i64: "
             f"{dil[0]}, {dil[1]}>{', ceil_mode = true' if ceil else ''}}}")
    ys = [xs[0], xs[1], out_size(xs[2], k[0], s[0], pad[0], pad[2], dil[0], ceil),
          out_size(xs[3], k[1], s[1], pad[1], pad[3], dil[1], ceil)]
    X, Y, I = t(xs, elt), t(ys, elt), t(ys, "i32")
    return gradir.parse(f"""
func.func @main(%x: {X}, %g: {Y}) -> ({Y}, {I}, {X}, {X}) {{
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {attrs} : ({X}) -> ({Y}, {I})
  %dx = "rlx.max_pool2d_indices_backward"(%g, %y#1) {attrs} : ({Y}, {I}) -> {X}
  %r = "rlx.max_pool2d_backward"(%g, %x) {attrs} : ({Y}, {X}) -> {X}
  return %y#0, %y#1, %dx, %r : {Y}, {I}, {X}, {X}
}}"""), ys


def data(shape, dtype):
    """Ties (zeros, a coarse grid), NaN, +-inf and -0.0."""
    x = np.round(rng.standard_normal(shape) * 2) / 2
    x[rng.random(shape) < 0.3] = 0.0
    flat = x.reshape(-1)
    for value, step in ((np.nan, 37), (np.inf, 41), (-np.inf, 43), (-0.0, 5)):
        flat[rng.integers(0, step):: step] = value
    return x.astype(dtype)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# name: (input shape, window, strides, padding, dilation, ceil, element type)
CASES = {"2x2/2": ((2, 3, 8, 36), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False, "f32"),
         "2x2/2 f64": ((3, 2, 6, 38), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False, "f64"),
         "2x2/2 odd": ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False, "f32"),
         "3x3/2 pad 1": ((2, 3, 10, 44), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, "f32"),
         "3x3/2 pad 1 f64": ((2, 3, 10, 12), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, "f64"),
         "3x3/2 pad 1 odd": ((2, 3, 9, 9), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, "f32"),
         "3x3/1 overlap": ((2, 2, 7, 6), (3, 3), (1, 1), (1, 0, 1, 0), (1, 1), False, "f32"),
         "dilated ceil": ((2, 2, 10, 9), (3, 2), (2, 2), (0, 1, 0, 1), (2, 1), True, "f64"),
         "5x5 window": ((1, 2, 12, 11), (5, 5), (2, 3), (2, 2, 2, 2), (1, 1), False, "f32")}


@run
def test_geometries():
    for name, (xs, k, s, pad, dil, ceil, elt) in CASES.items():
        m, ys = module(xs, k, s, pad, dil, ceil, elt)
        x, g = data(xs, DT[elt]), rng.standard_normal(ys).astype(DT[elt])
        want = gradir.interpret(m, "main", x, g)
        first = None
        for kernels, threads in ((False, 1), (True, 1), (True, 2)):
            exe = gradir.compile(m, cache=False, kernels=kernels, threads=threads)
            got = exe["main"](x, g)
            # (the interpreter's numpy max may keep -0.0 where maximumf gives +0.0)
            np.testing.assert_array_equal(got[0], want[0])
            assert same_bits(got[1], want[1]), (name, kernels)
            assert same_bits(got[2], got[3]), (name, kernels, threads)
            np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-6)
            first = first or got
            assert all(same_bits(a, b) for a, b in zip(got, first)), (name, kernels, threads)
            calls = [("main", "main", [x, g], got)]
            problems = export_differences(exe, calls)
            assert not problems, problems
        saved = sorted(set(re.findall(r"_(max_pool\w+_indices32)_f", exe.llvm_ir)))
        print(f"{name} ok {' '.join(saved) or 'generic'}")
# CHECK-LABEL: TEST: test_geometries
# CHECK-NEXT: 2x2/2 ok max_pool2x2_backward_indices32 max_pool2x2_indices32
# CHECK-NEXT: 2x2/2 f64 ok max_pool2x2_backward_indices32 max_pool2x2_indices32
# CHECK-NEXT: 2x2/2 odd ok max_pool2x2_indices32
# CHECK-NEXT: 3x3/2 pad 1 ok max_pool3x3s2_backward_indices32 max_pool3x3s2_indices32
# CHECK-NEXT: 3x3/2 pad 1 f64 ok max_pool3x3s2_backward_indices32 max_pool3x3s2_indices32
# CHECK-NEXT: 3x3/2 pad 1 odd ok generic
# CHECK-NEXT: 3x3/1 overlap ok generic
# CHECK-NEXT: dilated ceil ok generic
# CHECK-NEXT: 5x5 window ok generic


STEP = """
func.func @main(%x: tensor<4x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %v: tensor<8x8x3x3xf32>)
    -> tensor<f32> {
  %c = "rlx.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x16x16xf32>
  %r = "rlx.relu"(%c) : (tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32>
  %p = "rlx.max_pool2d"(%r) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      padding = array<i64: 1, 1, 1, 1>} : (tensor<4x8x16x16xf32>) -> tensor<4x8x8x8xf32>
  %d = "rlx.conv2d"(%p, %v) {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<4x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<4x8x8x8xf32>
  %e = "rlx.tanh"(%d) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %f = "rlx.conv2d"(%e, %v) {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<4x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<4x8x8x8xf32>
  %q = "rlx.multiply"(%f, %f) : (tensor<4x8x8x8xf32>, tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %s = "rlx.sum"(%q) : (tensor<4x8x8x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
"""


@contextlib.contextmanager
def parallel_compile(flag):
    saved = os.environ.get("GRADIR_PARALLEL_COMPILE")
    os.environ["GRADIR_PARALLEL_COMPILE"] = flag
    try:
        yield
    finally:
        if saved is None:
            del os.environ["GRADIR_PARALLEL_COMPILE"]
        else:
            os.environ["GRADIR_PARALLEL_COMPILE"] = saved


@run
def test_cut_step():
    from gradir.runtime import partition
    plain = gradir.run_pipeline(gradir.parse(STEP), "builtin.module(rlx-gradient{wrt=0,1,2})")
    saved = gradir.run_pipeline(gradir.parse(str(plain)), "builtin.module(rlx-pool-indices)")
    split = partition._split_copy(saved.operation, "on", ["main_adjoint"], True)
    parts = gradir.parse(split[4])
    for fn in parts.body.operations:
        text = str(fn)
        ops = [op for op in ("max_pool2d_with_indices", "max_pool2d_indices_backward")
               if f'"rlx.{op}"' in text]
        print(fn.attributes["sym_name"], " ".join(ops))
    args = [data((4, 3, 16, 16), np.float32), rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
            rng.standard_normal((8, 8, 3, 3)).astype(np.float32)]
    with parallel_compile("on"):
        cut = gradir.compile(saved, cache=False, threads=1)
    with parallel_compile("off"):
        whole = gradir.compile(plain, cache=False, threads=1)
    got, want = cut["main_adjoint"](*args), whole["main_adjoint"](*args)
    assert all(same_bits(a, b) for a, b in zip(got, want))
    problems = export_differences(cut, [("main_adjoint", "main_adjoint", args, got)])
    assert not problems, problems
    print("cut step ok")
# CHECK-LABEL: TEST: test_cut_step
# CHECK: "main_adjoint__part0" max_pool2d_with_indices
# CHECK-NEXT: "main_adjoint__part1" max_pool2d_indices_backward
# CHECK-NEXT: cut step ok

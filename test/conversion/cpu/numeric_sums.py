# RUN: %PYTHON %s | FileCheck %s
# Compiled f32 sums are blocked (rlx-to-linalg{sum-block=256} in the CPU
# pipeline), so their error grows like numpy's pairwise sum, not linearly:
# 4e6 x 0.1f sums to 400000 within 1e-5 (sequentially: 1.3% off), 2^24 + 4096
# ones sum exactly (sequentially: stuck at 2^24), along any axis, with tails
# that are not a multiple of the block; mean goes through the same sums.

import numpy as np

import gradir


def compiled(op, shape, result, attrs=""):
    t = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    r = "tensor<" + "".join(f"{d}x" for d in result) + "f32>"
    m = gradir.parse(f"""func.func @main(%x: {t}) -> {r} {{
  %0 = "rlx.{op}"(%x) {attrs} : ({t}) -> {r}
  return %0 : {r}
}}""")
    return gradir.compile(m)["main"]


def rel(got, want):
    return float(np.max(np.abs(np.float64(got) - want) / np.abs(want)))


n = 4_000_000
x = np.full(n, 0.1, np.float32)
exact = n * np.float64(np.float32(0.1))
print("sum 4e6 x 0.1 relative error < 1e-5:", rel(compiled("sum", (n,), ())(x), exact) < 1e-5)
print("mean 4e6 x 0.1 relative error < 1e-5:",
      rel(compiled("mean", (n,), ())(x), exact / n) < 1e-5)
n = 2**24 + 4096
print("sum of 2^24 + 4096 ones exact:",
      float(compiled("sum", (n,), ())(np.ones(n, np.float32))) == n)
rng = np.random.default_rng(0)
x = rng.uniform(0, 1, (3, 70001)).astype(np.float32)
want = x.astype(np.float64)
for axis, shape in ((1, (3,)), (0, (70001,))):
    got = compiled("sum", x.shape, shape, f"{{axis = array<i64: {axis}>}}")(x)
    print(f"axis {axis} relative error < 1e-6:", rel(got, want.sum(axis=axis)) < 1e-6)
got = compiled("sum", x.shape, ())(x)
print("all axes relative error < 1e-6:", rel(got, want.sum()) < 1e-6)
# Several reduced axes in stages (inner axes of at most 256 elements together
# in one stage, a longer axis blocked).
for shape, axes, result in (((64, 16, 8, 8), (0, 2, 3), (16,)),
                            ((3, 300, 4, 2), (0, 1, 3), (4,))):
    x = rng.uniform(0, 1, shape).astype(np.float32)
    attrs = "{axis = array<i64: " + ", ".join(map(str, axes)) + ">}"
    got = compiled("sum", shape, result, attrs)(x)
    print(f"axes {axes} relative error < 1e-6:",
          rel(got, x.astype(np.float64).sum(axis=axes)) < 1e-6)
# max/min over a long innermost axis run as 32 interleaved lanes, then the
# lanes and the tail: the same values as the interpreter, NaN in the head or
# the tail propagated.
for op in ("max", "min"):
    x = rng.uniform(-1, 1, (3, 1001)).astype(np.float32)
    x[1, 7], x[2, 1000] = np.nan, np.nan
    m = gradir.parse(f"""func.func @main(%x: tensor<3x1001xf32>) -> tensor<3xf32> {{
  %0 = "rlx.{op}"(%x) {{axis = array<i64: 1>}} : (tensor<3x1001xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}}""")
    got = compiled(op, (3, 1001), (3,), "{axis = array<i64: 1>}")(x)
    print(f"{op} lanes match the interpreter:",
          np.array_equal(got, gradir.interpret(m, "main", x)[0], equal_nan=True)
          and bool(np.isnan(got[1:]).all()))
# CHECK: sum 4e6 x 0.1 relative error < 1e-5: True
# CHECK: mean 4e6 x 0.1 relative error < 1e-5: True
# CHECK: sum of 2^24 + 4096 ones exact: True
# CHECK: axis 1 relative error < 1e-6: True
# CHECK: axis 0 relative error < 1e-6: True
# CHECK: all axes relative error < 1e-6: True
# CHECK: axes (0, 2, 3) relative error < 1e-6: True
# CHECK: axes (0, 1, 3) relative error < 1e-6: True
# CHECK: max lanes match the interpreter: True
# CHECK: min lanes match the interpreter: True

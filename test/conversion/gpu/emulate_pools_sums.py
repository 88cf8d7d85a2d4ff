# RUN: %PYTHON %s | FileCheck %s
# The programs of numeric_pool_kernels and numeric_sums compiled for the GPU
# (gradir.compile(target="cuda"): kernels to PTX, no GPU needed) and run by
# the SIMT emulator:
# * 2x2 max and average pools of stride 2 and their backward, every shape
#   of numeric_pool_kernels (output rows of 1 to 40 columns, odd rows and
#   columns, several images and channels; the large one of its thread
#   test), f32 and f64, on data full of ties, NaN, +-inf and -0.0: max
#   pools exactly the interpreter's (the first maximum, the first NaN),
#   average pools to rounding; overlapping padded windows with NaN; pools
#   of a strided view; a small CNN's gradient step;
# * numeric_sums' long f32 sums: 4e6 x 0.1 and its mean within 1e-5 of the
#   exact value, 2^24 + 4096 ones exactly, long axes and several reduced
#   axes within 1e-6 (the error of pairwise or blocked sums, not of one
#   sequential sum).

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from emulate_helpers import definitions, emulated, mismatch  # noqa: E402

import gradir  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

P = definitions(os.path.join(HERE, "..", "cpu", "numeric_pool_kernels.py"))
rng = P.rng


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def merged(modules):
    """One module holding @f of each module as @f<i> (one compilation)."""
    bodies = []
    for i, m in enumerate(modules):
        text = gradir.print_module(m).strip()
        assert text.startswith("module {") and text.endswith("}"), text[:100]
        bodies.append(text[len("module {"):-1].replace("func.func @f(", f"func.func @f{i}("))
    return gradir.parse("module {\n" + "\n".join(bodies) + "\n}")


def tolerance(kind, dtype):
    """Max pools: exact (NaN as NaN); average pools: to rounding."""
    if kind == "max":
        return 0.0, 0.0
    return (1e-6 if dtype == np.float32 else 1e-14), 1e-30


def pools(direction, shapes):
    for kind in ("max", "avg"):
        for elt in ("f32", "f64"):
            dtype = P.DT[elt]
            modules, inputs = [], []
            for shape in shapes:
                x = P.data(shape, dtype)
                if direction == "forward":
                    modules.append(P.forward_module(shape, elt, kind))
                    inputs.append([x])
                else:
                    modules.append(P.backward_module(shape, elt, kind))
                    g = rng.standard_normal([shape[0], shape[1], shape[2] // 2,
                                             shape[3] // 2]).astype(dtype)
                    inputs.append([g, x])
            module = merged(modules)
            exe = emulated(module)
            bad, launches = [], 0
            for i, args in enumerate(inputs):
                want = gradir.interpret(module, f"f{i}", *args)
                problem = mismatch(exe[f"f{i}"](*args), want, *tolerance(kind, dtype))
                launches += exe.emulator.last_launches
                if problem:
                    bad.append(f"{shapes[i]}: {problem}")
            print(f"{kind} {elt}: {len(shapes) - len(bad)} of {len(shapes)} shapes ok, "
                  f"{launches} launches", *bad)


@run
def test_forward():
    pools("forward", P.SHAPES + [(5, 8, 128, 130)])
# CHECK-LABEL: TEST: test_forward
# CHECK-NEXT: max f32: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: max f64: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: avg f32: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: avg f64: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches


@run
def test_backward():
    # windows that tile the input, as numeric_pool_kernels' backward
    pools("backward", [tuple(s - s % 2 for s in shape) for shape in P.SHAPES]
          + [(5, 8, 128, 130)])
# CHECK-LABEL: TEST: test_backward
# CHECK-NEXT: max f32: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: max f64: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: avg f32: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: avg f64: 16 of 16 shapes ok, {{[1-9][0-9]*}} launches


@run
def test_gradient_step():
    for elt, kind in (("f32", "max"), ("f64", "max"), ("f32", "avg")):
        m = gradir.parse(P.CNN.replace("xT>", f"x{elt}>").replace("<T>", f"<{elt}>")
                         .replace("rlx.max_pool2d", f"rlx.{kind}_pool2d"))
        gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=main wrt=1,2})")
        args = [rng.standard_normal(s).astype(P.DT[elt])
                for s in ((4, 2, 12, 12), (3, 2, 3, 3), (75, 5))]
        tol = 1e-5 if elt == "f32" else 1e-12
        exe = emulated(m)
        want = gradir.interpret(m, "main_adjoint", *args)
        problem = mismatch(exe["main_adjoint"](*args), want, tol, tol, relative=True)
        print(f"{kind} {elt}: {problem or 'ok'}, {exe.emulator.last_launches} launches")
# CHECK-LABEL: TEST: test_gradient_step
# CHECK-NEXT: max f32: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: max f64: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: avg f32: ok, {{[1-9][0-9]*}} launches


@run
def test_nan_windows_generic():
    # overlapping padded windows: the first NaN is the maximum
    shape, out = (2, 3, 9, 9), (2, 3, 5, 5)
    attrs = ("{pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
             "padding = array<i64: 1, 1, 1, 1>}")
    for elt in ("f32", "f64"):
        t = P.t
        m = gradir.parse(f"""
func.func @f(%g: {t(out, elt)}, %x: {t(shape, elt)}) -> {t(shape, elt)} {{
  %dx = "rlx.max_pool2d_backward"(%g, %x) {attrs} : ({t(out, elt)}, {t(shape, elt)}) -> {t(shape, elt)}
  return %dx : {t(shape, elt)}
}}""")
        x = P.data(shape, P.DT[elt])
        g = rng.standard_normal(out).astype(P.DT[elt])
        exe = emulated(m)
        problem = mismatch(exe["f"](g, x), gradir.interpret(m, "f", g, x),
                           1e-6 if elt == "f32" else 1e-14, 0.0)
        print(f"{elt}: {problem or 'ok'}, {exe.emulator.last_launches} launches")
# CHECK-LABEL: TEST: test_nan_windows_generic
# CHECK-NEXT: f32: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: f64: ok, {{[1-9][0-9]*}} launches


@run
def test_strided_views():
    for kind in ("max", "avg"):
        m = gradir.parse(f"""
func.func @f(%x: tensor<2x3x8x16xf32>, %g: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) {{
  %s = "rlx.strided_slice"(%x) {{axes = array<i64: 3>, begin = array<i64: 0>, end = array<i64: 16>, strides = array<i64: 2>}} : (tensor<2x3x8x16xf32>) -> tensor<2x3x8x8xf32>
  %y = "rlx.{kind}_pool2d"(%s) {P.POOL} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %d = "rlx.{kind}_pool2d_backward"(%g, %s) {P.POOL} : (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  return %y, %d : tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>
}}""")
        x = P.data((2, 3, 8, 16), np.float32)
        g = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
        exe = emulated(m)
        problem = mismatch(exe["f"](x, g), gradir.interpret(m, "f", x, g),
                           *tolerance(kind, np.float32))
        print(f"{kind}: {problem or 'ok'}, {exe.emulator.last_launches} launches")
# CHECK-LABEL: TEST: test_strided_views
# CHECK-NEXT: max: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: avg: ok, {{[1-9][0-9]*}} launches


def summed(op, x, result, attrs=""):
    t = "tensor<" + "x".join(map(str, x.shape)) + "xf32>"
    r = "tensor<" + "".join(f"{d}x" for d in result) + "f32>"
    m = gradir.parse(f"""func.func @main(%x: {t}) -> {r} {{
  %0 = "rlx.{op}"(%x) {attrs} : ({t}) -> {r}
  return %0 : {r}
}}""")
    return emulated(m)["main"](x)


def rel(got, want):
    return float(np.max(np.abs(np.float64(got) - want) / np.abs(want)))


@run
def test_sums():
    n = 4_000_000
    x = np.full(n, 0.1, np.float32)
    exact = n * np.float64(np.float32(0.1))
    print("sum 4e6 x 0.1 relative error < 1e-5:", rel(summed("sum", x, ()), exact) < 1e-5)
    print("mean 4e6 x 0.1 relative error < 1e-5:",
          rel(summed("mean", x, ()), exact / n) < 1e-5)
    n = 2**24 + 4096
    print("sum of 2^24 + 4096 ones exact:",
          float(summed("sum", np.ones(n, np.float32), ())) == n)
    x = rng.uniform(0, 1, (3, 70001)).astype(np.float32)
    want = x.astype(np.float64)
    for axis, shape in ((1, (3,)), (0, (70001,))):
        got = summed("sum", x, shape, f"{{axis = array<i64: {axis}>}}")
        print(f"axis {axis} relative error < 1e-6:", rel(got, want.sum(axis=axis)) < 1e-6)
    print("all axes relative error < 1e-6:", rel(summed("sum", x, ()), want.sum()) < 1e-6)
    for shape, axes, result in (((64, 16, 8, 8), (0, 2, 3), (16,)),
                                ((3, 300, 4, 2), (0, 1, 3), (4,))):
        x = rng.uniform(0, 1, shape).astype(np.float32)
        attrs = "{axis = array<i64: " + ", ".join(map(str, axes)) + ">}"
        print(f"axes {axes} relative error < 1e-6:",
              rel(summed("sum", x, result, attrs), x.astype(np.float64).sum(axis=axes)) < 1e-6)
# CHECK-LABEL: TEST: test_sums
# CHECK-NEXT: sum 4e6 x 0.1 relative error < 1e-5: True
# CHECK-NEXT: mean 4e6 x 0.1 relative error < 1e-5: True
# CHECK-NEXT: sum of 2^24 + 4096 ones exact: True
# CHECK-NEXT: axis 1 relative error < 1e-6: True
# CHECK-NEXT: axis 0 relative error < 1e-6: True
# CHECK-NEXT: all axes relative error < 1e-6: True
# CHECK-NEXT: axes (0, 2, 3) relative error < 1e-6: True
# CHECK-NEXT: axes (0, 1, 3) relative error < 1e-6: True

# RUN: %PYTHON %s | FileCheck %s
# gradir.compile(..., kernels=True): 2x2 max pools of stride 2, their
# backward and the backward of 2x2 average pools call gradir's pooling
# kernels (conversion/cpu/pool_kernels.py, rlx-pool-kernels).  For every shape below (output rows of 1 to 40
# columns: every vector width's step and the scalar tail; an odd last row
# and column the forward does not read; several images and channels), f32
# and f64, for the host and for AVX2 (x86-64-v3: another kernel variant),
# the kernels' results match the reference interpreter (max pools exactly,
# average pools to rounding) and are bitwise those of the generic lowering
# (kernels=False), on data full of
# ties (zeros, as after a ReLU, and values on a coarse grid), NaN, +-inf
# and -0.0.  A pool worth two threads runs as blocks of images on them,
# with the same bits as one thread, and a small CNN's gradient step with
# the kernels matches the interpreter and, bitwise, the step without them.
# A max pool's forward and backward on one input (gradient programs) use
# the kernels that save and read the windows' arg-max indices: bitwise the
# generic lowering and the backward kernel reading the input, at 1 and 2
# threads (test_indices, test_indices_threads).

import contextlib
import os

import numpy as np

import gradir
from gradir.conversion.cpu import rlx_parallel_loops

rng = np.random.default_rng(0)
DT = {"f32": np.float32, "f64": np.float64}


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def t(shape, elt):
    return "tensor<" + "x".join(map(str, shape)) + f"x{elt}>"


POOL = "{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}"
POOL3 = ("{pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
         "padding = array<i64: 1, 1, 1, 1>}")


def forward_module(shape, elt, kind="max"):
    n, c, h, w = shape
    out = [n, c, h // 2, w // 2]
    return gradir.parse(f"""
func.func @f(%x: {t(shape, elt)}) -> {t(out, elt)} {{
  %y = "rlx.{kind}_pool2d"(%x) {POOL} : ({t(shape, elt)}) -> {t(out, elt)}
  return %y : {t(out, elt)}
}}""")


def backward_module(shape, elt, kind="max"):
    n, c, h, w = shape
    out = [n, c, h // 2, w // 2]
    # the gradient comes from an elementwise op (the form elementwise fusion
    # would fold into the backward's generic), its result goes to another
    return gradir.parse(f"""
func.func @f(%g: {t(out, elt)}, %x: {t(shape, elt)}) -> {t(shape, elt)} {{
  %g2 = "rlx.negative"(%g) : ({t(out, elt)}) -> {t(out, elt)}
  %dx = "rlx.{kind}_pool2d_backward"(%g2, %x) {POOL} : ({t(out, elt)}, {t(shape, elt)}) -> {t(shape, elt)}
  %r = "rlx.negative"(%dx) : ({t(shape, elt)}) -> {t(shape, elt)}
  return %r : {t(shape, elt)}
}}""")


def close(got, want, kind, msg):
    """Max pools: exactly the interpreter's; average pools: to rounding (the
    interpreter's numpy mean adds in its own order)."""
    if kind == "max":
        np.testing.assert_array_equal(got, want, err_msg=msg)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6 if got.dtype == np.float32 else 1e-14,
                                   atol=1e-30, err_msg=msg)


def data(shape, dtype):
    """Ties (zeros, a coarse grid), NaN, +-inf and -0.0 among normals."""
    x = np.round(rng.standard_normal(shape) * 2) / 2
    x[rng.random(shape) < 0.3] = 0.0
    flat = x.reshape(-1)
    for value, share in ((np.nan, 0.01), (np.inf, 0.01), (-np.inf, 0.02), (-0.0, 0.05)):
        flat[rng.random(flat.size) < share] = value
    return x.astype(dtype)


def same_bits(a, b) -> bool:
    """Bitwise equal, any NaN equal to any NaN."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    na, nb = np.isnan(a), np.isnan(b)
    ints = np.uint32 if a.dtype == np.float32 else np.uint64
    return bool(np.array_equal(na, nb)
                and np.array_equal(a[~na].view(ints), b[~nb].view(ints)))


def calls_kernel(module, cpu, name):
    """Whether the lowered module calls the pooling kernel ``name``."""
    exe = gradir.compile(module, cpu=cpu, threads=1, cache=False)
    return f"_{name}(" in exe.llvm_ir


SHAPES = [  # (N, C, H, W): output columns 1..40, odd H and W (floor mode, forward)
    (1, 1, 2, 2), (2, 3, 4, 6), (1, 2, 5, 9), (2, 1, 6, 10), (1, 3, 3, 15),
    (2, 2, 8, 16), (1, 1, 7, 17), (1, 2, 4, 18), (2, 1, 6, 24), (1, 1, 2, 30),
    (1, 2, 4, 32), (1, 1, 3, 34), (1, 1, 2, 62), (1, 1, 4, 66), (3, 2, 4, 80),
]


@run
def test_forward():
    for kind in ("max", "avg"):
        for cpu in ("host", "x86-64-v3"):
            for elt in ("f32", "f64"):
                for shape in SHAPES:
                    m = forward_module(shape, elt, kind)
                    x = data(shape, DT[elt])
                    fast = gradir.compile(m, cpu=cpu, threads=1, cache=False)["f"](x)
                    plain = gradir.compile(m, cpu=cpu, threads=1, cache=False,
                                           kernels=False)["f"](x)
                    (want,) = gradir.interpret(m, "f", x)
                    close(fast, want, kind, f"{kind} {cpu} {elt} {shape}")
                    assert same_bits(fast, plain), (kind, cpu, elt, shape)
                print(f"{kind} {cpu} {elt}: {len(SHAPES)} shapes ok")
    assert calls_kernel(forward_module((2, 3, 4, 6), "f32"), "host", "max_pool2x2_f32")
    assert not calls_kernel(forward_module((2, 3, 4, 6), "f64", "avg"), "host", "pool2x2_f64")
    print("calls the kernels")
# CHECK-LABEL: TEST: test_forward
# CHECK: max host f32: 15 shapes ok
# CHECK: max host f64: 15 shapes ok
# CHECK: max x86-64-v3 f32: 15 shapes ok
# CHECK: max x86-64-v3 f64: 15 shapes ok
# CHECK: avg host f32: 15 shapes ok
# CHECK: avg host f64: 15 shapes ok
# CHECK: avg x86-64-v3 f32: 15 shapes ok
# CHECK: avg x86-64-v3 f64: 15 shapes ok
# CHECK: calls the kernels


@run
def test_backward():
    for kind in ("max", "avg"):
        for cpu in ("host", "x86-64-v3"):
            for elt in ("f32", "f64"):
                count = 0
                for shape in SHAPES:
                    shape = tuple(s - s % 2 for s in shape)     # windows that tile the input
                    m = backward_module(shape, elt, kind)
                    x = data(shape, DT[elt])
                    g = rng.standard_normal([shape[0], shape[1], shape[2] // 2,
                                             shape[3] // 2]).astype(DT[elt])
                    fast = gradir.compile(m, cpu=cpu, threads=1, cache=False)["f"](g, x)
                    plain = gradir.compile(m, cpu=cpu, threads=1, cache=False,
                                           kernels=False)["f"](g, x)
                    (want,) = gradir.interpret(m, "f", g, x)
                    close(fast, want, kind, f"{kind} {cpu} {elt} {shape}")
                    assert same_bits(fast, plain), (kind, cpu, elt, shape)
                    count += 1
                print(f"{kind} {cpu} {elt}: {count} shapes ok")
    assert calls_kernel(backward_module((2, 3, 4, 6), "f64"), "host",
                        "max_pool2x2_backward_f64")
    assert calls_kernel(backward_module((2, 3, 4, 6), "f32", "avg"), "host",
                        "avg_pool2x2_backward_f32")
    print("calls the kernels")
# CHECK-LABEL: TEST: test_backward
# CHECK: max host f32: 15 shapes ok
# CHECK: max host f64: 15 shapes ok
# CHECK: max x86-64-v3 f32: 15 shapes ok
# CHECK: max x86-64-v3 f64: 15 shapes ok
# CHECK: avg host f32: 15 shapes ok
# CHECK: avg host f64: 15 shapes ok
# CHECK: avg x86-64-v3 f32: 15 shapes ok
# CHECK: avg x86-64-v3 f64: 15 shapes ok
# CHECK: calls the kernels


@run
def test_threads():
    # 5 images of 8 x 128 x 130: work enough for rlx-pool-kernels' blocks of
    # images (blocks of 3 and 2 at 2 threads, 2/2/1 at 3)
    shape = (5, 8, 128, 130)
    x = data(shape, np.float32)
    g = rng.standard_normal((5, 8, 64, 65)).astype(np.float32)
    modules = [(kind, forward_module(shape, "f32", kind), backward_module(shape, "f32", kind))
               for kind in ("max", "avg")]
    results = {}
    for threads in (1, 2, 3):
        results[threads] = []
        for kind, fwd, bwd in modules:
            y = gradir.compile(fwd, threads=threads, cache=False)["f"](x)
            dx = gradir.compile(bwd, threads=threads, cache=False)["f"](g, x)
            close(y, gradir.interpret(fwd, "f", x)[0], kind, f"{kind} forward")
            close(dx, gradir.interpret(bwd, "f", g, x)[0], kind, f"{kind} backward")
            results[threads] += [y, dx]
        print(f"threads {threads} ok")
    for threads in (2, 3):
        assert all(same_bits(a, b) for a, b in zip(results[1], results[threads]))
    print("the same bits at 1, 2 and 3 threads")
    text = gradir.compile(modules[0][1], threads=2, cache=False).llvm_ir
    assert "omp.parallel" in text, "no parallel region"
    print("parallel at 2 threads")
# CHECK-LABEL: TEST: test_threads
# CHECK: threads 1 ok
# CHECK: threads 2 ok
# CHECK: threads 3 ok
# CHECK: the same bits at 1, 2 and 3 threads
# CHECK: parallel at 2 threads


CNN = """
func.func @main(%x: tensor<4x2x12x12xT>, %w: tensor<3x2x3x3xT>, %v: tensor<75x5xT>) -> tensor<T> {
  %c = "rlx.conv2d"(%x, %w) : (tensor<4x2x12x12xT>, tensor<3x2x3x3xT>) -> tensor<4x3x10x10xT>
  %r = "rlx.relu"(%c) : (tensor<4x3x10x10xT>) -> tensor<4x3x10x10xT>
  %p = "rlx.max_pool2d"(%r) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<4x3x10x10xT>) -> tensor<4x3x5x5xT>
  %f = "rlx.reshape"(%p) : (tensor<4x3x5x5xT>) -> tensor<4x75xT>
  %o = "rlx.matmul"(%f, %v) : (tensor<4x75xT>, tensor<75x5xT>) -> tensor<4x5xT>
  %t = "rlx.tanh"(%o) : (tensor<4x5xT>) -> tensor<4x5xT>
  %s = "rlx.sum"(%t) : (tensor<4x5xT>) -> tensor<T>
  return %s : tensor<T>
}"""


@contextlib.contextmanager
def whole():
    """Functions compiled whole (not cut in two parts, runtime/partition.py:
    a pool's forward and backward then stay in one function, where the
    forward saves its arg-max indices for the backward)."""
    saved = os.environ.get("GRADIR_PARALLEL_COMPILE")
    os.environ["GRADIR_PARALLEL_COMPILE"] = "0"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["GRADIR_PARALLEL_COMPILE"]
        else:
            os.environ["GRADIR_PARALLEL_COMPILE"] = saved


@run
def test_gradient_step():
    # (compiled whole: the max pools' forward saves its arg-max indices for
    # the backward; cut in parts, this step's pools would not pair)
    for elt, kind in (("f32", "max"), ("f64", "max"), ("f32", "avg"), ("f32", "max3")):
        m = gradir.parse(CNN.replace("xT>", f"x{elt}>").replace("<T>", f"<{elt}>")
                         .replace("rlx.max_pool2d", f"rlx.{kind[:3]}_pool2d")
                         .replace(POOL, POOL3 if kind == "max3" else POOL))
        gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=main wrt=1,2})")
        args = [rng.standard_normal(s).astype(DT[elt])
                for s in ((4, 2, 12, 12), (3, 2, 3, 3), (75, 5))]
        with whole():
            exe = gradir.compile(m, cache=False, threads=1)
            plain = gradir.compile(m, cache=False, threads=1, kernels=False)["main_adjoint"]
        names = {"max": (f"_max_pool2x2_backward_indices_{elt}(", f"_max_pool2x2_indices_{elt}("),
                 "max3": (f"_max_pool3x3s2_backward_indices_{elt}(",
                          f"_max_pool3x3s2_indices_{elt}("),
                 "avg": (f"_avg_pool2x2_backward_{elt}(",)}[kind]
        assert all(name in exe.llvm_ir for name in names), kind
        got = exe["main_adjoint"](*args)
        plain = plain(*args)
        want = gradir.interpret(m, "main_adjoint", *args)
        tol = 1e-5 if elt == "f32" else 1e-12
        for a, p, b in zip(got, plain, want):
            # (f32: the interpreter's numpy sums round differently; the
            # tolerance is relative to the largest element)
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol * float(np.abs(b).max()))
            assert same_bits(a, p), kind
        print(f"{kind} {elt} ok")
# CHECK-LABEL: TEST: test_gradient_step
# CHECK: max f32 ok
# CHECK: max f64 ok
# CHECK: avg f32 ok
# CHECK: max3 f32 ok


@run
def test_nan_windows_generic():
    # The generic lowering's arg-max (windows that overlap, padding) also
    # takes the first NaN as the maximum, as the interpreter (numpy's argmax)
    # and PyTorch do.
    shape, out = (2, 3, 9, 9), (2, 3, 5, 5)
    attrs = ("{pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
             "padding = array<i64: 1, 1, 1, 1>}")
    for elt in ("f32", "f64"):
        m = gradir.parse(f"""
func.func @f(%g: {t(out, elt)}, %x: {t(shape, elt)}) -> {t(shape, elt)} {{
  %dx = "rlx.max_pool2d_backward"(%g, %x) {attrs} : ({t(out, elt)}, {t(shape, elt)}) -> {t(shape, elt)}
  return %dx : {t(shape, elt)}
}}""")
        x = data(shape, DT[elt])
        g = rng.standard_normal(out).astype(DT[elt])
        got = gradir.compile(m, threads=1, cache=False)["f"](g, x)
        (want,) = gradir.interpret(m, "f", g, x)
        np.testing.assert_allclose(got, want, rtol=1e-6 if elt == "f32" else 1e-14)
        print(f"{elt} ok")
# CHECK-LABEL: TEST: test_nan_windows_generic
# CHECK: f32 ok
# CHECK: f64 ok


@run
def test_strided_views():
    # A pool of a strided slice (bufferized: a view with an innermost stride
    # of 2) keeps its loops: compiled, it matches the interpreter.
    for kind in ("max", "avg"):
        m = gradir.parse(f"""
func.func @f(%x: tensor<2x3x8x16xf32>, %g: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) {{
  %s = "rlx.strided_slice"(%x) {{axes = array<i64: 3>, begin = array<i64: 0>, end = array<i64: 16>, strides = array<i64: 2>}} : (tensor<2x3x8x16xf32>) -> tensor<2x3x8x8xf32>
  %y = "rlx.{kind}_pool2d"(%s) {POOL} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %d = "rlx.{kind}_pool2d_backward"(%g, %s) {POOL} : (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  return %y, %d : tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>
}}""")
        x = data((2, 3, 8, 16), np.float32)
        g = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
        got = gradir.compile(m, threads=1, cache=False)["f"](x, g)
        want = gradir.interpret(m, "f", x, g)
        for a, b in zip(got, want):
            close(a, b, kind, kind)
        print(f"{kind} ok")
# CHECK-LABEL: TEST: test_strided_views
# CHECK: max ok
# CHECK: avg ok


SHAPES3 = [  # even H and W: output columns 1..40 (every vector step and the tail)
    (1, 1, 2, 2), (2, 3, 4, 6), (1, 2, 6, 10), (2, 2, 8, 16), (1, 2, 4, 18),
    (2, 1, 6, 24), (1, 2, 4, 32), (1, 1, 4, 34), (1, 1, 2, 62), (3, 2, 4, 80),
]


@run
def test_pool3x3():
    # ResNet's stem pool (3x3 windows of stride 2, padding 1, even H and W):
    # the 3x3 kernels, forward and backward, bitwise the generic lowering,
    # equal to the interpreter (its backward to rounding: numpy adds a
    # window's taps in another order); on ties, NaN, +-inf and -0.0.
    for cpu in ("host", "x86-64-v3"):
        for elt in ("f32", "f64"):
            for shape in SHAPES3:
                n, c, h, w = shape
                out = (n, c, h // 2, w // 2)
                m = gradir.parse(f"""
func.func @f(%x: {t(shape, elt)}) -> {t(out, elt)} {{
  %y = "rlx.max_pool2d"(%x) {POOL3} : ({t(shape, elt)}) -> {t(out, elt)}
  return %y : {t(out, elt)}
}}
func.func @b(%g: {t(out, elt)}, %x: {t(shape, elt)}) -> {t(shape, elt)} {{
  %g2 = "rlx.negative"(%g) : ({t(out, elt)}) -> {t(out, elt)}
  %dx = "rlx.max_pool2d_backward"(%g2, %x) {POOL3} : ({t(out, elt)}, {t(shape, elt)}) -> {t(shape, elt)}
  return %dx : {t(shape, elt)}
}}""")
                x = data(shape, DT[elt])
                g = data(out, DT[elt])
                g[~np.isfinite(g)] = 1.0
                fast = gradir.compile(m, cpu=cpu, threads=1, cache=False)
                plain = gradir.compile(m, cpu=cpu, threads=1, cache=False, kernels=False)
                for name, args in (("f", (x,)), ("b", (g, x))):
                    got, ref = fast[name](*args), plain[name](*args)
                    (want,) = gradir.interpret(m, name, *args)
                    if name == "f":
                        close(got, want, "max", f"{cpu} {elt} {shape}")
                    else:
                        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30)
                    assert same_bits(got, ref), (name, cpu, elt, shape)
            print(f"{cpu} {elt}: {len(SHAPES3)} shapes ok")
    m = gradir.parse(f"""
func.func @b(%g: {t((1, 2, 3, 4), "f32")}, %x: {t((1, 2, 6, 8), "f32")}) -> {t((1, 2, 6, 8), "f32")} {{
  %y = "rlx.max_pool2d"(%x) {POOL3} : ({t((1, 2, 6, 8), "f32")}) -> {t((1, 2, 3, 4), "f32")}
  %s = "rlx.add"(%y, %g) : ({t((1, 2, 3, 4), "f32")}, {t((1, 2, 3, 4), "f32")}) -> {t((1, 2, 3, 4), "f32")}
  %dx = "rlx.max_pool2d_backward"(%s, %x) {POOL3} : ({t((1, 2, 3, 4), "f32")}, {t((1, 2, 6, 8), "f32")}) -> {t((1, 2, 6, 8), "f32")}
  return %dx : {t((1, 2, 6, 8), "f32")}
}}""")
    text = gradir.compile(m, threads=1, cache=False).llvm_ir
    # (one input: the forward saves its indices for the backward, test_indices)
    assert "_max_pool3x3s2_indices_f32(" in text
    assert "_max_pool3x3s2_backward_indices_f32(" in text
    print("calls the kernels")
    # a constant gradient (sum of the pool) folds into the backward's
    # generic, which keeps its loops: still the interpreter's result
    m = gradir.parse(f"""
func.func @main(%x: {t((2, 3, 8, 8), "f32")}) -> tensor<f32> {{
  %p = "rlx.max_pool2d"(%x) {POOL3} : ({t((2, 3, 8, 8), "f32")}) -> {t((2, 3, 4, 4), "f32")}
  %s = "rlx.sum"(%p) : ({t((2, 3, 4, 4), "f32")}) -> tensor<f32>
  return %s : tensor<f32>
}}""")
    gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
    x = data((2, 3, 8, 8), np.float32)
    x[~np.isfinite(x)] = 0.5
    got = gradir.compile(m, cache=False)["main_adjoint"](x)
    want = gradir.interpret(m, "main_adjoint", x)
    print("constant gradient equal:", np.array_equal(got[1], want[1]))
# CHECK-LABEL: TEST: test_pool3x3
# CHECK: host f32: 10 shapes ok
# CHECK: host f64: 10 shapes ok
# CHECK: x86-64-v3 f32: 10 shapes ok
# CHECK: x86-64-v3 f64: 10 shapes ok
# CHECK: calls the kernels
# CHECK: constant gradient equal: True


def indices_module(shape, elt, attrs):
    """@main: a weighted sum of a max pool (its gradient: rlx-gradient's
    @main_adjoint, where the pool's forward saves its arg-max indices for
    the backward); @b: the backward alone (the kernel reading the input)."""
    n, c, h, w = shape
    out = (n, c, h // 2, w // 2)
    m = gradir.parse(f"""
func.func @main(%x: {t(shape, elt)}, %w: {t(out, elt)}) -> tensor<{elt}> {{
  %p = "rlx.max_pool2d"(%x) {attrs} : ({t(shape, elt)}) -> {t(out, elt)}
  %q = "rlx.multiply"(%p, %w) : ({t(out, elt)}, {t(out, elt)}) -> {t(out, elt)}
  %s = "rlx.sum"(%q) : ({t(out, elt)}) -> tensor<{elt}>
  return %s : tensor<{elt}>
}}
func.func @b(%g: {t(out, elt)}, %x: {t(shape, elt)}) -> {t(shape, elt)} {{
  %dx = "rlx.max_pool2d_backward"(%g, %x) {attrs} : ({t(out, elt)}, {t(shape, elt)}) -> {t(shape, elt)}
  return %dx : {t(shape, elt)}
}}""")
    gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=main wrt=0})")
    return m, out


def hard_data(shape, dtype):
    """Windows of ties only: -0.0 and 0.0, -inf, a few NaN (first, last or
    alone in their windows)."""
    x = rng.choice(np.array([0.0, -0.0, -np.inf], dtype), size=shape)
    x.reshape(-1)[rng.random(x.size) < 0.02] = np.nan
    return x


SHAPES_INDICES = {  # output columns 1..40: every vector step of each CPU and the tail
    "host": [(1, 1, 2, 2), (2, 3, 4, 6), (1, 2, 6, 10), (2, 2, 8, 16), (1, 1, 2, 30),
             (1, 2, 4, 34), (1, 1, 2, 62), (3, 2, 4, 80)],
    "x86-64-v3": [(2, 3, 4, 6), (1, 2, 6, 10), (1, 1, 2, 30), (3, 2, 4, 80)]}


@run
def test_indices():
    # A max pool's forward and backward on one input (a gradient program):
    # the forward kernel saves each window's first-maximum position, the
    # backward kernel reads them.  The input gradient is bitwise that of the
    # generic lowering and of the backward kernel reading the input (@b on
    # the same gradient), and the interpreter's (exactly for 2x2 windows;
    # to rounding for 3x3: numpy adds the overlapping windows in another
    # order); on ties, NaN, +-inf and -0.0, output rows of 1 to 40 columns.
    for name, attrs in (("2x2", POOL), ("3x3s2", POOL3)):
        for cpu in ("host", "x86-64-v3"):
            for elt in ("f32", "f64"):
                for shape in SHAPES_INDICES[cpu]:
                    m, out = indices_module(shape, elt, attrs)
                    with whole():
                        fast = gradir.compile(m, cpu=cpu, threads=1, cache=False)
                    if shape[2] > 2:
                        assert f"_max_pool{name}_indices_{elt}(" in fast.llvm_ir, shape
                        assert f"_max_pool{name}_backward_indices_{elt}(" in fast.llvm_ir
                    plain = gradir.compile(m, cpu=cpu, threads=1, cache=False, kernels=False)
                    for x in (data(shape, DT[elt]), hard_data(shape, DT[elt])):
                        w = rng.standard_normal(out).astype(DT[elt])
                        y, dx = fast["main_adjoint"](x, w)
                        y0, dx0 = plain["main_adjoint"](x, w)
                        assert same_bits(y, y0) and same_bits(dx, dx0), (name, cpu, elt, shape)
                        assert same_bits(dx, fast["b"](w, x)), (name, cpu, elt, shape)
                        (want,) = gradir.interpret(m, "b", w, x)
                        if name == "2x2":
                            np.testing.assert_array_equal(dx, want)
                        else:
                            np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-30)
                print(f"{name} {cpu} {elt}: {len(SHAPES_INDICES[cpu])} shapes ok")
# CHECK-LABEL: TEST: test_indices
# CHECK: 2x2 host f32: 8 shapes ok
# CHECK: 2x2 host f64: 8 shapes ok
# CHECK: 2x2 x86-64-v3 f32: 4 shapes ok
# CHECK: 2x2 x86-64-v3 f64: 4 shapes ok
# CHECK: 3x3s2 host f32: 8 shapes ok
# CHECK: 3x3s2 host f64: 8 shapes ok
# CHECK: 3x3s2 x86-64-v3 f32: 4 shapes ok
# CHECK: 3x3s2 x86-64-v3 f64: 4 shapes ok


@run
def test_indices_threads():
    # Pools of enough work for two threads (blocks of 3 and 2 images): the
    # forward saving the indices and the backward reading them run on both,
    # with the bits of one thread and of the kernel reading the input.
    for name, attrs, shape in (("2x2", POOL, (5, 8, 128, 130)),
                               ("3x3s2", POOL3, (5, 8, 128, 128))):
        for elt in ("f32", "f64"):
            m, out = indices_module(shape, elt, attrs)
            x = data(shape, DT[elt])
            w = rng.standard_normal(out).astype(DT[elt])
            with whole():
                one = gradir.compile(m, threads=1, cache=False)
                two = gradir.compile(m, threads=2, cache=False)
            assert "omp.parallel" in two.llvm_ir and "_indices_" in two.llvm_ir
            y1, dx1 = one["main_adjoint"](x, w)
            runs = [two["main_adjoint"](x, w) for _ in range(3)]
            assert all(same_bits(y1, y) and same_bits(dx1, dx) for y, dx in runs)
            assert same_bits(dx1, one["b"](w, x))
            print(f"{name} {elt}: the same bits at 1 and 2 threads")
# CHECK-LABEL: TEST: test_indices_threads
# CHECK: 2x2 f32: the same bits at 1 and 2 threads
# CHECK: 2x2 f64: the same bits at 1 and 2 threads
# CHECK: 3x3s2 f32: the same bits at 1 and 2 threads
# CHECK: 3x3s2 f64: the same bits at 1 and 2 threads

# RUN: rm -rf %t && mkdir -p %t
# RUN: env GRADIR_CACHE_DIR=%t/cache %PYTHON %s %t | FileCheck %s
# gradir.compile(..., kernels=True): 2-D f32/f64 matmuls (convolutions'
# GEMMs too) call gradir's shape-generic kernels (runtime/kernels.py).  Their results are bitwise the
# schedule's (each element is the same chain of FMAs in the same K order):
# every shape below (register-tile remainders in M and N, K not a multiple
# of the K block, more rows than PACK_ROWS, a transposed lhs or rhs read in
# place, f64) gives the same bits with kernels on and off, and every one,
# a batched lhs too, is close to numpy's float64 product.  So does a gradient step with
# both at 1 and 2 threads, for the host and for AVX2 (x86-64-v3: another
# kernel variant, its own symbols, loaded in the same process).  A library
# exported from code that calls the kernels carries their library beside
# it and runs in a process that cannot import mlir.

import os
import subprocess
import sys

import numpy as np

import gradir
from gradir.runtime import kernels as rk

out = sys.argv[1]
rng = np.random.default_rng(0)


def program(m, k, n, ty, a_t, b_t, batch=None):
    a_shape = [k, m] if a_t else ([batch, m, k] if batch else [m, k])
    b_shape = [n, k] if b_t else [k, n]
    r_shape = [batch, m, n] if batch else [m, n]
    t = lambda s: f"tensor<{'x'.join(map(str, s))}x{ty}>"  # noqa: E731
    lines, a, b = [], "%a", "%b"
    if a_t:
        lines.append(f'%at = "rlx.permute_dims"(%a) {{axes = array<i64: 1, 0>}} : ({t(a_shape)}) -> {t([m, k])}')
        a = "%at"
    if b_t:
        lines.append(f'%bt = "rlx.permute_dims"(%b) {{axes = array<i64: 1, 0>}} : ({t(b_shape)}) -> {t([k, n])}')
        b = "%bt"
    a_ty = t([m, k]) if a_t else t(a_shape)
    lines.append(f'%r = "rlx.matmul"({a}, {b}) : ({a_ty}, {t([k, n])}) -> {t(r_shape)}')
    text = (f"func.func @main(%a: {t(a_shape)}, %b: {t(b_shape)}) -> {t(r_shape)} {{\n  "
            + "\n  ".join(lines) + f"\n  return %r : {t(r_shape)}\n}}")
    return text, a_shape, b_shape


# (5 x 0 x 7: no K steps; the kernels' zero start, C not read, must still
# write its zeros; 700 x 300 x 100: more than one M block, the rhs packed a
# whole K block at a time in the first, full panels and a tail; 40 x 785 x
# 70: K in even blocks, none short)
CASES = [(1, 1, 1), (7, 13, 5), (9, 300, 33), (65, 257, 47), (300, 70, 130), (64, 10, 512),
         (512, 64, 10), (17, 512, 31), (5, 0, 7), (700, 300, 100), (40, 785, 70)]
# (AVX2: register tiles of 6 rows, vectors of 8 f32 / 4 f64 lanes, so a
# tile's K step of the packed lhs is one vector and a part (f32) or two
# (f64); the host's 8 rows are half a vector of 16 f32 or one of 8 f64)
CASES_V3 = [(7, 13, 5), (65, 257, 47), (700, 300, 100), (40, 785, 70)]


def compare(cpu, cases):
    """Kernels on and off for every case at ``cpu``; prints the count."""
    bad = 0
    count = 0
    for ty in ("f32", "f64"):
        dt = np.float32 if ty == "f32" else np.float64
        for i, (m, k, n) in enumerate(cases):
            for a_t, b_t, batch in ((False, False, None), (True, False, None), (False, True, None),
                                    (True, True, None), (False, False, 3)):
                if batch and (m * batch > 600 or cpu != "host"):
                    continue
                text, sa, sb = program(m, k, n, ty, a_t, b_t, batch)
                a = rng.standard_normal(sa).astype(dt)
                b = rng.standard_normal(sb).astype(dt)
                got = {}
                for kern in (False, True):
                    exe = gradir.compile(gradir.parse(text), kernels=kern, threads=1, cache=False,
                                         cpu=cpu)
                    got[kern] = exe["main"](a, b)
                ref = ((a.T if a_t else a).astype(np.float64)
                       @ (b.T if b_t else b).astype(np.float64))
                tol = 1e-4 if ty == "f32" else 1e-11
                close = np.allclose(got[True], ref, rtol=tol, atol=tol * max(1.0, k ** 0.5))
                # (a batched lhs reaches the schedule reshaped, as a
                # contraction it leaves to scalar loops: separate multiplies
                # and adds, other bits than the kernels' fused multiply-adds)
                same = batch is not None or np.array_equal(got[True], got[False])
                count += 1
                if not (close and same):
                    bad += 1
                    print(f"MISMATCH {cpu} {ty} {m}x{k}x{n} a_t={a_t} b_t={b_t} batch={batch}: "
                          f"bitwise {same}, close to float64 {close}")
    print(f"shapes ({cpu}): {count} compared, {bad} differ")


for cpu, cases in (("host", CASES), ("x86-64-v3", CASES_V3)):
    compare(cpu, cases)
# CHECK: shapes (host): 104 compared, 0 differ
# CHECK: shapes (x86-64-v3): 32 compared, 0 differ

# threads=2: matmuls of enough work run as two strips of register tiles
# (columns; rows when one tile holds the columns), one kernel call each on
# its thread: bitwise the schedule's code at 2 threads, run to run too.
bad = 0
for m, k, n, a_t, b_t in ((256, 300, 250, False, False), (256, 300, 250, True, True),
                          (4096, 130, 10, False, False), (4096, 130, 10, True, False),
                          (300, 1000, 70, False, True)):
    text, sa, sb = program(m, k, n, "f32", a_t, b_t)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    got = {kern: gradir.compile(gradir.parse(text), kernels=kern, threads=2, cache=False)["main"]
           for kern in (False, True)}
    r0, r1, r2 = got[False](a, b), got[True](a, b), got[True](a, b)
    ref = (a.T if a_t else a).astype(np.float64) @ (b.T if b_t else b).astype(np.float64)
    if not (np.array_equal(r0, r1) and np.array_equal(r1, r2)
            and np.allclose(r1, ref, rtol=1e-4, atol=1e-4 * k ** 0.5)):
        bad += 1
        print(f"MISMATCH threads=2 {m}x{k}x{n} a_t={a_t} b_t={b_t}")
print(f"threads=2: {bad} differ")
# CHECK: threads=2: 0 differ

# The kernel called directly (its C interface, ctypes): with the zero flag C
# is written, not read (a C full of NaN gives A @ B; K = 0 gives zeros);
# without it A @ B is added to C.
import ctypes  # noqa: E402
from gradir.conversion.cpu.host import resolve as _resolve  # noqa: E402
from gradir.conversion.cpu.kernels import kernel_name, variant as _variant  # noqa: E402
from gradir.runtime.abi import descriptor  # noqa: E402
lib = ctypes.CDLL(str(rk.kernel_library("host")))
kernel = getattr(lib, "_mlir_ciface_" + kernel_name("f32", _variant(_resolve("host"))))
kernel.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_bool]
flags = []
for m, k, n, zero in ((37, 45, 70, True), (37, 45, 70, False), (9, 0, 40, True), (9, 0, 40, False)):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan if zero else 1.0, np.float32)
    descs = [descriptor(v) for v in (a, b, c)]
    kernel(*[ctypes.addressof(d) for d in descs], zero)
    want = a.astype(np.float64) @ b + (0.0 if zero else 1.0)
    flags.append(bool(np.allclose(c, want, rtol=1e-4, atol=1e-4 * max(1, k) ** 0.5)))
print("kernel zero flag:", flags)
# CHECK: kernel zero flag: [True, True, True, True]

# A flatten before a kernel matmul and an unflatten after one: still
# kernel calls (rlx-to-linalg isolates them from elementwise fusion's
# reshape propagation), close to float64.
text = """
func.func @main(%x: tensor<64x16x4x4xf32>, %w: tensor<256x120xf32>, %v: tensor<120x256xf32>)
    -> tensor<64x16x4x4xf32> {
  %f = "rlx.reshape"(%x) : (tensor<64x16x4x4xf32>) -> tensor<64x256xf32>
  %h = "rlx.matmul"(%f, %w) : (tensor<64x256xf32>, tensor<256x120xf32>) -> tensor<64x120xf32>
  %g = "rlx.matmul"(%h, %v) : (tensor<64x120xf32>, tensor<120x256xf32>) -> tensor<64x256xf32>
  %r = "rlx.reshape"(%g) : (tensor<64x256xf32>) -> tensor<64x16x4x4xf32>
  return %r : tensor<64x16x4x4xf32>
}"""
x = rng.standard_normal((64, 16, 4, 4)).astype(np.float32)
w = rng.standard_normal((256, 120)).astype(np.float32)
v = rng.standard_normal((120, 256)).astype(np.float32)
exe = gradir.compile(gradir.parse(text), kernels=True, threads=1, cache=False)
ref = ((x.reshape(64, 256).astype(np.float64) @ w) @ v).reshape(64, 16, 4, 4)
print("reshaped:", exe.uses_kernels, np.allclose(exe["main"](x, w, v), ref, rtol=1e-4, atol=1e-2))
# CHECK: reshaped: True True

# A gradient step (matmuls with transposed operands, a bias, a loss) with
# kernels on and off, at 1 and 2 threads, for the host and AVX2.
step = gradir.parse("""
func.func @main(%x: tensor<64x100xf32>, %labels: tensor<64xi64>, %w1: tensor<100x48xf32>,
                %b1: tensor<48xf32>, %w2: tensor<48x10xf32>) -> tensor<f32> {
  %h = "rlx.matmul"(%x, %w1) : (tensor<64x100xf32>, tensor<100x48xf32>) -> tensor<64x48xf32>
  %hb = "rlx.add"(%h, %b1) : (tensor<64x48xf32>, tensor<48xf32>) -> tensor<64x48xf32>
  %r = "rlx.relu"(%hb) : (tensor<64x48xf32>) -> tensor<64x48xf32>
  %o = "rlx.matmul"(%r, %w2) : (tensor<64x48xf32>, tensor<48x10xf32>) -> tensor<64x10xf32>
  %lp = "rlx.log_softmax"(%o) : (tensor<64x10xf32>) -> tensor<64x10xf32>
  %loss = "rlx.nll_loss"(%lp, %labels) : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}""")
gradir.run_pipeline(step, "builtin.module(rlx-gradient{func=main wrt=0,2,3,4})")
args = [rng.standard_normal((64, 100)).astype(np.float32), rng.integers(0, 10, 64),
        (0.1 * rng.standard_normal((100, 48))).astype(np.float32),
        (0.1 * rng.standard_normal(48)).astype(np.float32),
        (0.1 * rng.standard_normal((48, 10))).astype(np.float32)]
want = gradir.interpret(step, "main_adjoint", *args)
from gradir.testing.oracle import compare  # noqa: E402
for cpu in ("host", "x86-64-v3"):
    for threads in (1, 2):
        r = {kern: gradir.compile(step, kernels=kern, cpu=cpu, threads=threads,
                                  cache=False)["main_adjoint"](*args) for kern in (False, True)}
        same = all(np.array_equal(p, q) for p, q in zip(r[False], r[True]))
        print(f"step {cpu} threads={threads}: bitwise {same}, interpreter "
              f"{compare(tuple(r[True]), tuple(want), 'step', width=4) or 'ok'}")
# CHECK: step host threads=1: bitwise True, interpreter ok
# CHECK: step host threads=2: bitwise True, interpreter ok
# CHECK: step x86-64-v3 threads=1: bitwise True, interpreter ok
# CHECK: step x86-64-v3 threads=2: bitwise True, interpreter ok

# Convolutions' GEMMs call the kernels too (one group: the weights times the
# im2col matrix; per block of images when that matrix is large; the weight
# gradient's form, few large "images"; conv2d_transpose's GEMM before
# col2im), with the same bits as the schedule's register tiles (kernels off),
# f32 and f64, for the host and AVX2 (whose 6-row tiles do not divide 16
# output channels: the schedule pads, the kernels run a 4-row tile).
CONVS = [  # (op, data shape, weight shape, result shape)
    ("rlx.conv2d", (4, 3, 12, 12), (16, 3, 5, 5), (4, 16, 8, 8)),
    ("rlx.conv2d", (64, 1, 28, 28), (6, 1, 5, 5), (64, 6, 24, 24)),
    ("rlx.conv2d", (1, 64, 28, 28), (6, 64, 24, 24), (1, 6, 5, 5)),
    ("rlx.conv2d", (6, 8, 12, 12), (16, 8, 8, 8), (6, 16, 5, 5)),
    # the weight gradient's form with short kernel rows: per block of input
    # channels, the kernel accumulating (LeNet's conv2 dw: two halves of the
    # images, blocks of 8 channels; three single images, blocks of 64)
    ("rlx.conv2d", (6, 64, 12, 12), (16, 64, 8, 8), (6, 16, 5, 5)),
    ("rlx.conv2d", (3, 128, 10, 9), (5, 128, 7, 6), (3, 5, 4, 4)),
    ("rlx.conv2d_transpose", (3, 16, 8, 8), (16, 6, 5, 5), (3, 6, 12, 12)),
]
for cpu in ("host", "x86-64-v3"):
    for ty, dtype in (("f32", np.float32), ("f64", np.float64)):
        differ = 0
        for op, xs, ws, ys in CONVS:
            tt = lambda s: "tensor<" + "x".join(map(str, s)) + f"x{ty}>"  # noqa: E731
            m = gradir.parse(f"""
func.func @f(%x: {tt(xs)}, %w: {tt(ws)}) -> {tt(ys)} {{
  %y = "{op}"(%x, %w) : ({tt(xs)}, {tt(ws)}) -> {tt(ys)}
  return %y : {tt(ys)}
}}""")
            x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
            on = gradir.compile(m, cpu=cpu, threads=1, cache=False)
            assert ("_strips_" in on.llvm_ir or f"_matmul_{ty}(" in on.llvm_ir
                    or f"_conv_{ty}(" in on.llvm_ir), (op, xs)
            got = on["f"](x, w)
            off = gradir.compile(m, cpu=cpu, threads=1, cache=False, kernels=False)["f"](x, w)
            differ += not np.array_equal(got, off)
            (want,) = gradir.interpret(m, "f", x, w)
            tol = 1e-4 if ty == "f32" else 1e-11
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.abs(want).max()))
        print(f"convolutions {cpu} {ty}: {len(CONVS)} compared, {differ} differ")
# CHECK: convolutions host f32: 7 compared, 0 differ
# CHECK: convolutions host f64: 7 compared, 0 differ
# CHECK: convolutions x86-64-v3 f32: 7 compared, 0 differ
# CHECK: convolutions x86-64-v3 f64: 7 compared, 0 differ

# The two targets' libraries are two files with distinct symbols.
from gradir.conversion.cpu.host import resolve  # noqa: E402
from gradir.conversion.cpu.kernels import variant  # noqa: E402
libs = {cpu: rk.kernel_library(cpu) for cpu in ("host", "x86-64-v3")}
print("libraries distinct:", libs["host"] != libs["x86-64-v3"],
      variant(resolve("host")) in libs["host"].name)
# CHECK: libraries distinct: True True

# Finding a built library hashes the sources the kernels' text is made
# from, never the text (made only to build one); where those sources
# cannot be read, the text's digest names the file instead.
rk._texts.clear()
rk._built.clear()
again = rk.kernel_library("host")
print("found again:", again == libs["host"], "text made:", bool(rk._texts))
# CHECK: found again: True text made: False
saved = list(rk._sources)
rk._sources[:] = [None]
by_text = rk.library_name(resolve("host"))
rk._sources[:] = saved
print("named by the text:", by_text != libs["host"].name,
      by_text.startswith(f"libgradir_kernels_{variant(resolve('host'))}_"), bool(rk._texts))
# CHECK: named by the text: True True True

# Exported (through the compile cache too): the kernel library goes beside it.
for cache in (False, True):
    exe = gradir.compile(step, kernels=True, threads=1, cache=cache)
    from gradir.runtime import cache as _cache  # noqa: E402
    _cache.wait()
    exe = gradir.compile(step, kernels=True, threads=1, cache=cache)   # a hit when cached
    folder = os.path.join(out, f"export-{cache}")
    path = str(exe.export_library(os.path.join(folder, "step.so")))
    beside = sorted(f for f in os.listdir(folder) if f.startswith("libgradir_kernels_"))
    np.savez(os.path.join(folder, "args.npz"), *args)
    expect = exe["main_adjoint"](*args)
    np.savez(os.path.join(folder, "want.npz"), *expect)
    child = subprocess.run([sys.executable, "-c", f"""
import sys, numpy as np
sys.modules['mlir'] = None            # no MLIR in this process
import gradir.runtime as rt
lib = rt.load({path!r})
a = np.load({os.path.join(folder, 'args.npz')!r}); w = np.load({os.path.join(folder, 'want.npz')!r})
got = lib['main_adjoint'](*[a[f'arr_{{i}}'] for i in range(len(a.files))])
print(all(np.array_equal(g, w[f'arr_{{i}}']) for i, g in enumerate(got)))
"""], capture_output=True, text=True)
    print(f"export cache={cache} hit={exe.cache_hit}: kernel libraries beside {len(beside)}, "
          f"loaded without mlir: {child.stdout.strip() or child.stderr[-400:]}")
# CHECK: export cache=False hit=None: kernel libraries beside 1, loaded without mlir: True
# CHECK: export cache=True hit=True: kernel libraries beside 1, loaded without mlir: True

# At 2 threads a matmul worth them calls the kernels' multi-threaded driver,
# in a library of its own (``..._omp.so``: it needs the kernels' and
# libomp, by name, RUNPATH $ORIGIN); the program holds no OpenMP region.
# Exported (through the compile cache too), all three go beside it.
big_text, sa, sb = program(256, 300, 250, "f32", False, True)
big = gradir.parse(big_text)
a = rng.standard_normal(sa).astype(np.float32)
b = rng.standard_normal(sb).astype(np.float32)
drivers = rk.kernel_library("host", threaded=True)
needed = subprocess.run(["readelf", "-d", str(drivers)], capture_output=True, text=True).stdout
print("drivers:", drivers.name == rk.kernel_library("host").name[:-3] + "_omp.so",
      f"[{rk.kernel_library('host').name}]" in needed, "[libomp.so]" in needed,
      "[$ORIGIN]" in needed)
# CHECK: drivers: True True True True
for cache in (False, True):
    exe = gradir.compile(big, threads=2, cache=cache)
    _cache.wait()
    exe = gradir.compile(big, threads=2, cache=cache)   # a hit when cached
    regions = "omp.parallel" in exe.llvm_ir or "__kmpc_fork_call" in exe.llvm_ir
    folder = os.path.join(out, f"export-threads-{cache}")
    path = str(exe.export_library(os.path.join(folder, "big.so")))
    beside = sorted(f for f in os.listdir(folder) if f != "big.so")
    np.save(os.path.join(folder, "want.npy"), exe["main"](a, b))
    np.savez(os.path.join(folder, "args.npz"), a, b)
    child = subprocess.run([sys.executable, "-c", f"""
import sys, numpy as np
sys.modules['mlir'] = None            # no MLIR in this process
import gradir.runtime as rt
lib = rt.load({path!r})
a = np.load({os.path.join(folder, 'args.npz')!r})
print(np.array_equal(lib['main'](a['arr_0'], a['arr_1']), np.load({os.path.join(folder, 'want.npy')!r})))
"""], capture_output=True, text=True)
    print(f"export threads=2 cache={cache} hit={exe.cache_hit}: regions in the program "
          f"{regions}, beside: {[f.split('_')[-1] if f.startswith('libgradir') else f for f in beside]}, "
          f"loaded without mlir: {child.stdout.strip() or child.stderr[-400:]}")
# CHECK: export threads=2 cache=False hit=None: regions in the program False, beside: [{{.*}}.so', 'omp.so', 'libomp.so'], loaded without mlir: True
# CHECK: export threads=2 cache=True hit=True: regions in the program False, beside: [{{.*}}.so', 'omp.so', 'libomp.so'], loaded without mlir: True

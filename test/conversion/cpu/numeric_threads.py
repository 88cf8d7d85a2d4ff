# RUN: %PYTHON %s | FileCheck %s
# Multi-threaded CPU code (gradir.compile(..., threads=N)): at 1, 2 and 3
# threads (3 is more than this machine may have, on purpose) every program
# matches the reference interpreter, gives bitwise the same results on
# repeated runs, and bitwise the same results at every thread count (the
# parallel loops split outer dimensions, each element is computed in the
# single-threaded order; long float sums are blocked into fixed partial sums
# combined in a fixed order).  Code compiled for 1 thread has no parallel
# region; at 2 and 3 threads every program below has some, but the one of
# zero-size tensors (nothing worth a thread).  The last program is compiled
# for AVX2 (x86-64-v3: other register tiles, so other strips).

import numpy as np

import gradir
from gradir.conversion.cpu import rlx_parallel_loops
from gradir.testing.oracle import compare
from gradir.runtime.toolchain import uses_openmp

# The CPU pipeline keeps only loops of 2^22+ operations parallel; these small
# programs use the pass's own threshold so that every op's parallel form
# (convolutions, pools, reductions, matmul strips) runs threaded here.
rlx_parallel_loops.PIPELINE_MIN_WORK = rlx_parallel_loops.MIN_WORK

rng = np.random.default_rng(0)


def mlp_module(batch: int, ty: str = "f32"):
    return gradir.parse(f"""
func.func @main(%x: tensor<{batch}x784x{ty}>, %labels: tensor<{batch}xi64>,
                %w1: tensor<784x512x{ty}>, %b1: tensor<512x{ty}>,
                %w2: tensor<512x10x{ty}>, %b2: tensor<10x{ty}>) -> tensor<{ty}> {{
  %h = "rlx.matmul"(%x, %w1) : (tensor<{batch}x784x{ty}>, tensor<784x512x{ty}>) -> tensor<{batch}x512x{ty}>
  %hb = "rlx.add"(%h, %b1) : (tensor<{batch}x512x{ty}>, tensor<512x{ty}>) -> tensor<{batch}x512x{ty}>
  %r = "rlx.tanh"(%hb) : (tensor<{batch}x512x{ty}>) -> tensor<{batch}x512x{ty}>
  %o = "rlx.matmul"(%r, %w2) : (tensor<{batch}x512x{ty}>, tensor<512x10x{ty}>) -> tensor<{batch}x10x{ty}>
  %ob = "rlx.add"(%o, %b2) : (tensor<{batch}x10x{ty}>, tensor<10x{ty}>) -> tensor<{batch}x10x{ty}>
  %lp = "rlx.log_softmax"(%ob) : (tensor<{batch}x10x{ty}>) -> tensor<{batch}x10x{ty}>
  %loss = "rlx.nll_loss"(%lp, %labels) : (tensor<{batch}x10x{ty}>, tensor<{batch}xi64>) -> tensor<{ty}>
  return %loss : tensor<{ty}>
}}""")


def mlp_args(batch: int, dtype):
    return [rng.standard_normal((batch, 784)).astype(dtype),
            rng.integers(0, 10, batch).astype(np.int64),
            (rng.standard_normal((784, 512)) * 0.05).astype(dtype),
            (rng.standard_normal(512) * 0.1).astype(dtype),
            (rng.standard_normal((512, 10)) * 0.05).astype(dtype),
            (rng.standard_normal(10) * 0.1).astype(dtype)]


CONVNET = """
func.func @main(%x: tensor<16x3x20x20xT>, %labels: tensor<16xi64>,
                %w1: tensor<8x3x5x5xT>, %b1: tensor<8x1x1xT>,
                %w2: tensor<512x10xT>) -> tensor<T> {
  %c = "rlx.conv2d"(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<16x3x20x20xT>, tensor<8x3x5x5xT>) -> tensor<16x8x18x18xT>
  %cb = "rlx.add"(%c, %b1) : (tensor<16x8x18x18xT>, tensor<8x1x1xT>) -> tensor<16x8x18x18xT>
  %r = "rlx.relu"(%cb) : (tensor<16x8x18x18xT>) -> tensor<16x8x18x18xT>
  %p = "rlx.max_pool2d"(%r) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<16x8x18x18xT>) -> tensor<16x8x9x9xT>
  %a = "rlx.avg_pool2d"(%p) {pool_size = array<i64: 2, 2>} : (tensor<16x8x9x9xT>) -> tensor<16x8x8x8xT>
  %f = "rlx.reshape"(%a) : (tensor<16x8x8x8xT>) -> tensor<16x512xT>
  %d = "rlx.matmul"(%f, %w2) : (tensor<16x512xT>, tensor<512x10xT>) -> tensor<16x10xT>
  %lp = "rlx.log_softmax"(%d) : (tensor<16x10xT>) -> tensor<16x10xT>
  %loss = "rlx.nll_loss"(%lp, %labels) : (tensor<16x10xT>, tensor<16xi64>) -> tensor<T>
  return %loss : tensor<T>
}"""


def convnet_args(dtype):
    return [rng.standard_normal((16, 3, 20, 20)).astype(dtype),
            rng.integers(0, 10, 16).astype(np.int64),
            (rng.standard_normal((8, 3, 5, 5)) * 0.2).astype(dtype),
            (rng.standard_normal((8, 1, 1)) * 0.1).astype(dtype),
            (rng.standard_normal((512, 10)) * 0.05).astype(dtype)]


# A float32 sum long enough to be split into blocks across the threads (an
# odd length: the last block is short), a mean over the rows of a wide
# matrix, a batched matmul with odd sizes and a large transpose.
REDUCE = """
func.func @main(%x: tensor<1000003xf32>, %y: tensor<300x1001xf32>) -> (tensor<f32>, tensor<1001xf32>, tensor<300xf32>) {
  %s = "rlx.sum"(%x) : (tensor<1000003xf32>) -> tensor<f32>
  %m = "rlx.mean"(%y) {axis = array<i64: 0>} : (tensor<300x1001xf32>) -> tensor<1001xf32>
  %e = "rlx.exp"(%y) : (tensor<300x1001xf32>) -> tensor<300x1001xf32>
  %v = "rlx.variance"(%e) {axis = array<i64: 1>} : (tensor<300x1001xf32>) -> tensor<300xf32>
  return %s, %m, %v : tensor<f32>, tensor<1001xf32>, tensor<300xf32>
}"""

BMM = """
func.func @main(%a: tensor<6x97x131xf64>, %b: tensor<6x131x75xf64>, %t: tensor<700x900xf64>) -> (tensor<f64>, tensor<900x700xf64>) {
  %m = "rlx.matmul"(%a, %b) : (tensor<6x97x131xf64>, tensor<6x131x75xf64>) -> tensor<6x97x75xf64>
  %q = "rlx.square"(%m) : (tensor<6x97x75xf64>) -> tensor<6x97x75xf64>
  %s = "rlx.sum"(%q) : (tensor<6x97x75xf64>) -> tensor<f64>
  %p = "rlx.permute_dims"(%t) : (tensor<700x900xf64>) -> tensor<900x700xf64>
  return %s, %p : tensor<f64>, tensor<900x700xf64>
}"""


# Packed matmuls (at least 256 rows, wider than one register tile) with odd
# sizes: N not a multiple of the register tile (padded to one with threads
# > 1, peeled with one thread), M not a multiple of the M block, K not a
# multiple of the K block (the lhs gradient is a packed matmul with a
# transposed rhs).  With threads > 1 each thread gets one strip of the
# largest multiple of the thread count of N's tiles, the other tiles strips
# of one tile: on AVX-512 (f32 tiles of 32 columns) 333 columns are 11
# tiles (2 threads: 2 x 5 + 1; 3 threads: 3 x 3 + 2), 301 are 10 (2 x 5;
# 3 x 3 + 1); on AVX2 (16 columns) 21 and 19 tiles.
PACKED = """
func.func @main(%a: tensor<419x301xf32>, %b: tensor<301x333xf32>) -> tensor<f32> {
  %m = "rlx.matmul"(%a, %b) : (tensor<419x301xf32>, tensor<301x333xf32>) -> tensor<419x333xf32>
  %q = "rlx.square"(%m) : (tensor<419x333xf32>) -> tensor<419x333xf32>
  %s = "rlx.sum"(%q) : (tensor<419x333xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""


# f64 (AVX-512 tiles of 16 columns): 67 columns are 5 tiles (2 threads:
# 2 x 2 + 1; 3 threads: 3 x 1 + 2), 400 are 25 (the lhs gradient, whose
# rhs is a transpose); the second matmul and its gradients are too small
# for threads (fewer than 2^23 multiply-adds, rlx-parallel-loops'
# hot-min-work: one call; 400 x 400 x 67 is more, 300 x 300 x 67 was not).
PACKED_F64 = """
func.func @main(%a: tensor<400x400xf64>, %b: tensor<400x67xf64>, %c: tensor<67x20xf64>) -> tensor<f64> {
  %m = "rlx.matmul"(%a, %b) : (tensor<400x400xf64>, tensor<400x67xf64>) -> tensor<400x67xf64>
  %n = "rlx.matmul"(%m, %c) : (tensor<400x67xf64>, tensor<67x20xf64>) -> tensor<400x20xf64>
  %q = "rlx.square"(%n) : (tensor<400x20xf64>) -> tensor<400x20xf64>
  %s = "rlx.sum"(%q) : (tensor<400x20xf64>) -> tensor<f64>
  return %s : tensor<f64>
}"""


# Transposed rhs operands (dy @ W^T; the schedule transposes each panel of
# W^T from W inside the matmul's loops): 160 columns (no padding with
# threads: each strip transposes its own rows of W), K = 700 (three K
# blocks); 33 columns with 300 rows and K = 20 (too small for threads, and
# W too small to fuse: W^T materialized); 160 columns with 519 rows (M
# blocks and a remainder, K = 130); %vt has two users, %ut one.
# (At least 2^22 multiply-adds where a matmul is to run on threads.)
RHS_T = """
func.func @main(%a: tensor<64x700xT>, %w: tensor<160x700xT>, %b: tensor<300x20xT>,
                %v: tensor<33x20xT>, %c: tensor<519x130xT>, %u: tensor<160x130xT>) -> (tensor<T>, tensor<20x33xT>) {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<160x700xT>) -> tensor<700x160xT>
  %m1 = "rlx.matmul"(%a, %wt) : (tensor<64x700xT>, tensor<700x160xT>) -> tensor<64x160xT>
  %vt = "rlx.permute_dims"(%v) {axes = array<i64: 1, 0>} : (tensor<33x20xT>) -> tensor<20x33xT>
  %m2 = "rlx.matmul"(%b, %vt) : (tensor<300x20xT>, tensor<20x33xT>) -> tensor<300x33xT>
  %ut = "rlx.permute_dims"(%u) {axes = array<i64: 1, 0>} : (tensor<160x130xT>) -> tensor<130x160xT>
  %m3 = "rlx.matmul"(%c, %ut) : (tensor<519x130xT>, tensor<130x160xT>) -> tensor<519x160xT>
  %q1 = "rlx.square"(%m1) : (tensor<64x160xT>) -> tensor<64x160xT>
  %s1 = "rlx.sum"(%q1) : (tensor<64x160xT>) -> tensor<T>
  %q2 = "rlx.square"(%m2) : (tensor<300x33xT>) -> tensor<300x33xT>
  %s2 = "rlx.sum"(%q2) : (tensor<300x33xT>) -> tensor<T>
  %q3 = "rlx.square"(%m3) : (tensor<519x160xT>) -> tensor<519x160xT>
  %s3 = "rlx.sum"(%q3) : (tensor<519x160xT>) -> tensor<T>
  %s12 = "rlx.add"(%s1, %s2) : (tensor<T>, tensor<T>) -> tensor<T>
  %s = "rlx.add"(%s12, %s3) : (tensor<T>, tensor<T>) -> tensor<T>
  return %s, %vt : tensor<T>, tensor<20x33xT>
}"""


# Elementwise chains at threads > 1 (the schedule's vectorized loops in an
# scf.forall: rank 1 in chunks whose last one is partial, rank 2 by rows).
ELEMENTWISE = """
func.func @main(%a: tensor<1000003xf32>, %b: tensor<300x1001xf64>) -> (tensor<1000003xf32>, tensor<300x1001xf64>) {
  %e = "rlx.exp"(%a) : (tensor<1000003xf32>) -> tensor<1000003xf32>
  %t = "rlx.tanh"(%a) : (tensor<1000003xf32>) -> tensor<1000003xf32>
  %y = "rlx.multiply"(%e, %t) : (tensor<1000003xf32>, tensor<1000003xf32>) -> tensor<1000003xf32>
  %s = "rlx.sigmoid"(%b) : (tensor<300x1001xf64>) -> tensor<300x1001xf64>
  %z = "rlx.add"(%s, %b) : (tensor<300x1001xf64>, tensor<300x1001xf64>) -> tensor<300x1001xf64>
  return %y, %z : tensor<1000003xf32>, tensor<300x1001xf64>
}"""


def rhs_t_args(dt):
    shapes = [(64, 700), (160, 700), (300, 20), (33, 20), (519, 130), (160, 130)]
    return [rng.uniform(-0.1, 0.1, s).astype(dt) for s in shapes]


# Zero-size dimensions (the parallel schedule leaves such matmuls and
# transposes to plain loops: tiling them into an scf.forall asserts in MLIR).
EMPTY = """
func.func @main(%a: tensor<0x3xf64>, %b: tensor<3x0xf32>) -> (tensor<f64>, tensor<0x3xf32>) {
  %t = "rlx.permute_dims"(%a) : (tensor<0x3xf64>) -> tensor<3x0xf64>
  %m = "rlx.matmul"(%a, %t) : (tensor<0x3xf64>, tensor<3x0xf64>) -> tensor<0x0xf64>
  %s = "rlx.sum"(%m) : (tensor<0x0xf64>) -> tensor<f64>
  %u = "rlx.permute_dims"(%b) : (tensor<3x0xf32>) -> tensor<0x3xf32>
  return %s, %u : tensor<f64>, tensor<0x3xf32>
}"""


def gradient(module):
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
    return module


cases = [
    ("mlp64 f32 gradient", gradient(mlp_module(64)), "main_adjoint", mlp_args(64, np.float32)),
    ("mlp256 f64 gradient", gradient(mlp_module(256, "f64")), "main_adjoint",
     mlp_args(256, np.float64)),
    ("convnet f32 gradient", gradient(gradir.parse(CONVNET.replace("xT>", "xf32>")
                                                   .replace("<T>", "<f32>"))),
     "main_adjoint", convnet_args(np.float32)),
    ("convnet f64 gradient", gradient(gradir.parse(CONVNET.replace("xT>", "xf64>")
                                                   .replace("<T>", "<f64>"))),
     "main_adjoint", convnet_args(np.float64)),
    ("reductions f32", gradir.parse(REDUCE), "main",
     [rng.uniform(0, 1, 1000003).astype(np.float32),
      rng.standard_normal((300, 1001)).astype(np.float32)]),
    ("batch matmul f64 gradient", gradient(gradir.parse(BMM)), "main_adjoint",
     [rng.standard_normal((6, 97, 131)), rng.standard_normal((6, 131, 75)),
      rng.standard_normal((700, 900))]),
    ("packed odd matmul f32 gradient", gradient(gradir.parse(PACKED)), "main_adjoint",
     [rng.uniform(0, 0.1, (419, 301)).astype(np.float32),
      rng.uniform(0, 0.1, (301, 333)).astype(np.float32)]),
]

cases.append(("zero-size f64/f32 gradient", gradient(gradir.parse(EMPTY)), "main_adjoint",
              [np.zeros((0, 3)), np.zeros((3, 0), np.float32)]))
cases.append(("packed odd matmul f64 gradient", gradient(gradir.parse(PACKED_F64)),
              "main_adjoint", [rng.uniform(0, 0.1, (400, 400)), rng.uniform(0, 0.1, (400, 67)),
                               rng.uniform(0, 0.1, (67, 20))]))
for t, dt in (("f32", np.float32), ("f64", np.float64)):
    cases.append((f"transposed rhs {t}", gradir.parse(RHS_T.replace("xT>", f"x{t}>")
                                                       .replace("<T>", f"<{t}>")),
                  "main", rhs_t_args(dt)))
cases.append(("elementwise f32/f64", gradir.parse(ELEMENTWISE), "main",
              [rng.uniform(-3, 3, 1000003).astype(np.float32),
               rng.uniform(-3, 3, (300, 1001))]))
cases.append(("transposed rhs f32 (AVX2)", cases[-2][1], "main", cases[-2][3], "x86-64-v3"))
cases.append(("packed odd matmul f32 gradient (AVX2)", gradient(gradir.parse(PACKED)),
              "main_adjoint", cases[6][3], "x86-64-v3"))

for name, module, fn, args, *cpu in cases:
    want = gradir.interpret(module, fn, *args)
    width = 4 if any(a.dtype == np.float32 for a in args) else 8
    by_threads = {}
    for threads in (1, 2, 3):
        exe = gradir.compile(module, threads=threads, cpu=cpu[0] if cpu else "host")
        # (OpenMP regions of its own, or calls of the matmul kernels'
        # multi-threaded drivers, whose regions are in their library)
        parallel = uses_openmp(exe.llvm_ir)
        got = exe[fn](*args)
        again = exe[fn](*args)
        repeat = all(np.array_equal(g, a) for g, a in zip(got, again))
        problems = compare(tuple(got), tuple(want), name, width)
        by_threads[threads] = got
        print(f"{name} threads={threads}: parallel={parallel} matches the interpreter: "
              f"{not problems} bitwise repeatable: {repeat}", *problems)
    same = all(np.array_equal(g1, g) for t in (2, 3)
               for g1, g in zip(by_threads[1], by_threads[t]))
    print(f"{name}: bitwise the same at 1, 2 and 3 threads: {same}")

# CHECK: mlp64 f32 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: mlp64 f32 gradient threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: mlp64 f32 gradient threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: mlp64 f32 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: mlp256 f64 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: mlp256 f64 gradient threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: mlp256 f64 gradient threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: mlp256 f64 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: convnet f32 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: convnet f32 gradient threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: convnet f32 gradient threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: convnet f32 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: convnet f64 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: convnet f64 gradient threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: convnet f64 gradient threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: convnet f64 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: reductions f32 threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: reductions f32 threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: reductions f32 threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: reductions f32: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: batch matmul f64 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: batch matmul f64 gradient threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: batch matmul f64 gradient threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: batch matmul f64 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: packed odd matmul f32 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f32 gradient threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f32 gradient threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f32 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: zero-size f64/f32 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: zero-size f64/f32 gradient threads=2: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: zero-size f64/f32 gradient threads=3: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: zero-size f64/f32 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: packed odd matmul f64 gradient threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f64 gradient threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f64 gradient threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f64 gradient: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: transposed rhs f32 threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f32 threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f32 threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f32: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: transposed rhs f64 threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f64 threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f64 threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f64: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: elementwise f32/f64 threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: elementwise f32/f64 threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: elementwise f32/f64 threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: elementwise f32/f64: bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: transposed rhs f32 (AVX2) threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f32 (AVX2) threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f32 (AVX2) threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: transposed rhs f32 (AVX2): bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: packed odd matmul f32 gradient (AVX2) threads=1: parallel=False matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f32 gradient (AVX2) threads=2: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f32 gradient (AVX2) threads=3: parallel=True matches the interpreter: True bitwise repeatable: True
# CHECK-NEXT: packed odd matmul f32 gradient (AVX2): bitwise the same at 1, 2 and 3 threads: True

# Bad thread counts are CompileErrors naming the value (gradir.compile), and
# the environment's default is read when compile runs.
import os  # noqa: E402

from gradir.runtime.signature import CompileError  # noqa: E402

tiny = gradir.parse("""func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = "rlx.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}""")
for bad in (0, -2, True, 1.5):
    try:
        gradir.compile(tiny, threads=bad)
        print("accepted", bad)
    except CompileError as err:
        print("refused:", err)
os.environ["GRADIR_NUM_THREADS"] = "x"
try:
    gradir.compile(tiny)
except CompileError as err:
    print("refused:", err)
# more threads than libomp runs in a region: it ended the process (SIGABRT)
from gradir.conversion.cpu.host import max_threads  # noqa: E402
for where in ("argument", "environment"):
    try:
        if where == "argument":
            gradir.compile(tiny, threads=max_threads() + 1)
        else:
            os.environ["GRADIR_NUM_THREADS"] = "1000000"
            gradir.compile(tiny)
        print("accepted", where)
    except CompileError as err:
        print("refused:", str(err).split(" (at most")[0])
os.environ["GRADIR_NUM_THREADS"] = "3"
print("default from GRADIR_NUM_THREADS:", gradir.compile(tiny).options.threads)
del os.environ["GRADIR_NUM_THREADS"]
os.environ["OMP_NUM_THREADS"] = "5,2"
print("default from OMP_NUM_THREADS:", gradir.compile(tiny).options.threads)
del os.environ["OMP_NUM_THREADS"]
print("default from the affinity:", gradir.compile(tiny).options.threads == len(os.sched_getaffinity(0)))
# CHECK-NEXT: refused: threads must be a positive integer, not 0
# CHECK-NEXT: refused: threads must be a positive integer, not -2
# CHECK-NEXT: refused: threads must be a positive integer, not True
# CHECK-NEXT: refused: threads must be a positive integer, not 1.5
# CHECK-NEXT: refused: GRADIR_NUM_THREADS='x' is not a positive thread count
# CHECK-NEXT: refused: threads: {{[0-9]+}} threads is more than this system runs in one OpenMP region
# CHECK-NEXT: refused: GRADIR_NUM_THREADS='1000000': 1000000 threads is more than this system runs in one OpenMP region
# CHECK-NEXT: default from GRADIR_NUM_THREADS: 3
# CHECK-NEXT: default from OMP_NUM_THREADS: 5
# CHECK-NEXT: default from the affinity: True

# Loops between PIPELINE_HOT_MIN_WORK and PIPELINE_MIN_WORK run on the threads
# only while libomp's block time is nonzero (workers hot), else a sequential
# copy runs.  Here every loop from 2^10 operations up to the pass's 2^17 is
# such a loop; gradir's load sampler is made to say "idle" (hot: block time
# HOT_BLOCKTIME_MS) or "busy" (0) on every call, and both must give the
# interpreter's results, bitwise the same as one thread.
from gradir.runtime import openmp

rlx_parallel_loops.PIPELINE_HOT_MIN_WORK = 1 << 10
openmp.SAMPLE_S = 0.0
for name, module, fn, args in cases[:3]:
    want = gradir.interpret(module, fn, *args)
    width = 4 if any(a.dtype == np.float32 for a in args) else 8
    one = gradir.compile(module, threads=1)[fn](*args)
    exe = gradir.compile(module, threads=2)
    guarded = exe.llvm_ir.count("llvm.call @kmp_get_blocktime()")
    results = {}
    for mode, others in (("hot", float("inf")), ("cold", float("-inf"))):
        openmp.IDLE_OTHERS = others
        exe[fn](*args)                   # a sample: the choice holds from here on
        results[mode] = exe[fn](*args)
        problems = compare(tuple(results[mode]), tuple(want), name, width)
        print(f"{name} threads=2 {mode}: block time {openmp.blocktime_ms()} ms, "
              f"hot-only loops: {guarded > 0}, matches the interpreter: {not problems}", *problems)
    same = all(np.array_equal(a, b) and np.array_equal(a, c)
               for a, b, c in zip(one, results["hot"], results["cold"]))
    print(f"{name}: hot, cold and one thread bitwise the same: {same}")
# CHECK-NEXT: mlp64 f32 gradient threads=2 hot: block time 1 ms, hot-only loops: True, matches the interpreter: True
# CHECK-NEXT: mlp64 f32 gradient threads=2 cold: block time 0 ms, hot-only loops: True, matches the interpreter: True
# CHECK-NEXT: mlp64 f32 gradient: hot, cold and one thread bitwise the same: True
# CHECK-NEXT: mlp256 f64 gradient threads=2 hot: block time 1 ms, hot-only loops: True, matches the interpreter: True
# CHECK-NEXT: mlp256 f64 gradient threads=2 cold: block time 0 ms, hot-only loops: True, matches the interpreter: True
# CHECK-NEXT: mlp256 f64 gradient: hot, cold and one thread bitwise the same: True
# CHECK-NEXT: convnet f32 gradient threads=2 hot: block time 1 ms, hot-only loops: True, matches the interpreter: True
# CHECK-NEXT: convnet f32 gradient threads=2 cold: block time 0 ms, hot-only loops: True, matches the interpreter: True
# CHECK-NEXT: convnet f32 gradient: hot, cold and one thread bitwise the same: True

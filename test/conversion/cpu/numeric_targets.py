# RUN: %PYTHON %s | FileCheck %s
# The schedule and code of every CPU target give the interpreter's results:
# GEMMs (f32/f64; shapes that divide the register tiles and shapes that need
# padding; batch matmul; transposed operands) and MLP gradients, compiled
# with cpu="x86-64-v3" (AVX2: 6x16 / 6x8 tiles, 256-bit vectors) and
# cpu="x86-64-v4" (AVX-512: 8x32 / 8x16, 512-bit).  Code for a CPU whose
# features this machine lacks is compiled and checked in its IR only.
# Single-threaded, the matmuls large enough to pack their rhs panels (at
# least 256 rows, more columns than one register tile): power-of-two
# and odd sizes (remainders of the K block, the M block, the N and M tiles),
# batch matmul and a transposed lhs; and N tiles wider than one vector but
# not a multiple of it, split into one vector and the rest (f32: 9..15
# columns on AVX2, 17..31 on AVX-512; f64: 5..7 / 9..15).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, ints, op, rand, run, short  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.cpu.host import detect_host, missing_features, resolve  # noqa: E402
from gradir.conversion.cpu.schedule import schedule_params  # noqa: E402

TARGETS = ("x86-64-v3", "x86-64-v4")


def gemm_cases(s, dt):
    t = short(dt)
    for m, k, n in [(64, 96, 64), (37, 53, 29), (6, 300, 40), (1, 7, 1)]:
        s.case(f"gemm_{m}x{k}x{n}_{t}", lambda a, b: op("rlx.matmul", a, b),
               rand((m, k), dt), rand((k, n), dt))
    s.case(f"batch_matmul_{t}", lambda a, b: op("rlx.matmul", a, b),
           rand((3, 13, 24), dt), rand((3, 24, 33), dt))
    s.case(f"matmul_transposed_{t}", lambda a, b: op("rlx.matmul", op("rlx.permute_dims", a),
                                                     op("rlx.permute_dims", b)),
           rand((40, 19), dt), rand((27, 40), dt))


def mlp(x, w1, b1, w2, b2, labels):
    h = op("rlx.relu", op("rlx.add", op("rlx.matmul", x, w1), b1))
    logits = op("rlx.add", op("rlx.matmul", h, w2), b2)
    return op("rlx.nll_loss", op("rlx.log_softmax", logits, axis=[-1]), labels,
              reduction="mean")


def runnable(cpu):
    return resolve(cpu).arch == detect_host().arch and not missing_features(
        resolve(cpu).features)


@run
def test_schedules():
    for cpu in TARGETS:
        p = schedule_params(cpu)
        print(cpu, resolve(cpu).isa, f"f32 {p.f32_m}x{p.f32_n}", f"f64 {p.f64_m}x{p.f64_n}",
              f"transpose {p.transpose}")
# CHECK-LABEL: TEST: test_schedules
# CHECK-NEXT: x86-64-v3 avx2 f32 6x16 f64 6x8 transpose 8
# CHECK-NEXT: x86-64-v4 avx512 f32 8x32 f64 8x16 transpose 16


def check_ir_only(cpu):
    """Lowers a GEMM for ``cpu`` and checks the LLVM target attributes."""
    m = gradir.parse("""
func.func @g(%a: tensor<37x53xf32>, %b: tensor<53x29xf32>) -> tensor<37x29xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<37x53xf32>, tensor<53x29xf32>) -> tensor<37x29xf32>
  return %0 : tensor<37x29xf32>
}""")
    gradir.run_pipeline(m, f"builtin.module(rlx-lower-to-llvm{{cpu={cpu}}})")
    text = gradir.print_module(m)
    assert f'target_cpu = "{cpu}"' in text, text[:2000]
    print(f"ok compiled for {cpu} (not run: this CPU lacks its features)")


@run
def test_gemms():
    for cpu in TARGETS:
        if not runnable(cpu):
            check_ir_only(cpu)
            continue
        s = Suite(f"gemms {cpu}", cpu=cpu)
        for dt in FLOATS:
            gemm_cases(s, dt)
        s.run()
# CHECK-LABEL: TEST: test_gemms
# CHECK: {{gemms x86-64-v3: all 12 cases match the interpreter|ok compiled for x86-64-v3}}
# CHECK: {{gemms x86-64-v4: all 12 cases match the interpreter|ok compiled for x86-64-v4}}


@run
def test_mlp_gradients():
    for cpu in TARGETS:
        if not runnable(cpu):
            check_ir_only(cpu)
            continue
        s = Suite(f"mlp gradients {cpu}", gradient=True, cpu=cpu)
        for dt in FLOATS:
            args = [rand(sh, dt) for sh in [(64, 50), (50, 96), (96,), (96, 10), (10,)]]
            s.case(f"mlp_{short(dt)}", mlp, *args, ints((64,), 10))
        s.run()
# CHECK-LABEL: TEST: test_mlp_gradients
# CHECK: {{mlp gradients x86-64-v3: all 2 cases match the interpreter|ok compiled for x86-64-v3}}
# CHECK: {{mlp gradients x86-64-v4: all 2 cases match the interpreter|ok compiled for x86-64-v4}}


def packed_cases(s, dt):
    t = short(dt)
    # sums of K products (|a|, |b| < 2) in another order than the
    # interpreter's: about K roundings of the element type
    tol = (lambda k: 1e-6 * k) if dt is np.float32 else (lambda k: 2e-15 * k)
    for m, k, n in [(512, 512, 512), (256, 1024, 64), (397, 521, 83), (300, 784, 100),
                    (256, 300, 17), (800, 64, 40)]:
        s.case(f"packed_{m}x{k}x{n}_{t}", lambda a, b: op("rlx.matmul", a, b),
               rand((m, k), dt), rand((k, n), dt), atol=tol(k))
    s.case(f"packed_batch_{t}", lambda a, b: op("rlx.matmul", a, b),
           rand((2, 261, 70), dt), rand((2, 70, 50), dt), atol=tol(70))
    s.case(f"packed_lhs_t_{t}", lambda x, y: op("rlx.matmul", op("rlx.permute_dims", x), y),
           rand((70, 297), dt), rand((70, 45), dt), atol=tol(70))
    for m, k, n in [(30, 40, 10), (13, 50, 24), (9, 20, 50), (7, 33, 6), (11, 19, 13),
                    (40, 64, 120)]:
        s.case(f"split_{m}x{k}x{n}_{t}", lambda a, b: op("rlx.matmul", a, b),
               rand((m, k), dt), rand((k, n), dt), atol=tol(k))
    s.case(f"split_batch_{t}", lambda a, b: op("rlx.matmul", a, b),
           rand((2, 9, 30), dt), rand((2, 30, 12), dt), atol=tol(30))
    s.case(f"packed_accumulate_{t}",
           lambda a, b, c: op("rlx.add", op("rlx.matmul", a, b), op("rlx.matmul", c, b)),
           rand((260, 40), dt), rand((40, 33), dt), rand((260, 40), dt), atol=tol(80))


@run
def test_packed_gemms():
    for cpu in TARGETS:
        if not runnable(cpu):
            check_ir_only(cpu)
            continue
        s = Suite(f"packed gemms {cpu}", cpu=cpu, threads=1)
        for dt in FLOATS:
            packed_cases(s, dt)
        s.run()
# CHECK-LABEL: TEST: test_packed_gemms
# CHECK: ok packed_397x521x83_f32
# CHECK: ok packed_batch_f64
# CHECK: ok split_30x40x10_f64
# CHECK: {{packed gemms x86-64-v3: all 32 cases match the interpreter|ok compiled for x86-64-v3}}
# CHECK: {{packed gemms x86-64-v4: all 32 cases match the interpreter|ok compiled for x86-64-v4}}

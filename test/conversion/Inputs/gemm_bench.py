"""GEMM throughput of the CPU pipeline against numpy (not a lit test).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 build/venv/bin/python \
        test/conversion/Inputs/gemm_bench.py [N ...] [--opt-level L] [--dtype f32|f64] [--cpu host|x86-64-v3]

Prints, per size, the best-of-runs time and GFLOP/s of ``rlx.matmul``
compiled by ``gradir.compile`` (the rlx-to-linalg + CPU pipeline) and of
numpy's ``@`` in the same process.
"""

import argparse
import time

import numpy as np

import gradir


def gemm_module(n, dtype):
    t = f"tensor<{n}x{n}x{dtype}>"
    return gradir.parse(f"""
func.func @gemm(%a: {t}, %b: {t}) -> {t} {{
  %0 = "rlx.matmul"(%a, %b) : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("sizes", nargs="*", type=int, default=[512, 1024])
    p.add_argument("--opt-level", type=int, default=3)
    p.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--cpu", default="host", help="gradir's target (x86-64-v3: AVX2)")
    args = p.parse_args(argv)
    np_dtype = np.float32 if args.dtype == "f32" else np.float64
    rng = np.random.default_rng(0)
    for n in args.sizes:
        exe = gradir.compile(gemm_module(n, args.dtype), opt_level=args.opt_level, cpu=args.cpu)
        f = exe["gemm"]
        a = rng.standard_normal((n, n)).astype(np_dtype)
        b = rng.standard_normal((n, n)).astype(np_dtype)
        c = f(a, b)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = np.max(np.abs(c - ref)) / np.max(np.abs(ref))
        flops = 2.0 * n ** 3
        tg = best(lambda: f(a, b), args.repeat)
        tn = best(lambda: a @ b, args.repeat)
        print(f"GEMM {n}^3 {args.dtype}: gradir {tg * 1e3:8.2f} ms {flops / tg / 1e9:7.1f} GFLOP/s | "
              f"numpy {tn * 1e3:8.2f} ms {flops / tn / 1e9:7.1f} GFLOP/s | "
              f"numpy/gradir time {tn / tg:5.2f} | rel err {err:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Matmuls whose rhs is a transpose (``dy @ W^T``, the backward of a dense
layer): gradir's compiled ``matmul(a, permute_dims(w))`` against the same
product with ``W^T`` already in memory (``matmul(a, wt)``), and against
numpy (BLAS reads the transpose in place), PyTorch eager and JAX jit, f32.

    build/venv/bin/python bench/matmul_layouts.py [--threads N]

The process is pinned to N cores (default 1) and every runtime told so
before anything is imported (as bench/cpu.py does).  Rows: M x K x N of
``a (M x K) @ w^T`` with ``w`` N x K.  Columns: ms of gradir with the
transposed rhs, gradir with a plain rhs (the same arithmetic, no transpose
anywhere), numpy, torch, jax (gradir's two timed before and after the
peers, the faster kept); then ratios: plain / transposed (1: the
transpose costs nothing) and peer / gradir (>1: gradir faster).  Results
are checked against numpy (float64).  Prints the CPU, its vector ISA and the
load average.
"""

from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _cli
    _cli.check(sys.argv[1:], __doc__, valued=("--threads",))
THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
if __name__ == "__main__":     # (imported, e.g. for module(), it leaves the process alone)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "GRADIR_NUM_THREADS"):
        os.environ[var] = str(THREADS)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen="
                               + ("true" if THREADS > 1 else "false")
                               + f" intra_op_parallelism_threads={THREADS}").strip()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:THREADS])

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cpu  # noqa: E402  bench/cpu.py: timeit, peers

import numpy as np  # noqa: E402

# (M, K, N): the MLP step's dy @ W^T products (batch 64 and 256, 512 and
# 10 units), LeNet-5's dense layers (120 -> 84 -> 10 at batch 64), and a
# large square one.
SHAPES = [tuple(map(int, s.split("x"))) for s in os.environ["BENCH_SHAPES"].split(",")] if os.environ.get("BENCH_SHAPES") else [(64, 512, 512), (256, 512, 512), (64, 10, 512), (64, 84, 120), (64, 10, 84),
          (1024, 1024, 1024)]


def module(m, k, n, transposed):
    import gradir
    w = f"tensor<{n}x{k}xf32>" if transposed else f"tensor<{k}x{n}xf32>"
    rhs = ('%wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : '
           f'({w}) -> tensor<{k}x{n}xf32>\n  ') if transposed else ""
    b = "%wt" if transposed else "%w"
    return gradir.parse(f"""
func.func @main(%a: tensor<{m}x{k}xf32>, %w: {w}) -> tensor<{m}x{n}xf32> {{
  {rhs}%y = "rlx.matmul"(%a, {b}) : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %y : tensor<{m}x{n}xf32>
}}""")


def main() -> int:
    import platform

    import gradir
    from gradir.conversion.cpu.host import detect_host

    peers = cpu.peers(THREADS)
    rng = np.random.default_rng(0)
    names = ["gradir W^T", "gradir W", "numpy"] + list(peers)
    print(f"{'M x K x N':<16}" + "".join(f"{n + ' ms':>14}" for n in names)
          + f"{'W / W^T':>10}" + "".join(f"{p + '/gr':>10}" for p in names[2:]))
    for m, k, n in SHAPES:
        a = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        wt = np.ascontiguousarray(w.T)
        ref = a.astype(np.float64) @ w.T.astype(np.float64)
        ft = gradir.compile(module(m, k, n, True), threads=THREADS)["main"]
        fp = gradir.compile(module(m, k, n, False), threads=THREADS)["main"]
        for got in (ft(a, w), fp(a, wt)):
            err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)
            assert err < 1e-5, (m, k, n, err)
        # gradir's two variants timed before and after the peers, the faster
        # of each kept: XLA's worker threads keep spinning for a while after
        # a JAX call, and the row timed next (in an earlier version of this
        # script, always gradir W^T) paid for it
        time.sleep(0.5)
        gt = [cpu.timeit(lambda: ft(a, w)), cpu.timeit(lambda: fp(a, wt))]
        times = [0.0, 0.0, cpu.timeit(lambda: a @ w.T)]
        if "torch" in peers:
            torch = peers["torch"]
            ta, tw = torch.from_numpy(a), torch.from_numpy(w)
            times.append(cpu.timeit(lambda: ta @ tw.T))
        if "jax" in peers:
            jax = peers["jax"]
            f = jax.jit(lambda x, y: x @ y.T)
            ja, jw = jax.device_put(a), jax.device_put(w)
            times.append(cpu.timeit(lambda: f(ja, jw).block_until_ready()))
        time.sleep(0.5)
        times[1] = min(gt[1], cpu.timeit(lambda: fp(a, wt)))
        times[0] = min(gt[0], cpu.timeit(lambda: ft(a, w)))
        print(f"{f'{m}x{k}x{n}':<16}" + "".join(f"{t * 1e3:>14.4f}" for t in times)
              + f"{times[1] / times[0]:>10.2f}" + "".join(f"{t / times[0]:>10.2f}"
                                                          for t in times[2:]), flush=True)
    host = detect_host()
    print(f"# {host.model or platform.machine()}, {THREADS} thread(s) pinned, vector ISA "
          f"{host.isa}; load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())

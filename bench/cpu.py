"""CPU speed of compiled gradir code against numpy, PyTorch eager and JAX jit.

    build/venv/bin/pip install torch==2.13.0 jax     # peers (once; not in CI)
    build/venv/bin/python bench/cpu.py               # threads 1 and 2
    build/venv/bin/python bench/cpu.py --threads 1 --quick
    build/venv/bin/python bench/cpu.py --isa avx2    # everyone held to AVX2 + FMA
    build/venv/bin/python bench/cpu.py --json bench/results/cpu.json   # + the tables as JSON

Workloads, all in float32, each run side by side in one process:
  * mlp{B}:  one gradient step (loss, logits and all six parameter
    gradients) of a 784-512-512-10 MLP with nll_loss(log_softmax), batch B
    in {64, 256}; numpy runs a hand-written backward (examples/mlp.py);
  * seed{N}: TVM Relax's seed example, sum(matmul(x^T, y^T)) and its two
    gradients, N in {3, 512};
  * lenet{B}: one LeNet-5 gradient step (bench/lenet.py: conv 5x5 relu
    max-pool 2, twice, dense 256-120-84-10, log_softmax + nll_loss; loss and
    the ten parameter gradients), batch 64; no numpy version;
  * gemm{N}: an N^3 matmul, N in {512, 1024} (GFLOP/s printed too);
  * gradir's GEMM compiled for this host (cpu="host") and for AVX2 only
    (cpu="x86-64-v3": its register tiles, 256-bit vectors), in a second table.
The header names the CPU model and its vector ISA (gradir's host detection).
``--isa avx2`` measures what an AVX2-only machine (the x86-64-v3 level:
AVX2, FMA, 16 vector registers) would run, on this one: gradir compiles
with cpu="x86-64-v3" and every peer is held to AVX2 by its own switch
(OpenBLAS ``OPENBLAS_CORETYPE=Haswell``, MKL ``MKL_ENABLE_INSTRUCTIONS=AVX2``,
oneDNN ``ONEDNN_MAX_CPU_ISA=AVX2``, XLA ``--xla_cpu_max_isa=AVX2``); the
second table is then left out.  XLA's switch holds only the code XLA
generates: its library GEMM kernels still use AVX-512 (measured: ~245
GFLOP/s at 512^3 on one core, more than AVX2 can do), so JAX's column there
is not an AVX2 number.
For each thread count a fresh process is pinned to that many cores
(sched_setaffinity) and sets OMP/OpenBLAS/MKL threads,
torch.set_num_threads and XLA's Eigen threading before importing anything.
gradir compiles with threads= that count (its parallel loops run on LLVM's
OpenMP runtime, one thread per pinned core); at more than one thread a third
table times gradir compiled with threads=1 in the same pinned process.  Timings: median of R runs after warm-up.  Ratios are
peer time / gradir time (>1: gradir is faster).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance


# Seconds of quiet before each measurement: XLA's (Eigen's) worker threads
# keep spinning for a while after a JAX call, and whatever was timed next
# (in this script, gradir's next workload) shared the cores with them.
SETTLE_S = 0.2


def timeit(fn, min_time=0.3, max_runs=200, stat=statistics.median):
    """``stat`` (median by default) of the times of ``fn()`` after
    ``SETTLE_S`` of sleep and two warm-up calls: at least 5 runs, more until
    ``min_time`` seconds or ``max_runs`` runs.  bench/cpu_math.py and
    bench/conv_ops.py use it too."""
    time.sleep(SETTLE_S)
    fn()
    fn()
    runs = []
    start = time.perf_counter()
    while len(runs) < 5 or (time.perf_counter() - start < min_time and len(runs) < max_runs):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return stat(runs)


# The CPU gradir compiles for ("host", or "x86-64-v3" under --isa avx2).
CPU = os.environ.get("BENCH_GRADIR_CPU", "host")

# --isa avx2: the switches that hold each peer's kernels to AVX2 + FMA.
AVX2_ENV = {"OPENBLAS_CORETYPE": "Haswell", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
            "ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2",
            "BENCH_GRADIR_CPU": "x86-64-v3"}


def seed_module(n: int):
    import gradir
    t = f"tensor<{n}x{n}xf32>"
    text = f"""
func.func @main(%x: {t}, %y: {t}) -> tensor<f32> {{
  %xt = "rlx.permute_dims"(%x) : ({t}) -> {t}
  %yt = "rlx.permute_dims"(%y) : ({t}) -> {t}
  %m = "rlx.matmul"(%xt, %yt) : ({t}, {t}) -> {t}
  %s = "rlx.sum"(%m) : ({t}) -> tensor<f32>
  return %s : tensor<f32>
}}"""
    m = gradir.parse(text)
    gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
    return m


def gemm_module(n: int):
    import gradir
    t = f"tensor<{n}x{n}xf32>"
    return gradir.parse(f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %m = "rlx.matmul"(%a, %b) : ({t}, {t}) -> {t}
  return %m : {t}
}}""")


def peers(threads: int):
    """Imports the peers that are installed; returns name -> module."""
    out = {}
    try:
        import torch
        torch.set_num_threads(threads)
        out["torch"] = torch
    except ImportError:
        pass
    try:
        import jax
        jax.config.update("jax_enable_x64", False)
        out["jax"] = jax
    except ImportError:
        pass
    return out


def run_workloads(threads: int, quick: bool) -> list[dict]:
    import numpy as np

    import gradir
    from mlp import build_mlp, differentiate, init_params, numpy_step

    have = peers(threads)
    rows = []

    def record(workload, name, seconds, flops=None):
        rows.append({"workload": workload, "threads": threads, "impl": name,
                     "ms": seconds * 1e3, "gflops": flops / seconds / 1e9 if flops else None})

    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    for batch in ([64] if quick else [64, 256]):
        wl = f"mlp{batch}"
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        y = rng.integers(0, 10, batch).astype(np.int64)
        params = init_params(sizes)
        exe = gradir.compile(differentiate(build_mlp(batch, sizes)), threads=threads, cpu=CPU)
        step = exe["main_adjoint"]
        got = step(x, y, *params)
        ref = numpy_step(x, y, *params)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=2e-3, atol=2e-4)
        record(wl, "gradir", timeit(lambda: step(x, y, *params)))
        if threads > 1:
            step1 = gradir.compile(differentiate(build_mlp(batch, sizes)), threads=1, cpu=CPU)["main_adjoint"]
            record(wl, "t1:gradir", timeit(lambda: step1(x, y, *params)))
        record(wl, "numpy", timeit(lambda: numpy_step(x, y, *params)))
        if "torch" in have:
            torch = have["torch"]
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
            tp = [torch.from_numpy(p.copy()).requires_grad_() for p in params]

            def torch_step():
                h = tx
                for i in range(3):
                    h = h @ tp[2 * i] + tp[2 * i + 1]
                    if i < 2:
                        h = torch.relu(h)
                loss = torch.nn.functional.nll_loss(torch.log_softmax(h, -1), ty)
                return torch.autograd.grad(loss, tp)
            record(wl, "torch", timeit(torch_step))
        if "jax" in have:
            jax = have["jax"]
            jnp = jax.numpy

            def loss_fn(ps, xx, yy):
                h = xx
                for i in range(3):
                    h = h @ ps[2 * i] + ps[2 * i + 1]
                    if i < 2:
                        h = jax.nn.relu(h)
                logp = jax.nn.log_softmax(h, -1)
                return -jnp.mean(jnp.take_along_axis(logp, yy[:, None], 1)), h
            jstep = jax.jit(jax.value_and_grad(loss_fn, has_aux=True))
            jp = [jnp.asarray(p) for p in params]
            jx, jy = jnp.asarray(x), jnp.asarray(y)
            record(wl, "jax", timeit(lambda: jax.block_until_ready(jstep(jp, jx, jy))))

    for n in ([3] if quick else [3, 512]):
        wl = f"seed{n}"
        xs = rng.standard_normal((n, n)).astype(np.float32)
        ys = rng.standard_normal((n, n)).astype(np.float32)
        step = gradir.compile(seed_module(n), threads=threads, cpu=CPU)["main_adjoint"]
        loss, gx, gy = step(xs, ys)
        np.testing.assert_allclose(gx, (np.ones((n, n)) @ ys).T, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(gy, (xs @ np.ones((n, n))).T, rtol=1e-3, atol=1e-3)
        record(wl, "gradir", timeit(lambda: step(xs, ys)))

        def np_seed():
            m = xs.T @ ys.T
            g = np.ones_like(m)
            return m.sum(), (g @ ys).T, (xs @ g).T
        record(wl, "numpy", timeit(np_seed))
        if "torch" in have:
            torch = have["torch"]
            tx = torch.from_numpy(xs).requires_grad_()
            ty = torch.from_numpy(ys).requires_grad_()

            def torch_seed():
                loss = (tx.T @ ty.T).sum()
                return torch.autograd.grad(loss, [tx, ty])
            record(wl, "torch", timeit(torch_seed))
        if "jax" in have:
            jax = have["jax"]
            f = jax.jit(jax.value_and_grad(lambda a, b: (a.T @ b.T).sum(), argnums=(0, 1)))
            ja, jb = jax.numpy.asarray(xs), jax.numpy.asarray(ys)
            record(wl, "jax", timeit(lambda: jax.block_until_ready(f(ja, jb))))

    lenet_rows(rows, record, have, 64, threads)

    for n in ([512] if quick else [512, 1024]):
        wl = f"gemm{n}"
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        mm = gradir.compile(gemm_module(n), threads=threads, cpu=CPU)["main"]
        np.testing.assert_allclose(mm(a, b), a @ b, rtol=1e-3, atol=1e-2)
        flops = 2 * n ** 3
        record(wl, "gradir", timeit(lambda: mm(a, b)), flops)
        if threads > 1:
            mm1 = gradir.compile(gemm_module(n), threads=1, cpu=CPU)["main"]
            record(wl, "t1:gradir", timeit(lambda: mm1(a, b)), flops)
        record(wl, "numpy", timeit(lambda: a @ b), flops)
        if "torch" in have:
            torch = have["torch"]
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            record(wl, "torch", timeit(lambda: ta @ tb), flops)
        if "jax" in have:
            jax = have["jax"]
            f = jax.jit(lambda u, v: u @ v)
            ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
            record(wl, "jax", timeit(lambda: jax.block_until_ready(f(ja, jb))), flops)
        for cpu in (("x86-64-v3",) if CPU == "host" else ()):
            mt = gradir.compile(gemm_module(n), cpu=cpu, threads=threads)["main"]
            np.testing.assert_allclose(mt(a, b), a @ b, rtol=1e-3, atol=1e-2)
            record(wl, f"gradir:{cpu}", timeit(lambda: mt(a, b)), flops)
    return rows


def lenet_rows(rows, record, have, batch, threads):
    """LeNet-5 gradient step: gradir (checked against the interpreter), torch, jax."""
    import numpy as np

    import gradir
    from lenet import lenet_inputs, lenet_module, torch_step, jax_step

    wl = f"lenet{batch}"
    module = lenet_module(batch)
    x, y, params = lenet_inputs(batch)
    step = gradir.compile(module, threads=threads, cpu=CPU)["main_adjoint"]
    got = step(x, y, *params)
    want = gradir.interpret(module, "main_adjoint", x, y, *params)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-5)
    record(wl, "gradir", timeit(lambda: step(x, y, *params)))
    if threads > 1:
        step1 = gradir.compile(module, threads=1, cpu=CPU)["main_adjoint"]
        record(wl, "t1:gradir", timeit(lambda: step1(x, y, *params)))
    if "torch" in have:
        torch = have["torch"]
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        tp = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
        tstep = torch_step(torch)
        for g, w in zip(tstep(tx, ty, tp), want):
            np.testing.assert_allclose(g.detach().numpy(), w, rtol=2e-3, atol=2e-5)
        record(wl, "torch", timeit(lambda: tstep(tx, ty, tp)))
    if "jax" in have:
        jax = have["jax"]
        jstep = jax_step(jax)
        jp = [jax.numpy.asarray(p) for p in params]
        jx, jy = jax.numpy.asarray(x), jax.numpy.asarray(y)
        record(wl, "jax", timeit(lambda: jax.block_until_ready(jstep(jp, jx, jy))))


def child_env(threads: int, isa: str = "host") -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["XLA_FLAGS"] = (f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                        f"intra_op_parallelism_threads={threads}")
    if isa == "avx2":
        env.update(AVX2_ENV)
        env["XLA_FLAGS"] += " --xla_cpu_max_isa=AVX2"
    env["JAX_PLATFORMS"] = "cpu"
    return env


def print_table(rows: list[dict]) -> None:
    order = ["gradir", "numpy", "torch", "jax"]
    single = [r for r in rows if r["impl"] == "t1:gradir"]
    targets = [r for r in rows if ":" in r["impl"] and r["impl"] != "t1:gradir"]
    rows = [r for r in rows if ":" not in r["impl"]]
    keys = sorted({(r["workload"], r["threads"]) for r in rows},
                  key=lambda k: (k[1], ["mlp", "seed", "lenet", "gemm"].index(k[0].rstrip("0123456789")),
                                 int(k[0].lstrip("abcdefghijklmnopqrstuvwxyz"))))
    print(f"{'workload':<10}{'thr':>4}  " + "".join(f"{n + ' ms':>12}" for n in order)
          + "  " + "".join(f"{n + '/gradir':>13}" for n in order[1:]) + "  gradir GFLOP/s")
    for wl, th in keys:
        by = {r["impl"]: r for r in rows if r["workload"] == wl and r["threads"] == th}
        g = by.get("gradir")
        line = f"{wl:<10}{th:>4}  "
        line += "".join(f"{by[n]['ms']:>12.3f}" if n in by else f"{'-':>12}" for n in order)
        line += "  " + "".join(f"{by[n]['ms'] / g['ms']:>13.2f}" if n in by and g else f"{'-':>13}"
                               for n in order[1:])
        if g and g["gflops"]:
            line += f"  {g['gflops']:.1f} (numpy {by['numpy']['gflops']:.1f})"
        print(line)
    if targets:
        print()
        print(f"{'workload':<10}{'thr':>4}  {'cpu':<12}{'ms':>10}{'GFLOP/s':>10}"
              f"{'host ms':>10}{'host GFLOP/s':>14}{'  ms / host ms':>15}")
    for t in targets:
        host = next(r for r in rows if r["workload"] == t["workload"] and
                    r["threads"] == t["threads"] and r["impl"] == "gradir")
        print(f"{t['workload']:<10}{t['threads']:>4}  {t['impl'].split(':')[1]:<12}"
              f"{t['ms']:>10.3f}{t['gflops']:>10.1f}{host['ms']:>10.3f}{host['gflops']:>14.1f}"
              f"{t['ms'] / host['ms']:>15.2f}")
    if single:
        # gradir at threads=N against gradir at threads=1 in the same process,
        # pinned to the same N cores: what the parallel loops gain there.
        print()
        print(f"{'workload':<10}{'thr':>4}  {'gradir ms':>10}{'1-thread ms':>13}"
              f"{'  1-thread / N-thread':>22}")
    for t in single:
        par = next(r for r in rows if r["workload"] == t["workload"] and
                   r["threads"] == t["threads"] and r["impl"] == "gradir")
        print(f"{t['workload']:<10}{t['threads']:>4}  {par['ms']:>10.3f}{t['ms']:>13.3f}"
              f"{t['ms'] / par['ms']:>22.2f}")


WORKLOAD_ORDER = ["mlp", "seed", "lenet", "gemm"]


def _key(k):
    wl, th = k
    return (th, WORKLOAD_ORDER.index(wl.rstrip("0123456789")),
            int(wl.lstrip("abcdefghijklmnopqrstuvwxyz")))


def tables(rows: list[dict]) -> list[dict]:
    """The three tables print_table prints, for bench/_results.py."""
    order = ["gradir", "numpy", "torch", "jax"]
    plain = [r for r in rows if ":" not in r["impl"]]
    out = []
    main_rows = []
    for wl, th in sorted({(r["workload"], r["threads"]) for r in plain}, key=_key):
        by = {r["impl"]: r for r in plain if r["workload"] == wl and r["threads"] == th}
        g = by.get("gradir")
        row = [wl, th] + [by[n]["ms"] if n in by else None for n in order]
        row += [by[n]["ms"] / g["ms"] if n in by and g else None for n in order[1:]]
        row += [g["gflops"] if g else None,
                by["numpy"]["gflops"] if "numpy" in by else None]
        main_rows.append(row)
    out.append({"title": "gradir against numpy, PyTorch eager and JAX jit",
                "columns": ["workload", "threads"] + [f"{n} ms" for n in order]
                + [f"{n}/gradir" for n in order[1:]] + ["gradir GFLOP/s", "numpy GFLOP/s"],
                "formats": [None, None] + [".3f"] * 4 + [".2f"] * 3 + [".1f"] * 2,
                "rows": main_rows})
    targets = [r for r in rows if ":" in r["impl"] and r["impl"] != "t1:gradir"]
    if targets:
        trows = []
        for t in sorted(targets, key=lambda r: _key((r["workload"], r["threads"]))):
            host = next(r for r in rows if r["workload"] == t["workload"] and
                        r["threads"] == t["threads"] and r["impl"] == "gradir")
            trows.append([t["workload"], t["threads"], t["impl"].split(":")[1], t["ms"],
                          t["gflops"], host["ms"], host["gflops"], t["ms"] / host["ms"]])
        out.append({"title": "gradir's GEMM compiled for another CPU against the host's",
                    "columns": ["workload", "threads", "cpu", "ms", "GFLOP/s", "host ms",
                                "host GFLOP/s", "ms / host ms"],
                    "formats": [None, None, None, ".3f", ".1f", ".3f", ".1f", ".2f"],
                    "rows": trows})
    single = [r for r in rows if r["impl"] == "t1:gradir"]
    if single:
        srows = []
        for t in sorted(single, key=lambda r: _key((r["workload"], r["threads"]))):
            par = next(r for r in rows if r["workload"] == t["workload"] and
                       r["threads"] == t["threads"] and r["impl"] == "gradir")
            srows.append([t["workload"], t["threads"], par["ms"], t["ms"], t["ms"] / par["ms"]])
        out.append({"title": "gradir at N threads against gradir compiled with threads=1, "
                             "same process pinned to the same N cores",
                    "columns": ["workload", "threads", "gradir ms", "1-thread ms",
                                "1-thread / N-thread"],
                    "formats": [None, None, ".3f", ".3f", ".2f"],
                    "rows": srows})
    return out


def pin(threads: int) -> None:
    """Pins this process to its first ``threads`` cores: thread-count flags
    alone do not bound every peer's pools (XLA's CPU client among them)."""
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, cores[:threads])


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--quick",),
               valued=("--isa", "--threads", "--child", "--json"),
               choices={"--isa": ("host", "avx2")})
    quick = "--quick" in argv
    if "--child" in argv:
        threads = int(argv[argv.index("--child") + 1])
        pin(threads)
        print("ROWS " + json.dumps(run_workloads(threads, quick)))
        return 0
    isa = argv[argv.index("--isa") + 1] if "--isa" in argv else "host"
    if isa not in ("host", "avx2"):
        print(f"--isa: host or avx2, not {isa!r}", file=sys.stderr)
        return 2
    threads = [1, 2]
    if "--threads" in argv:
        threads = [int(t) for t in argv[argv.index("--threads") + 1].split(",")]
    rows = []
    for th in threads:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(th)]
        if quick:
            cmd.append("--quick")
        proc = subprocess.run(cmd, env=child_env(th, isa), capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr, file=sys.stderr)
            return 1
        for line in proc.stdout.splitlines():
            if line.startswith("ROWS "):
                rows += json.loads(line[5:])
    import platform
    from gradir.conversion.cpu.host import detect_host
    host = detect_host()
    machine = (f"{host.model or platform.machine()}, {os.cpu_count()} cores, vector ISA "
               f"{host.isa} ({host.vector_bits}-bit x {host.vector_registers} registers; "
               f"{', '.join(f for f in host.features if f.startswith(('avx', 'fma')))}); "
               f"L1d {host.l1d // 1024} KiB, L2 {host.l2 // 1024} KiB")
    print(f"# {machine}; python {platform.python_version()}; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    notes = [f"gradir's host detection: {machine}.",
             "Medians of at least 5 runs (more until 0.3 s) after two warm-up calls and "
             f"{SETTLE_S} s of quiet; each thread count in a fresh process pinned to that many "
             "cores; ratios are peer time / gradir time (>1: gradir is faster)."]
    if isa == "avx2":
        avx2 = ("--isa avx2: gradir compiled for x86-64-v3 (AVX2 + FMA, 16 vector registers); "
                "numpy (OpenBLAS Haswell kernels) and torch (MKL, oneDNN) held to AVX2; JAX's "
                "generated code too (--xla_cpu_max_isa), but not its library GEMM kernels "
                "(~245 GFLOP/s at 512^3 on one core, beyond AVX2): its column is not AVX2-only")
        print("# " + avx2)
        notes.append(avx2 + ".")
    if quick:
        notes.append("--quick: batch 64 only for the MLP, seed 3 only, GEMM 512^3 only.")
    print_table(rows)
    path = _results.json_option(argv)
    if path:
        _results.save_results(path, "cpu-avx2" if isa == "avx2" else "cpu", tables(rows), notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

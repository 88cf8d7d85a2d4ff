"""A Transformer encoder layer's gradient step imported from PyTorch:
gradir against PyTorch eager and torch.compile, float32, side by side in
one process per thread count.

    build/venv/bin/python bench/transformer.py                 # threads 1 and 2
    build/venv/bin/python bench/transformer.py --threads 1 [--batch 8] [--seq 128] [--ops] [--no-compile] [--json PATH]

The model (nobody tuned gradir for it): ``nn.TransformerEncoderLayer(256,
4, 1024, dropout=0, batch_first=True, norm_first=True)`` (pre-norm: layer
norm, 4-head self-attention, residual, layer norm, 256-1024-256 relu
feed-forward, residual), the mean over the sequence, ``Linear(256, 10)``
and cross_entropy; batch 8 of 128 tokens of width 256.  gradir runs
``import_module`` (torch.export -> rlx), ``rlx-gradient`` with respect to
every parameter and ``gradir.compile``; its loss and gradients are checked
against torch.autograd (each gradient to 1e-4 of its largest element, the
loss to 1e-4 relative).  torch runs the model and ``torch.autograd.grad``,
eager and through ``torch.compile`` (inductor; ``--no-compile`` leaves it
out).  All time the loss and every parameter gradient (median of the calls
made in 2 s after a warm-up call; wall time, and the process's CPU time,
steadier on a shared machine); "first call" is gradir's import_module,
rlx-gradient, compile (the compile cache off) and first run.  Ratios are
torch time / gradir time (>1: gradir faster).  ``--ops``: also each rlx op
of the gradient program (weight gradients of batched matmuls folded as
rlx-to-linalg folds them) compiled alone (bench/cnn.py's breakdown: the
slowest 15, and the sum per op kind; CPU time), to see where gradir's time goes.
Prints the CPU, its vector ISA and the load average.  ``--json PATH``: the
tables also go to PATH with their provenance (bench/_results.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import cpu  # noqa: E402  bench/cpu.py: child_env, pin
import cnn  # noqa: E402  bench/cnn.py: op_times
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance


def timeit(fn, seconds: float = 2.0) -> tuple[float, float]:
    """Medians of the wall time and of the process's CPU time of ``fn()``
    over ``seconds`` of calls (at least 5) after a warm-up call.  On a
    shared machine a call of tens of milliseconds is often descheduled: the
    CPU time (all the process's threads together) is the steadier number
    at one thread."""
    fn()
    walls, cpus, start = [], [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(walls) < 5:
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


WIDTH, HEADS, FFN, CLASSES = 256, 4, 1024, 10


def build_model(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(WIDTH, HEADS, FFN, dropout=0.0,
                                                    batch_first=True, norm_first=True)
            self.head = nn.Linear(WIDTH, CLASSES)

        def forward(self, x, y):
            h = self.layer(x).mean(1)
            return nn.functional.cross_entropy(self.head(h), y)

    torch.manual_seed(0)
    return Net().train()


def check(got, loss, want) -> None:
    """gradir's loss and gradients against torch.autograd's: the loss to
    1e-4 relative, each gradient to 1e-4 of its largest element."""
    import numpy as np
    np.testing.assert_allclose(got[0], loss.detach().numpy(), rtol=1e-4)
    for g, w in zip(got[1:], want):
        w = w.numpy()
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


def run(threads: int, batch: int, seq: int, ops: bool, compiled: bool) -> dict:
    import torch

    import gradir
    from gradir.frontends.torch import import_module

    torch.set_num_threads(threads)
    model = build_model(torch)
    x = torch.randn(batch, seq, WIDTH)
    y = torch.randint(0, CLASSES, (batch,))
    params = list(model.parameters())
    t0 = time.perf_counter()
    module = import_module(model, (x, y))
    wrt = ",".join(str(i) for i in range(2, 2 + len(params)))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    step = gradir.compile(module, threads=threads, functions=["main_adjoint"])["main_adjoint"]
    args = [x.numpy(), y.numpy()] + [p.detach().numpy().copy() for p in params]
    got = step(*args)
    first = time.perf_counter() - t0
    loss = model(x, y)
    check(got, loss, torch.autograd.grad(loss, params))
    again = step(*args)
    assert all((a == b).all() for a, b in zip(got, again)), "gradir: not bitwise repeatable"

    def eager():
        return torch.autograd.grad(model(x, y), params)

    row = {"threads": threads, "first_s": first}
    row["gradir_ms"], row["gradir_cpu_ms"] = (t * 1e3 for t in timeit(lambda: step(*args)))
    time.sleep(0.2)
    row["eager_ms"], row["eager_cpu_ms"] = (t * 1e3 for t in timeit(eager))
    if compiled:
        fast = torch.compile(model)

        def inductor():
            return torch.autograd.grad(fast(x, y), params)
        inductor()
        time.sleep(0.2)
        row["compile_ms"], row["compile_cpu_ms"] = (t * 1e3 for t in timeit(inductor))
    if ops:
        # The program as rlx-to-linalg sees it: weight gradients of batched
        # matmuls already one 2-D matmul each (conversion/linalg/matmul.py).
        from gradir.conversion.linalg.matmul import fold_batch_sums
        folded = gradir.parse(str(module))
        with folded.context:
            fold_batch_sums(folded.operation)
        saved, cnn.timeit = cnn.timeit, lambda fn, seconds: timeit(fn, seconds)[1]
        try:
            row["ops"] = cnn.op_times(folded, threads)
        finally:
            cnn.timeit = saved
    return row


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--ops", "--no-compile"),
               valued=("--threads", "--batch", "--seq", "--child", "--json"))
    batch = int(argv[argv.index("--batch") + 1]) if "--batch" in argv else 8
    seq = int(argv[argv.index("--seq") + 1]) if "--seq" in argv else 128
    ops, compiled = "--ops" in argv, "--no-compile" not in argv
    if "--child" in argv:
        threads = int(argv[argv.index("--child") + 1])
        cpu.pin(threads)
        print("ROW " + json.dumps(run(threads, batch, seq, ops, compiled)))
        return 0
    threads = [1, 2]
    if "--threads" in argv:
        threads = [int(t) for t in argv[argv.index("--threads") + 1].split(",")]
    rows = []
    for th in threads:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(th), "--batch",
               str(batch), "--seq", str(seq)] + (["--ops"] if ops else []) \
            + ([] if compiled else ["--no-compile"])
        # The compile cache off: "first call" is a compile, not a cache hit.
        env = dict(cpu.child_env(th), GRADIR_CACHE="0")
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr, file=sys.stderr)
            return 1
        rows += [json.loads(ln[4:]) for ln in proc.stdout.splitlines() if ln.startswith("ROW ")]
    import platform
    from gradir.conversion.cpu.host import detect_host
    host = detect_host()
    machine = (f"{host.model or platform.machine()}, {os.cpu_count()} cores, vector ISA "
               f"{host.isa} ({host.vector_bits}-bit x {host.vector_registers} registers); "
               f"L1d {host.l1d // 1024} KiB, L2 {host.l2 // 1024} KiB")
    name = f"encoder{batch}x{seq}"
    print(f"# {machine}; load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'workload':<14}{'thr':>4}{'clock':>6}{'gradir ms':>11}{'eager ms':>10}"
          f"{'compile ms':>12}{'eager/gradir':>14}{'compile/gradir':>16}{'first call s':>14}")
    table = []
    for r in rows:
        for clock, suffix in (("wall", "_ms"), ("cpu", "_cpu_ms")):
            g, e, c = (r.get(k + suffix) for k in ("gradir", "eager", "compile"))
            cells = [name, r["threads"], clock, g, e, c, e / g, c / g if c else None,
                     r["first_s"]]
            table.append(cells)
            print(f"{name:<14}{r['threads']:>4}{clock:>6}{g:>11.2f}{e:>10.2f}"
                  + (f"{c:>12.2f}" if c else f"{'-':>12}") + f"{e / g:>14.2f}"
                  + (f"{c / g:>16.2f}" if c else f"{'-':>16}") + f"{r['first_s']:>14.2f}")
    tables = [{"title": "Transformer encoder layer gradient step imported from PyTorch: gradir "
                        "against PyTorch eager and torch.compile",
               "columns": ["workload", "threads", "clock", "gradir ms", "eager ms",
                           "compile ms", "eager/gradir", "compile/gradir",
                           "gradir first call s"],
               "formats": [None, None, None, ".2f", ".2f", ".2f", ".2f", ".2f", ".2f"],
               "rows": table}]
    for r in rows:
        if "ops" not in r:
            continue
        total = sum(t for t, _, _ in r["ops"])
        print(f"\n# each op alone, {r['threads']} thread(s): {total * 1e3:.2f} ms over "
              f"{len(r['ops'])} ops; per kind:")
        kinds: dict = {}
        for t, op, _ in r["ops"]:
            kinds[op] = kinds.get(op, 0) + t
        top = sorted(kinds.items(), key=lambda kv: -kv[1])[:12]
        for op, t in top:
            print(f"{t * 1e3:9.3f} ms  {op}")
        print("# slowest:")
        slowest = sorted(r["ops"], reverse=True)[:15]
        for t, _, line in slowest:
            print(f"{t * 1e3:9.3f} ms  {line[:170]}")
        tables.append({"title": f"each op of the gradient alone, {r['threads']} thread(s): "
                                f"{total * 1e3:.2f} ms over {len(r['ops'])} ops; per kind",
                       "columns": ["op", "ms"], "formats": [None, ".3f"],
                       "rows": [[op, t * 1e3] for op, t in top]})
        tables.append({"title": f"the slowest ops alone, {r['threads']} thread(s)",
                       "columns": ["ms", "op"], "formats": [".3f", None],
                       "rows": [[t * 1e3, line[:170]] for t, _, line in slowest]})
    path = _results.json_option(argv)
    if path:
        notes = [f"gradir's host detection: {machine}.",
                 "Medians over 2 s of calls after a warm-up call; each thread count in a "
                 "fresh process pinned to that many cores; clock wall: elapsed time, cpu: "
                 "the process's CPU time (all its threads); eager/gradir and "
                 "compile/gradir > 1: gradir is faster. \"first call\": import_module + "
                 "rlx-gradient + compile + first run, the compile cache off. The ops "
                 "alone: CPU time."]
        if (batch, seq) != (8, 128):
            notes.append(f"--batch {batch} --seq {seq} (default 8 and 128).")
        _results.save_results(path, "transformer", tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

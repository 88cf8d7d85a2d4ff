"""A CIFAR-sized ResNet gradient step imported from PyTorch: gradir against
PyTorch eager, float32, side by side in one process per thread count.

    build/venv/bin/python bench/cnn.py                 # threads 1 and 2
    build/venv/bin/python bench/cnn.py --threads 1 [--batch 32] [--ops] [--json PATH]

The model (nobody tuned gradir for it): a 3x3 conv stem (3->32, padding 1)
with BatchNorm (training mode: batch statistics) and relu, a 3x3 max pool
of stride 2 and padding 1 (overlapping windows), a residual basic block of
two 3x3 convs with BatchNorm (32 channels, 16x16), a 3x3 conv of stride 2
(32->64), a second basic block (64 channels, 8x8), global average pooling,
a dense layer and cross_entropy; batch 32 of 3x32x32 images.  gradir runs
``import_module`` (torch.export -> rlx), ``rlx-gradient`` with respect to
every parameter and ``gradir.compile`` (checked against torch.autograd);
torch runs the model and ``torch.autograd.grad``.  Both time the loss and
every parameter gradient (median); "first call" is gradir's import_module,
rlx-gradient, compile (the compile cache off) and first run.  The ratio is
torch time / gradir time (>1: gradir faster).  ``--ops``: also each rlx op
of the gradient program compiled alone (the slowest 15, with the sum per op
kind), to see where gradir's time goes.  Prints the CPU, its vector ISA and the load average.
``--json PATH``: the tables also go to PATH with their provenance
(bench/_results.py).
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
import cpu  # noqa: E402  bench/cpu.py: child_env, the header
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance


def build_model(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b1 = nn.BatchNorm2d(c)
            self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b2 = nn.BatchNorm2d(c)

        def forward(self, x):
            return torch.relu(x + self.b2(self.c2(torch.relu(self.b1(self.c1(x))))))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 32, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(32)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.block1 = Block(32)
            self.down = nn.Conv2d(32, 64, 3, stride=2, padding=1)
            self.block2 = Block(64)
            self.fc = nn.Linear(64, 10)

        def forward(self, x, y):
            h = self.pool(torch.relu(self.bn(self.stem(x))))
            h = self.block2(torch.relu(self.down(self.block1(h))))
            h = torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)
            return torch.nn.functional.cross_entropy(self.fc(h), y)

    torch.manual_seed(0)
    return Net().train()


def timeit(fn, seconds=2.0):
    fn()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(threads: int, batch: int, ops: bool) -> dict:
    import numpy as np
    import torch

    import gradir
    from gradir.frontends.torch import import_module

    torch.set_num_threads(threads)
    model = build_model(torch)
    x = torch.randn(batch, 3, 32, 32)
    y = torch.randint(0, 10, (batch,))
    params = list(model.parameters())
    t0 = time.perf_counter()
    module = import_module(model, (x, y))
    wrt = ",".join(str(i) for i in range(2, 2 + len(params)))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    step = gradir.compile(module, threads=threads)["main_adjoint"]
    args = [x.numpy(), y.numpy()] + [p.detach().numpy().copy() for p in params]
    got = step(*args)
    first = time.perf_counter() - t0
    want = torch.autograd.grad(model(x, y), params)
    for g, w in zip(got[1:], want):
        np.testing.assert_allclose(g, w.numpy(), rtol=2e-3, atol=2e-4)
    row = {"threads": threads, "gradir_ms": timeit(lambda: step(*args)) * 1e3,
           "first_s": first}
    time.sleep(0.2)
    row["torch_ms"] = timeit(lambda: torch.autograd.grad(model(x, y), params)) * 1e3
    if ops:
        row["ops"] = op_times(module, threads)
    return row


def op_times(module, threads: int) -> list:
    """(seconds, op name, first line) of each rlx op of @main_adjoint
    compiled alone on random operands (min of runs; identical ops once)."""
    import numpy as np
    from mlir import ir

    import gradir

    dtypes = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32,
              "i1": np.bool_}
    rng = np.random.default_rng(0)
    seen, rows = {}, []
    with module.context:
        for f in module.body.operations:
            if ir.StringAttr(f.attributes["sym_name"]).value != "main_adjoint":
                continue
            for op in f.regions[0].blocks[0].operations:
                name = op.operation.name
                types = [str(v.type) for v in list(op.operands) + list(op.results)]
                if not name.startswith("rlx.") or name == "rlx.constant" or \
                        any("tuple" in t for t in types):
                    continue
                attrs = op.operation.attributes
                text = ", ".join(f"{k} = {attrs[k]}" for k in attrs)
                ins = [str(v.type) for v in op.operands]
                outs = [str(r.type) for r in op.results]
                line = (f'"{name}"({", ".join(f"%a{i}" for i in range(len(ins)))}) '
                        f'{{{text}}} : ({", ".join(ins)}) -> ({", ".join(outs)})')
                if line not in seen:
                    src = (f"func.func @f({', '.join(f'%a{i}: {t}' for i, t in enumerate(ins))})"
                           f" -> ({', '.join(outs)}) {{\n  %r:{len(outs)} = {line}\n  return "
                           f"{', '.join(f'%r#{i}' for i in range(len(outs)))} : "
                           f"{', '.join(outs)}\n}}")
                    fn = gradir.compile(gradir.parse(src), threads=threads)["f"]
                    vals = []
                    for t in ins:
                        *shape, elt = t[len("tensor<"):-1].split("x")
                        dt = dtypes[elt]
                        shape = [int(s) for s in shape]
                        vals.append(rng.integers(0, 4, shape).astype(dt) if dt in (np.int64, np.int32)
                                    else (rng.random(shape) > 0.5) if dt is np.bool_
                                    else rng.standard_normal(shape).astype(dt))
                    seen[line] = timeit(lambda: fn(*vals), 0.2)
                rows.append((seen[line], name, line))
    return rows


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--ops",),
               valued=("--threads", "--batch", "--child", "--json"))
    batch = int(argv[argv.index("--batch") + 1]) if "--batch" in argv else 32
    ops = "--ops" in argv
    if "--child" in argv:
        threads = int(argv[argv.index("--child") + 1])
        cpu.pin(threads)
        print("ROW " + json.dumps(run(threads, batch, ops)))
        return 0
    threads = [1, 2]
    if "--threads" in argv:
        threads = [int(t) for t in argv[argv.index("--threads") + 1].split(",")]
    rows = []
    for th in threads:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(th),
               "--batch", str(batch)] + (["--ops"] if ops else [])
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
    print(f"# {machine}; load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'workload':<18}{'thr':>4}{'gradir ms':>12}{'torch ms':>12}{'torch/gradir':>14}"
          f"{'gradir first call s':>22}")
    for r in rows:
        print(f"{'resnet-cifar' + str(batch):<18}{r['threads']:>4}{r['gradir_ms']:>12.2f}"
              f"{r['torch_ms']:>12.2f}{r['torch_ms'] / r['gradir_ms']:>14.2f}"
              f"{r['first_s']:>22.2f}")
    tables = [{"title": "ResNet gradient step imported from PyTorch: gradir against PyTorch eager",
               "columns": ["workload", "threads", "gradir ms", "torch ms", "torch/gradir",
                           "gradir first call s"],
               "formats": [None, None, ".2f", ".2f", ".2f", ".2f"],
               "rows": [[f"resnet-cifar{batch}", r["threads"], r["gradir_ms"], r["torch_ms"],
                         r["torch_ms"] / r["gradir_ms"], r["first_s"]] for r in rows]}]
    for r in rows:
        if "ops" not in r:
            continue
        total = sum(t for t, _, _ in r["ops"])
        print(f"\n# each op alone, {r['threads']} thread(s): {total * 1e3:.2f} ms over "
              f"{len(r['ops'])} ops; per kind:")
        kinds: dict = {}
        for t, name, _ in r["ops"]:
            kinds[name] = kinds.get(name, 0) + t
        top = sorted(kinds.items(), key=lambda kv: -kv[1])[:10]
        for name, t in top:
            print(f"{t * 1e3:9.3f} ms  {name}")
        print("# slowest:")
        slowest = sorted(r["ops"], reverse=True)[:15]
        for t, _, line in slowest:
            print(f"{t * 1e3:9.3f} ms  {line[:160]}")
        tables.append({"title": f"each op of the gradient alone, {r['threads']} thread(s): "
                                f"{total * 1e3:.2f} ms over {len(r['ops'])} ops; per kind",
                       "columns": ["op", "ms"], "formats": [None, ".3f"],
                       "rows": [[name, t * 1e3] for name, t in top]})
        tables.append({"title": f"the slowest ops alone, {r['threads']} thread(s)",
                       "columns": ["ms", "op"], "formats": [".3f", None],
                       "rows": [[t * 1e3, line[:160]] for t, _, line in slowest]})
    path = _results.json_option(argv)
    if path:
        notes = [f"gradir's host detection: {machine}.",
                 "Medians over 2 s of calls after a warm-up call; each thread count in a "
                 "fresh process pinned to that many cores; torch/gradir > 1: gradir is "
                 "faster. \"first call\": import_module + rlx-gradient + compile + first run, "
                 "the compile cache off."]
        if batch != 32:
            notes.append(f"--batch {batch} (default 32).")
        _results.save_results(path, "cnn", tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Attention of long sequences: gradir with and without rlx-fuse-attention
against PyTorch's F.scaled_dot_product_attention (eager), float32, forward
and gradient, time and peak memory, side by side.

    build/venv/bin/python bench/attention.py                # seq 128, 1024, 4096; batch 1, 8 heads
    build/venv/bin/python bench/attention.py [--seqs 128,1024,4096] [--batch 1] [--heads 8] [--threads 1] [--cache-bytes 524288] [--quick] [--json PATH]

The program is what the PyTorch importer writes for
``F.scaled_dot_product_attention(q, k, v)``: q, k, v of batch x heads x seq
x 64, ``matmul(q, permute_dims(k))``, the scale 1/8, ``softmax`` over the
keys, ``matmul`` with v.  "unfused" compiles it as it is, "fused" after
``rlx-fuse-attention{cache-bytes=...}`` (the block rows it chose are
printed; "-": the scores fit, nothing changed).  The gradient is
``rlx-gradient{mode=vjp wrt=0,1,2}``: ``@main_vjp(q, k, v, dO) -> (O, dq,
dk, dv)``, against ``torch.autograd.grad(sdpa(q, k, v), (q, k, v), dO)``
(PyTorch's forward and backward).  Each result is checked against PyTorch's (1e-4 of the
largest element) and against a second call (bitwise).

Times are medians of the wall time over 2 s of calls (at least 3) after a
warm-up call, in one child process per sequence length pinned to
``--threads`` cores (torch.set_num_threads too).  Peak memory is the
growth of ru_maxrss over one call, each in a fresh process: gradir's
exported library loaded with numpy and ctypes only (no MLIR in the
process), PyTorch with its inputs made and after a call on 8 tokens;
inputs excluded, outputs included.
Ratios are the other time / gradir fused (>1: fused is faster).  Prints
the CPU, its vector ISA and the load average.  ``--quick``: seq 128 and 512,
2 heads, one warm-up and 2 timed calls (a smoke run).  ``--json PATH``:
the tables also go to PATH with their provenance (bench/_results.py).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import cpu  # noqa: E402  bench/cpu.py: child_env, pin
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance

HEAD_DIM = 64
VARIANTS = ("unfused", "fused")


def program(b: int, h: int, s: int, d: int = HEAD_DIM) -> str:
    """``@main(q, k, v) -> o``: the importer's scaled_dot_product_attention."""
    T, KT = f"tensor<{b}x{h}x{s}x{d}xf32>", f"tensor<{b}x{h}x{d}x{s}xf32>"
    S = f"tensor<{b}x{h}x{s}x{s}xf32>"
    return f"""func.func @main(%q: {T}, %k: {T}, %v: {T}) -> {T} {{
  %kt = "rlx.permute_dims"(%k) {{axes = array<i64: 0, 1, 3, 2>}} : ({T}) -> {KT}
  %s = "rlx.matmul"(%q, %kt) : ({T}, {KT}) -> {S}
  %c = arith.constant dense<{1 / d ** 0.5}> : tensor<f32>
  %a = "rlx.multiply"(%s, %c) : ({S}, tensor<f32>) -> {S}
  %p = "rlx.softmax"(%a) {{axis = array<i64: -1>}} : ({S}) -> {S}
  %o = "rlx.matmul"(%p, %v) : ({S}, {T}) -> {T}
  return %o : {T}
}}"""


def inputs(b: int, h: int, s: int):
    import numpy as np
    rng = np.random.default_rng(0)
    return [rng.standard_normal((b, h, s, HEAD_DIM)).astype(np.float32) for _ in range(4)]


def timeit(fn, seconds: float, min_calls: int) -> float:
    """Median wall time of ``fn()`` over ``seconds`` of calls (at least
    ``min_calls``) after a warm-up call."""
    fn()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < min_calls:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def block_rows(text: str) -> int | None:
    """The step of the fused program's scf.for (None: not fused)."""
    import re
    m = re.search(r"scf\.for %\S+ = %\S+ to %\S+ step %(\S+)", text)
    if not m:
        return None
    c = re.search(rf"%{re.escape(m.group(1))} = arith\.constant (\d+) : index", text)
    return int(c.group(1)) if c else None


def _close(got, want) -> bool:
    import numpy as np
    return bool(np.abs(got - want).max() <= 1e-4 * max(1.0, float(np.abs(want).max())))


def child(b: int, h: int, s: int, threads: int, cache_bytes: int, libdir: str,
          seconds: float, min_calls: int) -> dict:
    """Compiles, checks and times both gradir variants and PyTorch for one
    sequence length; exports gradir's libraries to ``libdir``."""
    import torch

    import gradir
    from gradir.ir import print_module

    torch.set_num_threads(threads)
    q, k, v, g = inputs(b, h, s)
    tq, tk, tv, tg = (torch.from_numpy(a) for a in (q, k, v, g))
    F = torch.nn.functional
    with torch.no_grad():
        want_o = F.scaled_dot_product_attention(tq, tk, tv)
    tqr, tkr, tvr = (t.clone().requires_grad_() for t in (tq, tk, tv))
    want_g = torch.autograd.grad(F.scaled_dot_product_attention(tqr, tkr, tvr),
                                 (tqr, tkr, tvr), tg)
    row = {"seq": s, "batch": b, "heads": h, "threads": threads, "checks": []}
    for variant in VARIANTS:
        module = gradir.parse(program(b, h, s))
        if variant == "fused":
            gradir.run_pipeline(module, f"builtin.module(rlx-fuse-attention"
                                        f"{{cache-bytes={cache_bytes}}})")
            row["block_rows"] = block_rows(print_module(module))
        gradir.run_pipeline(module, "builtin.module(rlx-gradient{mode=vjp wrt=0,1,2})")
        t0 = time.perf_counter()
        exe = gradir.compile(module, target="cpu", threads=threads)
        row[f"{variant}_compile_s"] = time.perf_counter() - t0
        fwd, vjp = exe["main"], exe["main_vjp"]
        o = fwd(q, k, v)
        grads = vjp(q, k, v, g)
        ok = _close(o, want_o.numpy()) and _close(grads[0], want_o.numpy()) and all(
            _close(a, w.numpy()) for a, w in zip(grads[1:], want_g))
        same = (fwd(q, k, v) == o).all() and all(
            (a == b).all() for a, b in zip(vjp(q, k, v, g), grads))
        verdict = "OK" if ok and same else "NOT REPEATABLE" if ok else "DIFFERS"
        row["checks"].append(f"{variant} {verdict}")
        row[f"{variant}_fwd_ms"] = 1e3 * timeit(lambda: fwd(q, k, v), seconds, min_calls)
        row[f"{variant}_grad_ms"] = 1e3 * timeit(lambda: vjp(q, k, v, g), seconds,
                                                 min_calls)
        exe.export_library(os.path.join(libdir, f"{variant}.so"))

    def torch_fwd():
        with torch.no_grad():
            return F.scaled_dot_product_attention(tq, tk, tv)

    def torch_grad():
        return torch.autograd.grad(F.scaled_dot_product_attention(tqr, tkr, tvr),
                                   (tqr, tkr, tvr), tg)
    row["torch_fwd_ms"] = 1e3 * timeit(torch_fwd, seconds, min_calls)
    row["torch_grad_ms"] = 1e3 * timeit(torch_grad, seconds, min_calls)
    return row


def memory_child(what: str, b: int, h: int, s: int, threads: int) -> float:
    """MiB of ru_maxrss growth over one call of ``what``: "torch-fwd",
    "torch-grad" (after a call on 8 tokens: the autograd engine's own
    start-up is not attention's), or "LIBRARY:fn" (an exported gradir
    library)."""
    q, k, v, g = inputs(b, h, s)
    if what.startswith("torch-"):
        import torch
        torch.set_num_threads(threads)
        F = torch.nn.functional

        def torch_call(arrays):
            tq, tk, tv, tg = (torch.from_numpy(a) for a in arrays)
            if what == "torch-fwd":
                with torch.no_grad():
                    return F.scaled_dot_product_attention(tq, tk, tv)
            tq, tk, tv = (t.requires_grad_() for t in (tq, tk, tv))
            return torch.autograd.grad(F.scaled_dot_product_attention(tq, tk, tv),
                                       (tq, tk, tv), tg)
        torch_call(inputs(b, h, 8))

        def call():
            return torch_call((q, k, v, g))
    else:
        from gradir.runtime import load
        path, fn = what.rsplit(":", 1)
        f = load(path)[fn]
        args = [q, k, v] + ([g] if fn == "main_vjp" else [])

        def call():
            return f(*args)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = call()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del out
    return (after - before) / 1024


def _run(args: list[str], threads: int) -> str | None:
    cmd = [sys.executable, os.path.abspath(__file__)] + args
    env = dict(cpu.child_env(threads), GRADIR_CACHE="0")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stdout, proc.stderr, file=sys.stderr)
        return None
    return proc.stdout


def measure(s: int, b: int, h: int, threads: int, cache_bytes: int, quick: bool) -> dict | None:
    libdir = tempfile.mkdtemp(prefix="gradir-attention-")
    try:
        out = _run(["--child", str(s), "--batch", str(b), "--heads", str(h), "--threads",
                    str(threads), "--cache-bytes", str(cache_bytes), "--libdir", libdir]
                   + (["--quick"] if quick else []), threads)
        if out is None:
            return None
        row = next(json.loads(ln[4:]) for ln in out.splitlines() if ln.startswith("ROW "))
        jobs = [(f"{v}_{kind}_mib", os.path.join(libdir, f"{v}.so") + ":" + fn)
                for v in VARIANTS for kind, fn in (("fwd", "main"), ("grad", "main_vjp"))]
        jobs += [("torch_fwd_mib", "torch-fwd"), ("torch_grad_mib", "torch-grad")]
        for key, what in jobs:
            out = _run(["--memory", what, "--batch", str(b), "--heads", str(h), "--seq",
                        str(s), "--threads", str(threads)], threads)
            if out is None:
                return None
            row[key] = float(next(ln[4:] for ln in out.splitlines() if ln.startswith("MEM ")))
        return row
    finally:
        shutil.rmtree(libdir, ignore_errors=True)


TIME_COLUMNS = ["seq", "batch", "heads", "threads", "block rows", "fwd unfused ms",
                "fwd fused ms", "fwd torch ms", "grad unfused ms", "grad fused ms",
                "grad torch ms", "fwd unfused/fused", "fwd torch/fused", "grad unfused/fused",
                "grad torch/fused"]
MEMORY_COLUMNS = ["seq", "batch", "heads", "fwd unfused MiB", "fwd fused MiB", "fwd torch MiB",
                  "grad unfused MiB", "grad fused MiB", "grad torch MiB"]


def tables(rows: list[dict]) -> list[dict]:
    times, memory = [], []
    for r in rows:
        times.append([r["seq"], r["batch"], r["heads"], r["threads"], r.get("block_rows")]
                     + [r[f"{v}_{k}_ms"] for k in ("fwd", "grad")
                        for v in ("unfused", "fused", "torch")]
                     + [r[f"{v}_{k}_ms"] / r[f"fused_{k}_ms"] for k in ("fwd", "grad")
                        for v in ("unfused", "torch")])
        memory.append([r["seq"], r["batch"], r["heads"]]
                      + [r[f"{v}_{k}_mib"] for k in ("fwd", "grad")
                         for v in ("unfused", "fused", "torch")])
    return [{"title": "Attention (scaled_dot_product_attention's ops, head dim 64, float32): "
                      "gradir without and with rlx-fuse-attention against PyTorch eager, "
                      "forward and gradient (vjp wrt q, k, v), median ms",
             "columns": TIME_COLUMNS, "rows": times,
             "formats": [None] * 5 + [".1f"] * 6 + [".2f"] * 4},
            {"title": "Peak memory of one call (ru_maxrss growth in a fresh process, MiB)",
             "columns": MEMORY_COLUMNS, "rows": memory,
             "formats": [None] * 3 + [".0f"] * 6}]


def print_tables(rows: list[dict]) -> None:
    for table in tables(rows):
        print(f"\n# {table['title']}")
        print(" ".join(table["columns"]))
        for cells in table["rows"]:
            print(" ".join("-" if c is None else f"{c:.2f}" if isinstance(c, float) else str(c)
                           for c in cells))
    for r in rows:
        print(f"seq {r['seq']}: {', '.join(r['checks'])}; compile unfused "
              f"{r['unfused_compile_s']:.1f} s, fused {r['fused_compile_s']:.1f} s")


def _value(argv, name, default):
    return argv[argv.index(name) + 1] if name in argv else default


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--quick",),
               valued=("--seqs", "--batch", "--heads", "--threads", "--cache-bytes", "--json",
                       "--child", "--memory", "--seq", "--libdir"))
    quick = "--quick" in argv
    b = int(_value(argv, "--batch", 1))
    h = int(_value(argv, "--heads", 2 if quick else 8))
    threads = int(_value(argv, "--threads", 1))
    cache_bytes = int(_value(argv, "--cache-bytes", 524288))
    if "--child" in argv:
        cpu.pin(threads)
        s = int(_value(argv, "--child", 0))
        row = child(b, h, s, threads, cache_bytes, _value(argv, "--libdir", "."),
                    0.0 if quick else 2.0, 2 if quick else 3)
        print("ROW " + json.dumps(row))
        return 0
    if "--memory" in argv:
        cpu.pin(threads)
        s = int(_value(argv, "--seq", 0))
        print(f"MEM {memory_child(_value(argv, '--memory', ''), b, h, s, threads)}")
        return 0
    seqs = [int(x) for x in _value(argv, "--seqs", "128,512" if quick else "128,1024,4096")
            .split(",")]
    from _steps import machine
    print(f"# {machine()}; load average {os.getloadavg()[0]:.1f} at the start")
    rows = []
    for s in seqs:
        row = measure(s, b, h, threads, cache_bytes, quick)
        if row is None:
            return 1
        rows.append(row)
    print_tables(rows)
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")
    failed = [c for r in rows for c in r["checks"] if not c.endswith("OK")]
    path = _results.json_option(argv)
    if path:
        notes = [f"cache-bytes={cache_bytes}; gradir libraries and PyTorch each in one process "
                 f"pinned to {threads} core(s)."]
        if quick:
            notes.append("--quick: one warm-up and 2 timed calls.")
        _results.save_results(path, "attention", tables(rows), notes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

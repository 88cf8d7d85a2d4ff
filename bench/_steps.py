"""What bench/cnn.py and bench/transformer.py share: a model's gradient
step timed for gradir, PyTorch eager and torch.compile (inductor) side by
side in one child process per thread count, the table of the three, and
the per-op breakdown's tables."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time

import cpu  # bench/cpu.py: child_env


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


def time_step(row: dict, step, args, model, inputs, params, compiled: bool) -> None:
    """Times gradir's ``step(*args)``, eager ``torch.autograd.grad`` of
    ``model(*inputs)`` and, when ``compiled``, the same through
    ``torch.compile(model)``, into ``row`` (``gradir_ms``/``gradir_cpu_ms``,
    ``eager_...``, ``compile_...``).  gradir's step is first checked to be
    bitwise repeatable (the threaded code's promise)."""
    import torch
    got, again = step(*args), step(*args)
    assert all((a == b).all() for a, b in zip(got, again)), "gradir: not bitwise repeatable"

    def eager():
        return torch.autograd.grad(model(*inputs), params)

    row["gradir_ms"], row["gradir_cpu_ms"] = (t * 1e3 for t in timeit(lambda: step(*args)))
    time.sleep(0.2)
    row["eager_ms"], row["eager_cpu_ms"] = (t * 1e3 for t in timeit(eager))
    if compiled:
        fast = torch.compile(model)

        def inductor():
            return torch.autograd.grad(fast(*inputs), params)
        inductor()
        time.sleep(0.2)
        row["compile_ms"], row["compile_cpu_ms"] = (t * 1e3 for t in timeit(inductor))


def run_children(script: str, threads: list[int], args: list[str]) -> list[dict] | None:
    """Runs ``script --child T args`` for each thread count (pinned to T
    cores by the child, the compile cache off so that "first call" is a
    compile) and returns the rows its ``ROW`` lines print; None (after
    printing the child's output) when one fails."""
    rows = []
    for th in threads:
        cmd = [sys.executable, os.path.abspath(script), "--child", str(th)] + args
        env = dict(cpu.child_env(th), GRADIR_CACHE="0")
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr, file=sys.stderr)
            return None
        rows += [json.loads(ln[4:]) for ln in proc.stdout.splitlines() if ln.startswith("ROW ")]
    return rows


def machine() -> str:
    from gradir.conversion.cpu.host import detect_host
    host = detect_host()
    return (f"{host.model or platform.machine()}, {os.cpu_count()} cores, vector ISA "
            f"{host.isa} ({host.vector_bits}-bit x {host.vector_registers} registers); "
            f"L1d {host.l1d // 1024} KiB, L2 {host.l2 // 1024} KiB")


STEP_COLUMNS = ["workload", "threads", "clock", "gradir ms", "eager ms", "compile ms",
                "eager/gradir", "compile/gradir", "gradir first call s"]
STEP_FORMATS = [None, None, None, ".2f", ".2f", ".2f", ".2f", ".2f", ".2f"]
STEP_NOTE = ("Medians over 2 s of calls after a warm-up call; each thread count in a fresh "
             "process pinned to that many cores; clock wall: elapsed time, cpu: the "
             "process's CPU time (all its threads); eager/gradir and compile/gradir > 1: "
             "gradir is faster. \"first call\": import_module + rlx-gradient + compile + "
             "first run, the compile cache off. The ops alone: CPU time.")


def step_tables(name: str, title: str, rows: list[dict]) -> list[dict]:
    """Prints the step table (one line per thread count and clock) and the
    per-op breakdown of the rows that have one; returns them as --json
    tables."""
    print(f"# {machine()}; load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'workload':<16}{'thr':>4}{'clock':>6}{'gradir ms':>11}{'eager ms':>10}"
          f"{'compile ms':>12}{'eager/gradir':>14}{'compile/gradir':>16}{'first call s':>14}")
    table = []
    for r in rows:
        for clock, suffix in (("wall", "_ms"), ("cpu", "_cpu_ms")):
            g, e, c = (r.get(k + suffix) for k in ("gradir", "eager", "compile"))
            table.append([name, r["threads"], clock, g, e, c, e / g, c / g if c else None,
                          r["first_s"]])
            print(f"{name:<16}{r['threads']:>4}{clock:>6}{g:>11.2f}{e:>10.2f}"
                  + (f"{c:>12.2f}" if c else f"{'-':>12}") + f"{e / g:>14.2f}"
                  + (f"{c / g:>16.2f}" if c else f"{'-':>16}") + f"{r['first_s']:>14.2f}")
    tables = [{"title": title, "columns": STEP_COLUMNS, "formats": STEP_FORMATS,
               "rows": table}]
    for r in rows:
        if "ops" in r:
            tables += ops_tables(r["ops"], r["threads"])
    return tables


def ops_tables(ops: list, threads: int) -> list[dict]:
    """Prints and returns the per-op breakdown: the sum per op kind and the
    slowest ops (``ops``: (seconds, op name, op line) of each op alone)."""
    total = sum(t for t, _, _ in ops)
    print(f"\n# each op alone, {threads} thread(s): {total * 1e3:.2f} ms over "
          f"{len(ops)} ops; per kind:")
    kinds: dict = {}
    for t, op, _ in ops:
        kinds[op] = kinds.get(op, 0) + t
    top = sorted(kinds.items(), key=lambda kv: -kv[1])[:12]
    for op, t in top:
        print(f"{t * 1e3:9.3f} ms  {op}")
    print("# slowest:")
    slowest = sorted(ops, reverse=True)[:15]
    for t, _, line in slowest:
        print(f"{t * 1e3:9.3f} ms  {line[:170]}")
    return [{"title": f"each op of the gradient alone, {threads} thread(s): "
                      f"{total * 1e3:.2f} ms over {len(ops)} ops; per kind",
             "columns": ["op", "ms"], "formats": [None, ".3f"],
             "rows": [[op, t * 1e3] for op, t in top]},
            {"title": f"the slowest ops alone, {threads} thread(s)",
             "columns": ["ms", "op"], "formats": [".3f", None],
             "rows": [[t * 1e3, line[:170]] for t, _, line in slowest]}]

"""GradBench's 12 evals, gradir against JAX and PyTorch, side by side, one thread.

    build/venv/bin/python bench/gradbench.py                 # every eval and size
    build/venv/bin/python bench/gradbench.py --quick         # the smallest size of each
    build/venv/bin/python bench/gradbench.py --evals lse,det,particle
    build/venv/bin/python bench/gradbench.py --torch-loops   # PyTorch BA/HT as GradBench's
    build/venv/bin/python bench/gradbench.py --torch-eager   # + PyTorch particle/saddle
    build/venv/bin/python bench/gradbench.py --json bench/results/gradbench.json

Evals, in GradBench's order: hello lse llsq gmm det lstm ode kmeans ba ht
particle saddle. gradir runs each function through ``gradir-gradbench``'s
eval modules (``gradir.tools.gradbench.evals.<eval>.prepare``: what the
GradBench tool runs). The peers and the inputs are in bench/gradbench_peers/,
one module per eval (its docstring says how each peer is written):

- as GradBench's tools/jax and tools/pytorch write them where those have
  the eval (JAX: gmm hello kmeans llsq lse ode; PyTorch: ba gmm hello ht
  kmeans lse lstm), except ba and ht, vectorized by default (vmap of one
  observation's Jacobian; jacfwd w.r.t. theta and a shared us offset);
  ``--torch-loops`` runs GradBench's PyTorch ba and ht instead (a Python
  loop of backward passes, minutes at ba1's size; the first size only);
- written the natural way in the framework where the tool lacks the eval:
  JAX det (the sum over all ell! permutations, GradBench's non-recursive
  formulation), lstm (lax.scan), ba, ht, particle and saddle
  (lax.while_loop under jit, forward outer derivatives only: rr and rf
  are "-", JAX cannot reverse-differentiate lax.while_loop); PyTorch det,
  llsq, ode (Python loops of tensor ops, backward()); PyTorch particle
  and saddle only with ``--torch-eager`` (nested torch.func over Python
  loops, tens of seconds per call), else "-".

Inputs as GradBench's evals generate them, at a few of their sizes from
small to large (each peer's call well under 10 s); ``--quick``: the
smallest of each. Everything in float64, one thread (GradBench's tools run
single-threaded by default): the measuring process is pinned to one core.
Each peer's output is compared with gradir's by GradBench's measure,
|x - y| / max(|x| + |y|, 1) ("max diff"; GradBench accepts up to 1e-4).
Timings: median of the runs (at least 3, more until 0.5 s; a single run
where one takes over 2 s) after a warm-up call, excluding the input
conversion and compilation (GradBench's "evaluate" timing). Ratios are
peer time / gradir time (>1: gradir is faster); "-" where a peer was not
run (a peer that fails prints why and shows "-").
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
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance
import gradbench_peers  # noqa: E402  bench/gradbench_peers/: the JAX and PyTorch peers, inputs

EVALS = gradbench_peers.EVALS
PEERS = ("jax", "torch")


def timeit(fn, min_time=0.5, slow=2.0):
    """Median seconds of ``fn()`` after one warm-up call (which also gives
    the output): at least 3 runs, more until ``min_time``; one run when the
    warm-up took over ``slow`` seconds."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    if first > slow:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0, out
    runs, start = [], time.perf_counter()
    while len(runs) < 3 or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs), out


def difference(a, b):
    """GradBench's comparison, the largest over every number of two outputs."""
    import numpy as np
    if isinstance(a, dict):
        return max(difference(a[k], b[k]) for k in a)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float((np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), 1.0)).max(initial=0.0))


# --- the measurements ------------------------------------------------------

def workloads(names, quick):
    """(eval, function, size label, input, whether it is the eval's first size) in order."""
    return [(ev,) + w for ev in EVALS if ev in names
            for w in gradbench_peers.load(ev).workloads(quick)]


def peer_maker(mod, peer, first, loops, eager):
    """The function building ``peer``'s closure in eval module ``mod``, or None."""
    make = getattr(mod, f"{peer}_peer", None)
    if loops and hasattr(mod, f"{peer}_loop"):
        make = getattr(mod, f"{peer}_loop") if first else None
    if eager and hasattr(mod, f"{peer}_eager"):
        make = getattr(mod, f"{peer}_eager")
    return make


def run_child(names, quick, loops, eager, start=0, skip_gradir=-1):
    """Measures the workloads from the ``start``-th on in this process (pinned
    to one core); prints rows. gradir is not run for the ``skip_gradir``-th
    (the one that killed the previous process: its row gets only the peers).
    ``loops``: PyTorch as GradBench's tools/pytorch writes BA and HT (Python
    loops of backward passes, minutes at the larger sizes: the first size only)."""
    import importlib

    from gradir.tools.gradbench.protocol import jsonable
    rows = []
    for i, (ev, fn, size, inp, first) in enumerate(workloads(names, quick)):
        if i < start:
            continue
        row, ref = {"eval": ev, "function": fn, "size": size, "gradir": None}, None
        if i != skip_gradir:
            mod = importlib.import_module(f"gradir.tools.gradbench.evals.{ev}")
            seconds, out = timeit(mod.prepare(fn, inp))
            ref, row["gradir"] = jsonable(out), seconds * 1e3
        for peer in PEERS:
            row[peer], row[peer + " diff"] = None, None
            make = peer_maker(gradbench_peers.load(ev), peer, first, loops, eager)
            try:
                run = make(fn, inp) if make is not None else None
                if run is None:
                    continue
                seconds, got = timeit(run)
            except NotImplementedError:
                continue
            except Exception as e:  # noqa: BLE001  a failing peer is a "-" and a line
                print(f"# {ev} {fn} {size}: {peer} failed: {type(e).__name__}: {e}"[:400],
                      flush=True)
                continue
            row[peer] = seconds * 1e3
            if ref is not None:
                row[peer + " diff"] = difference(ref, jsonable(got))
        rows.append(row)
        print("ROW " + json.dumps(row), flush=True)
    return rows


def print_row(r):
    def ms(v):
        return f"{v:>12.3f}" if v is not None else f"{'-':>12}"

    def ratio(v):
        return f"{v / r['gradir']:>13.2f}" if None not in (v, r["gradir"]) else f"{'-':>13}"
    diffs = [r[p + " diff"] for p in PEERS if r[p + " diff"] is not None]
    print(f"{r['eval']:<9}{r['function']:<10}{r['size']:<24}{ms(r['gradir'])}"
          + "".join(ms(r[p]) for p in PEERS) + "".join(ratio(r[p]) for p in PEERS)
          + (f"{max(diffs):>11.1e}" if diffs else f"{'-':>11}"))


def header():
    print(f"{'eval':<9}{'function':<10}{'size':<24}{'gradir ms':>12}"
          + "".join(f"{p + ' ms':>12}" for p in PEERS)
          + "".join(f"{p + '/gradir':>13}" for p in PEERS) + f"{'max diff':>11}")


def table(rows):
    return {"title": "GradBench evals: gradir against JAX and PyTorch, one thread, float64",
            "columns": ["eval", "function", "size", "gradir ms"]
            + [f"{p} ms" for p in PEERS] + [f"{p}/gradir" for p in PEERS]
            + ["max difference"],
            "formats": [None, None, None, ".3f", ".3f", ".3f", ".2f", ".2f", ".1e"],
            "rows": [[r["eval"], r["function"], r["size"], r["gradir"]]
                     + [r[p] for p in PEERS]
                     + [r[p] / r["gradir"] if None not in (r[p], r["gradir"]) else None
                        for p in PEERS]
                     + [max((r[p + " diff"] for p in PEERS if r[p + " diff"] is not None),
                            default=None)]
                     for r in rows]}


def child_env():
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "GRADIR_NUM_THREADS"):
        env[var] = "1"
    env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    env["JAX_PLATFORMS"] = "cpu"
    return env


def measure(ev, flags, rows):
    """Measures eval ``ev`` in child processes (one thread each), printing and
    appending its rows; returns what failed. A child that dies (gradir's
    compiler aborting, say) is followed by another from the row it was on:
    first without gradir there, then past that row."""
    failures, start, skip, total = [], 0, -1, len(workloads((ev,), "--quick" in flags))
    while start < total:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "1", "--evals", ev,
               "--start", str(start), "--skip-gradir", str(skip)] + flags
        proc = subprocess.Popen(cmd, env=child_env(), stdout=subprocess.PIPE, text=True)
        done = 0
        for line in proc.stdout:
            if line.startswith("ROW "):
                rows.append(json.loads(line[4:]))
                print_row(rows[-1])
                done += 1
            else:
                if line.startswith("# ") and " failed: " in line:
                    failures.append(line[2:].strip())
                print(line, end="")
            sys.stdout.flush()
        if proc.wait() == 0:
            break
        at = start + done
        if at >= total:                 # died after its last row
            failures.append(f"{ev}: the measuring process exited {proc.returncode} at the end")
            print(f"# {failures[-1]}", flush=True)
            break
        _, fn, size, _, _ = workloads((ev,), "--quick" in flags)[at]
        who = "gradir" if at != skip else "a peer"
        failures.append(f"{ev} {fn} {size}: the measuring process died (exit {proc.returncode}) "
                        f"in {who}'s run; {'gradir is' if who == 'gradir' else 'the row is'} "
                        "left out")
        print(f"# {failures[-1]}", flush=True)
        start, skip = (at, at) if who == "gradir" else (at + 1, -1)
    return failures


def main(argv):
    _cli.check(argv, __doc__, flags=("--quick", "--torch-loops", "--torch-eager"),
               valued=("--evals", "--child", "--json", "--start", "--skip-gradir"))
    quick, loops = "--quick" in argv, "--torch-loops" in argv
    names = EVALS
    if "--evals" in argv:
        names = tuple(argv[argv.index("--evals") + 1].split(","))
        unknown = [n for n in names if n not in EVALS]
        if unknown:
            print(f"--evals: {', '.join(unknown)} not among {', '.join(EVALS)}",
                  file=sys.stderr)
            return 2
    if "--child" in argv:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:1])
        start = int(argv[argv.index("--start") + 1]) if "--start" in argv else 0
        skip = int(argv[argv.index("--skip-gradir") + 1]) if "--skip-gradir" in argv else -1
        run_child(names, quick, loops, "--torch-eager" in argv, start, skip)
        return 0
    import platform
    from gradir.conversion.cpu.host import detect_host
    host = detect_host()
    machine = (f"{host.model or platform.machine()}, {os.cpu_count()} cores, vector ISA "
               f"{host.isa}")
    print(f"# {machine}; one thread; python {platform.python_version()}; "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    header()
    sys.stdout.flush()
    flags = [flag for flag in ("--quick", "--torch-loops", "--torch-eager") if flag in argv]
    rows, failures = [], []
    for ev in (e for e in EVALS if e in names):
        failures += measure(ev, flags, rows)
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")
    path = _results.json_option(argv)
    if path:
        notes = [f"gradir's host detection: {machine}.",
                 "One thread, float64; medians after a warm-up call (at least 3 runs, more "
                 "until 0.5 s; one run where a call takes over 2 s); compilation and input "
                 "conversion excluded; ratios are peer time / gradir time (>1: gradir is "
                 "faster); max difference: GradBench's comparison of each peer's output "
                 "with gradir's."]
        notes += [n for ev in EVALS if ev in names for n in gradbench_peers.load(ev).NOTES]
        if quick:
            notes.append("--quick: the smallest size of each eval.")
        if loops:
            notes.append("--torch-loops: PyTorch's BA and HT as GradBench's tools/pytorch "
                         "writes them (a Python loop of backward passes), first size only.")
        if "--torch-eager" in argv:
            notes.append("--torch-eager: PyTorch's particle and saddle, nested torch.func "
                         "over Python loops.")
        notes += [f"Failed, shown as \"-\": {f}." for f in failures]
        _results.save_results(path, "gradbench", [table(rows)], notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

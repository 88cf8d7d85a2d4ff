"""Checkpointing bench: memory peak and FLOPs of the adjoint of a chain of
N dense-tanh layers, for storing everything, sqrt(N) segments by Relax's
markers, and rlx-gradient's remat=auto at several budgets.

    build/venv/bin/python bench/remat.py [--n 16,64,256] [--batch 1024] [--width 256]
                                         [--rss-max-n 64] [--json PATH]

Every number comes from rlx-memory-report's model (``gradir.autodiff.memory``)
and the FLOP counts of ``gradir.autodiff.cost`` on the generated
``@main_adjoint``; the gradients of the plans are compared with the plain
adjoint's through the reference interpreter on a small instance first.
For N <= --rss-max-n the adjoint is also compiled (gradir.compile, CPU) and
run in a fresh process: "RSS MiB" is the peak resident memory during one
call above the resident memory before it (inputs and outputs allocated,
code compiled and warmed up; Linux's VmHWM reset through clear_refs;
glibc's mmap threshold fixed at 128 KiB and gradir's kept heap turned off,
GRADIR_KEEP_HEAP=0, so freed buffers leave the RSS; the adjoint compiled
whole, GRADIR_PARALLEL_COMPILE=0, so no buffer outlives a call).
``--json PATH``: the table also goes to PATH with its provenance
(bench/_results.py).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

import _results  # bench/_results.py: --json, the results' provenance


def chain_ir(n: int, batch: int, width: int, segments: int = 0) -> str:
    """``loss = sum(h_n)``, ``h_k = tanh(h_{k-1} @ W_k + b_k)``; with
    ``segments`` > 0, the layers are grouped into that many checkpoints
    (``start_checkpoint`` on a segment's input, ``end_checkpoint`` on its
    output, as Relax's ``nn.checkpoint`` emits them)."""
    t = f"tensor<{batch}x{width}xf32>"
    w = f"tensor<{width}x{width}xf32>"
    b = f"tensor<{width}xf32>"
    args = [f"%x: {t}"] + [f"%w{k}: {w}, %b{k}: {b}" for k in range(n)]
    lines = [f"func.func @main({', '.join(args)}) -> tensor<f32> {{"]
    bounds = set()
    if segments:
        size = math.ceil(n / segments)
        bounds = {k for k in range(0, n, size)}
    h = "%x"
    for k in range(n):
        if k in bounds:
            if k:
                lines.append(f"  %e{k} = \"grad.end_checkpoint\"({h}) : ({t}) -> {t}")
                h = f"%e{k}"
            lines.append(f"  %s{k} = \"grad.start_checkpoint\"({h}) : ({t}) -> {t}")
            h = f"%s{k}"
        lines.append(f"  %z{k} = \"rlx.matmul\"({h}, %w{k}) : ({t}, {w}) -> {t}")
        lines.append(f"  %a{k} = \"rlx.add\"(%z{k}, %b{k}) : ({t}, {b}) -> {t}")
        lines.append(f"  %h{k} = \"rlx.tanh\"(%a{k}) : ({t}) -> {t}")
        h = f"%h{k}"
    if segments:
        lines.append(f"  %eend = \"grad.end_checkpoint\"({h}) : ({t}) -> {t}")
        h = "%eend"
    lines.append(f"  %loss = \"rlx.sum\"({h}) : ({t}) -> tensor<f32>")
    lines.append("  return %loss : tensor<f32>")
    lines.append("}")
    return "\n".join(lines)


def adjoint(text: str, options: str = ""):
    import gradir
    from gradir.autodiff.memory import memory_report
    from gradir.ir import find_function
    module = gradir.parse(text)
    t0 = time.perf_counter()
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{" + options + "})")
    seconds = time.perf_counter() - t0
    fn = find_function(module.operation, "main_adjoint")
    return module, memory_report(fn), seconds


def run_case(text: str, options: str = ""):
    """``(peak, flops, warning or None, seconds)`` of ``@main_adjoint``."""
    from gradir import _compat
    warnings = []
    _compat.push_diagnostic_sink(lambda sev, loc, msg: warnings.append(msg)
                                 if sev == "warning" else None)
    try:
        _, report, seconds = adjoint(text, options)
    finally:
        _compat.pop_diagnostic_sink()
    return report.peak, report.flops, (warnings[0] if warnings else None), seconds


def check_numerics() -> str:
    """Markers and remat=auto give the plain adjoint's gradients (small chain,
    f64, reference interpreter)."""
    import gradir
    n, batch, width = 6, 4, 3
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((batch, width)) * 0.5]
    for _ in range(n):
        args += [rng.standard_normal((width, width)) * 0.5, rng.standard_normal(width) * 0.1]
    text = chain_ir(n, batch, width).replace("f32", "f64")
    marked = chain_ir(n, batch, width, 2).replace("f32", "f64")
    want = gradir.interpret(adjoint(text)[0], "main_adjoint", *args)
    for src, opts in ((marked, ""), (marked, "simplify=false"), (text, "remat=auto budget=0.5"),
                      (text, "remat=auto budget=0.3 simplify=false")):
        from gradir import _compat
        _compat.push_diagnostic_sink(lambda *a: None)
        try:
            got = gradir.interpret(adjoint(src, opts)[0], "main_adjoint", *args)
        finally:
            _compat.pop_diagnostic_sink()
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    return "gradients of every plan equal the plain adjoint's (6 layers, f64)"


def _rss_child(path: str, options: str) -> None:
    """Compiles and runs @main_adjoint of the IR in ``path``; prints the
    peak RSS of one call above the RSS before it, in bytes."""
    import gradir
    from gradir import _compat
    _compat.push_diagnostic_sink(lambda *a: None)
    module = gradir.parse(open(path).read())
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{" + options + "})")
    fn = gradir.compile(module)["main_adjoint"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s.shape).astype(s.dtype) * 0.1 for s in fn.signature.inputs]
    fn(*args)

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                   # resets VmHWM to the current RSS
    before = status("VmRSS:")
    fn(*args)
    print(status("VmHWM:") - before)


def compiled_rss(text: str, options: str) -> int | None:
    import os
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        # A fixed mmap threshold: glibc otherwise raises it after the first
        # free of a large block, and later buffers come from a heap it keeps;
        # GRADIR_KEEP_HEAP=0 stops the runtime from raising it itself
        # (runtime/heap.py), which leaves the second call nothing to allocate;
        # GRADIR_PARALLEL_COMPILE=0 compiles the adjoint whole: cut in two
        # parts (runtime/partition.py), the values passed between them live in
        # buffers kept from call to call, which the second call would not count.
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", GRADIR_KEEP_HEAP="0",
                   GRADIR_PARALLEL_COMPILE="0")
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--rss-child", f.name,
                               options], capture_output=True, text=True, env=env)
    finally:
        os.unlink(f.name)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return None
    return int(proc.stdout.split()[-1])


def mib(b: int) -> str:
    return f"{b / 2**20:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="16,64,256")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--budgets", default="0.5,0.25,0.1")
    ap.add_argument("--rss-max-n", type=int, default=64)
    ap.add_argument("--rss-child", nargs=2, help=argparse.SUPPRESS)
    _results.add_json_option(ap)
    args = ap.parse_args(argv)
    if args.rss_child:
        _rss_child(*args.rss_child)
        return 0
    checked = check_numerics()
    print(checked)
    table = []
    print(f"\nchain of N dense-tanh layers, batch {args.batch}, width {args.width}, f32; "
          "peak in MiB (rlx-memory-report), FLOPs relative to the plain adjoint\n")
    print("| N | plan | budget | peak MiB | FLOPs (x plain) | vs markers | pass s | RSS MiB | note |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in [int(v) for v in args.n.split(",")]:
        plain = run_case(chain_ir(n, args.batch, args.width))
        seg = max(1, round(math.sqrt(n)))
        marks = run_case(chain_ir(n, args.batch, args.width, seg))
        plain_text = chain_ir(n, args.batch, args.width)
        marked_text = chain_ir(n, args.batch, args.width, seg)
        rows = [("store everything", "-", plain, plain_text, ""),
                (f"markers, {seg} segments", "-", marks, marked_text, "")]
        budgets = [(f"{float(b):.0%}", b) for b in args.budgets.split(",")]
        budgets.append(("= markers' peak", str(marks[0])))
        for label, b in budgets:
            rows.append(("remat=auto", label,
                         run_case(plain_text, f"remat=auto budget={b}"), plain_text,
                         f"remat=auto budget={b}"))
        for name, budget, (peak, flops, warning, seconds), text, options in rows:
            rss = compiled_rss(text, options) if n <= args.rss_max_n else None
            verdict = ""
            if name == "remat=auto":
                le_mem, le_flops = peak <= marks[0], flops <= marks[1]
                better = (peak < marks[0]) or (flops < marks[1])
                verdict = ("dominates" if le_mem and le_flops and better else
                           "ties" if le_mem and le_flops else
                           "fewer FLOPs, more memory" if le_flops else
                           "less memory, more FLOPs" if le_mem else "worse")
            note = ""
            if warning:
                note = "budget unreachable; lowest peak " + mib(int(
                    warning.split("lowest peak it reaches is ")[1].split()[0])) + " MiB"
            print(f"| {n} | {name} | {budget} | {mib(peak)} | {flops / plain[1]:.3f} | "
                  f"{verdict} | {seconds:.2f} | {mib(rss) if rss is not None else '-'} | "
                  f"{note} |", flush=True)
            table.append([n, name, budget, peak / 2**20, flops / plain[1], verdict or None,
                          seconds, rss / 2**20 if rss is not None else None, note or None])
    if args.json:
        _results.save_results(args.json, "remat", [{
            "title": f"chain of N dense-tanh layers, batch {args.batch}, width {args.width}, f32",
            "columns": ["N", "plan", "budget", "peak MiB", "FLOPs (x plain)", "vs markers",
                        "pass s", "RSS MiB", "note"],
            "formats": [None, None, None, ".1f", ".3f", None, ".2f", ".1f", None],
            "rows": table}], notes=[
            "Peak: rlx-memory-report's model of @main_adjoint (arguments + saved for the "
            "backward + temporaries); FLOPs: gradir.autodiff.cost, relative to the plain "
            "adjoint's; \"vs markers\": remat=auto's plan against the markers' sqrt(N) plan; "
            "\"pass s\": the rlx-gradient pass's wall time.",
            f"RSS MiB (N <= {args.rss_max_n}): peak resident memory of one compiled call "
            "above the resident memory before it, in a fresh process.",
            checked[0].upper() + checked[1:] + "."])
    return 0


if __name__ == "__main__":
    sys.exit(main())

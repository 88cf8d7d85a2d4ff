"""Renders docs/performance.md from the bench results in bench/results/*.json.

    build/venv/bin/python bench/render_performance.py                 # writes the page
    build/venv/bin/python bench/render_performance.py --check         # exit 1 if it differs
    build/venv/bin/python bench/render_performance.py --readme-table  # README's summary table

The page is bench/performance.md.in (what the page is, how the benches
measure, the workloads) followed by one section per results file (written
by a bench script's ``--json``, see bench/_results.py): the command that
reproduces it, the machine (CPU, vector ISA, cores), date, commit and load
average, the bench's notes and its tables.  A GPU section comes from
bench/results/gpu.json, or says that no GPU run is recorded and how to make
one.

``--readme-table`` prints one compact markdown table, a row per headline
workload, each naming its bench command, machine and date; when README.md
holds the markers ``<!-- BEGIN performance -->`` and ``<!-- END
performance -->``, writing the page also writes that table between them,
and ``--check`` checks it there too.  ``--check`` prints a unified diff of
what differs.  The rendering reads only the stored files: it is the same on
every machine.
"""

from __future__ import annotations

import difflib
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
HEAD = os.path.join(HERE, "performance.md.in")
PAGE = os.path.join(ROOT, "docs", "performance.md")
README = os.path.join(ROOT, "README.md")
BEGIN, END = "<!-- BEGIN performance -->", "<!-- END performance -->"

# Section titles, in page order; results files of other benches follow them
# (alphabetically), the GPU section comes last.
SECTIONS = {
    "cpu": "CPU: gradir against numpy, PyTorch and JAX",
    "cpu-avx2": "CPU held to AVX2 (`--isa avx2`)",
    "cnn": "CPU: a ResNet gradient step imported from PyTorch",
    "transformer": "CPU: a Transformer encoder layer gradient step imported from PyTorch",
    "attention": "CPU: attention of long sequences, with and without rlx-fuse-attention",
    "compile_time": "Compile time: the first call against JAX",
    "compile_time-breakdown": "Compile time: gradir's first call stage by stage",
    "compile_time-timeline": "Compile time: one compile per thread",
    "gpu_compile": "Compile time for the GPU: no cache, a cache miss and a hit",
    "compile_time-llvm-levels": "Compile time: LLVM O3 against O2",
    "compile_time-llvm-passes": "Compile time: gradir's LLVM pipeline against default<O2>",
    "gradient_pass": "The gradient pass's own time",
    "lstm_gradient": "Loops: ADBench's LSTM gradient",
    "remat": "Checkpointing: memory and FLOPs of recomputation",
    "simplify": "Simplifying gradients: ops and FLOPs",
    "gradbench": "GradBench evals: gradir against JAX and PyTorch",
    "train_step": "Training from PyTorch: one optimizer step against eager and torch.compile",
}
GPU_TITLE = "NVIDIA GPU: gradir against PyTorch CUDA"


# --- loading --------------------------------------------------------------------------

def load_results(folder: str = RESULTS) -> dict[str, dict]:
    """file stem -> the results file's contents."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            out[os.path.splitext(os.path.basename(path))[0]] = json.load(f)
    return out


def _order(stem: str) -> tuple:
    if stem == "gpu":
        return (2, 0, stem)
    keys = list(SECTIONS)
    return (0, keys.index(stem), stem) if stem in keys else (1, 0, stem)


# --- formatting -------------------------------------------------------------------------

def fmt(value, spec: str | None = None) -> str:
    """A table cell: None "-", booleans yes/no, numbers by ``spec`` or by
    magnitude, text with its pipes escaped."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and spec:
        return format(value, spec)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        a = abs(value)
        return (f"{value:.0f}" if a >= 1000 else f"{value:.1f}" if a >= 100 else
                f"{value:.2f}" if a >= 1 else f"{value:.3g}")
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(table: dict) -> list[str]:
    columns = table["columns"]
    formats = table.get("formats") or [None] * len(columns)
    numeric = [any(isinstance(r[i], (int, float)) and not isinstance(r[i], bool)
                   for r in table["rows"]) for i in range(len(columns))]
    lines = ["| " + " | ".join(fmt(c) for c in columns) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for row in table["rows"]:
        lines.append("| " + " | ".join(fmt(v, s) for v, s in zip(row, formats)) + " |")
    return lines


def machine_line(m: dict) -> str:
    """"AMD EPYC (Zen 5), AVX-512, 2 cores"."""
    name = m.get("cpu") or m.get("arch") or "unknown CPU"
    if m.get("core") and m["core"] not in name:
        name += f" ({m['core']})"
    isa = m.get("isa") or "?"
    if m.get("amx"):
        isa += " + AMX"
    cores = m.get("cores")
    text = f"{name}, {isa}, {cores} core{'s' if cores != 1 else ''}"
    if m.get("usable_cores") and m["usable_cores"] != cores:
        text += f" ({m['usable_cores']} usable)"
    return text


def date_of(p: dict) -> str:
    """"2026-11-28 19:05 UTC" from the provenance's ISO date."""
    d = p.get("date") or ""
    return d[:10] + " " + d[11:16] + " UTC" if len(d) >= 16 else d or "?"


def commit_of(p: dict) -> str:
    c = p.get("commit")
    if not c:
        return "unknown commit"
    text = f"`{c[:10]}`"
    if p.get("commit_of"):
        text += f" ({p['commit_of']})"
    elif p.get("dirty"):
        text += " (with uncommitted changes in the tree)"
    return text


def load_of(m: dict) -> str:
    start, end = m.get("load_start"), m.get("load_end")
    if not start or not end:
        return "not recorded"
    return f"{start[0]:.2f} at the start, {end[0]:.2f} at the end"


def versions_of(p: dict) -> str:
    v = p.get("versions") or {}
    names = [("python", "Python"), ("numpy", "numpy"), ("torch", "torch"), ("jax", "jax"),
             ("mlir", "MLIR bindings"), ("tvm", "TVM")]
    return ", ".join(f"{label} {v[k]}" for k, label in names if v.get(k))


def short_command(p: dict) -> str:
    """The command without its interpreter and ``--json PATH``."""
    words = (p.get("command") or "").split()
    if words and (words[0].endswith("python") or "python3" in words[0]):
        words = words[1:]
    if "--json" in words:
        at = words.index("--json")
        words = words[:at] + words[at + 2:]
    return " ".join(words)


# --- the page ----------------------------------------------------------------------------

def section(stem: str, data: dict) -> list[str]:
    p = data.get("provenance", {})
    m = p.get("machine", {})
    title = GPU_TITLE if stem == "gpu" else SECTIONS.get(stem, f"`bench/{data.get('bench', stem)}`")
    lines = [f"## {title}", "", "    " + (p.get("command") or "(command not recorded)"), ""]
    machine = machine_line(m)
    if stem == "gpu" and p.get("gpu", {}).get("device"):
        machine = f"{p['gpu']['device']}; host {machine}"
    load = load_of(m)
    busy = max((m.get("load_start") or [0])[0], (m.get("load_end") or [0])[0])
    if m.get("cores") and busy > m["cores"]:
        load += " (above the core count: rows are noisier than on a quiet machine)"
    if m.get("nice"):
        load += (f"; the bench ran at nice {m['nice']}, gradir and its peers alike"
                 + (", ahead of the other processes" if m["nice"] < 0 else ""))
    lines += [f"- Machine: {machine}",
              f"- Measured: {date_of(p)}, commit {commit_of(p)}",
              f"- Load average: {load}",
              f"- Software: {versions_of(p)}",
              f"- Results: [`bench/results/{stem}.json`](../bench/results/{stem}.json)", ""]
    if data.get("notes"):
        lines += ["Notes:", ""] + [f"- {note}" for note in data["notes"]] + [""]
    for table in data.get("tables", []):
        lines += [f"### {table['title']}", ""] + markdown_table(table) + [""]
    return lines


def no_gpu_section() -> list[str]:
    return [f"## {GPU_TITLE}", "",
            "No GPU run is recorded (`bench/results/gpu.json` is absent). To make one: on a "
            "machine with MLIR (this repository's `build/venv`), compile and export the "
            "workloads,", "",
            "    build/venv/bin/python bench/gpu.py --build build/gpu-bench", "",
            "then, on the GPU machine, in a copy of this repository with `build/gpu-bench` "
            "beside it (python3 with numpy and torch; MLIR is not needed there), run", "",
            "    python3 bench/gpu.py --run build/gpu-bench --json gpu.json", "",
            "and bring `gpu.json` back as `bench/results/gpu.json`; then re-render this page.",
            ""]


def render(results: dict[str, dict] | None = None) -> str:
    results = load_results() if results is None else results
    with open(HEAD) as f:
        lines = ["<!-- Generated by bench/render_performance.py from bench/performance.md.in "
                 "and bench/results/*.json: edit those, not this file. -->", "",
                 f.read().rstrip("\n"), ""]
    lines += ["## Summary", "",
              "The headline rows of the sections below (the table README.md shows).", ""]
    lines += readme_table(results, lead=False).rstrip("\n").splitlines() + [""]
    for stem in sorted(results, key=_order):
        lines += section(stem, results[stem])
    if "gpu" not in results:
        lines += no_gpu_section()
    return "\n".join(lines).rstrip("\n") + "\n"


# --- the README's summary table -----------------------------------------------------------

def _table(data: dict, title_start: str) -> dict | None:
    return next((t for t in data.get("tables", []) if t["title"].startswith(title_start)), None)


def _rows(table: dict) -> list[dict]:
    return [dict(zip(table["columns"], r)) for r in table["rows"]]


def _source(data: dict) -> str:
    p = data.get("provenance", {})
    m = p.get("machine", {})
    load = (f" · load {m['load_start'][0]:.1f}-{m['load_end'][0]:.1f}"
            if m.get("load_start") and m.get("load_end") else "")
    return f"`{short_command(p)}` · {machine_line(m)} · {date_of(p)[:10]}{load}"


def _cpu_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "gradir against numpy")
    if table is None:
        return []
    rows = _rows(table)
    threads = sorted({r["threads"] for r in rows})
    labels = {"mlp": "MLP 784-512-512-10 step, batch {}", "lenet": "LeNet-5 step, batch {}",
              "gemm": "GEMM {}^3"}
    out = []
    for kind, label in labels.items():
        names = sorted({r["workload"] for r in rows if r["workload"].rstrip("0123456789") == kind},
                       key=lambda w: int(w[len(kind):]))
        if not names:
            continue
        wl = names[-1]
        parts = []
        for th in threads:
            r = next((r for r in rows if r["workload"] == wl and r["threads"] == th), None)
            if r is None:
                continue
            peers = [(r[f"{n}/gradir"], n) for n in ("numpy", "torch", "jax")
                     if r.get(f"{n}/gradir") is not None]
            if not peers:
                continue
            ratio, peer = min(peers)
            peer = {"numpy": "numpy", "torch": "PyTorch", "jax": "JAX"}[peer]
            parts.append(f"**{ratio:.2f}** ({peer}) at {th} thread{'s' if th > 1 else ''}")
        if parts:
            out.append((label.format(wl[len(kind):]),
                        "fastest peer / gradir: " + ", ".join(parts)))
    return out


def _cnn_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "ResNet")
    if table is None:
        return []
    rows = [r for r in _rows(table) if r.get("clock", "wall") == "wall"]
    if rows and "torch/gradir" in rows[0]:  # the records before torch.compile's column
        parts = [f"**{r['torch/gradir']:.2f}** at {r['threads']} "
                 f"thread{'s' if r['threads'] > 1 else ''}" for r in rows]
        return [(f"ResNet (CIFAR-sized) step, imported, {rows[0]['workload']}",
                 "PyTorch / gradir: " + ", ".join(parts))]
    parts = [f"eager **{r['eager/gradir']:.2f}**"
             + (f", torch.compile **{r['compile/gradir']:.2f}**"
                if r.get("compile/gradir") is not None else "")
             + f" at {r['threads']} thread{'s' if r['threads'] > 1 else ''}" for r in rows]
    return [(f"ResNet (CIFAR-sized) step, imported, {rows[0]['workload']}",
             "PyTorch / gradir, wall time: " + "; ".join(parts))] if rows else []


def _transformer_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "Transformer")
    if table is None:
        return []
    # One thread, CPU time: on a shared machine the wall time of a call of
    # tens of ms, and the peers' spinning thread pools, follow the load.
    rows = [r for r in _rows(table) if r.get("clock") == "cpu" and r["threads"] == 1]
    parts = [f"eager **{r['eager/gradir']:.2f}**"
             + (f", torch.compile **{r['compile/gradir']:.2f}**"
                if r.get("compile/gradir") is not None else "") for r in rows]
    return [(f"Transformer encoder layer step, imported, {rows[0]['workload']}",
             "PyTorch / gradir at 1 thread, CPU time: " + "; ".join(parts)
             + " (2 threads and wall times: the section)")] if rows else []


def _attention_rows(data: dict) -> list[tuple[str, str]]:
    table, memory = _table(data, "Attention"), _table(data, "Peak memory")
    if table is None or memory is None:
        return []
    times, peaks = _rows(table), {r["seq"]: r for r in _rows(memory)}
    r = max(times, key=lambda r: r["seq"])
    m = peaks.get(r["seq"])
    if m is None:
        return []
    return [(f"attention, seq {r['seq']}, {r['heads']} heads of 64, with rlx-fuse-attention",
             f"PyTorch SDPA / gradir: forward **{r['fwd torch/fused']:.2f}**, gradient "
             f"**{r['grad torch/fused']:.2f}**; unfused / fused: forward "
             f"{r['fwd unfused/fused']:.2f}, gradient {r['grad unfused/fused']:.2f}; peak MiB "
             f"of the gradient: fused {m['grad fused MiB']:.0f}, unfused "
             f"{m['grad unfused MiB']:.0f}, PyTorch {m['grad torch MiB']:.0f}")]


def _compile_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "first call")
    if table is None:
        return []
    out = []
    rows = _rows(table)
    for wl in dict.fromkeys(r["workload"] for r in rows):
        by = {r["row"]: r for r in rows if r["workload"] == wl}
        cold = by.get("gradir cold adj")
        if cold is None or cold.get("jax/this") is None:
            continue
        text = (f"JAX's first call / gradir's (`@main_adjoint`): **{cold['jax/this']:.2f}** "
                f"({cold['first call s']:.2f} s)")
        warm = by.get("gradir warm")
        if warm and warm.get("jax/this") is not None:
            text += f"; from the compile cache **{warm['jax/this']:.2f}**"
        out.append((f"compile time, {wl} step (parse + gradient + compile + first run)", text))
    return out


def _lstm_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "ADBench LSTM")
    if table is None:
        return []
    rows = [r for r in _rows(table) if r["ms"] is not None]
    if not rows:
        return []
    c = max(r["c"] for r in rows)
    by = {r["gradir"]: r for r in rows if r["c"] == c}
    parts = []
    a = by.get("all")
    if a and a.get("JAX / gradir") is not None:
        parts.append(f"JAX / gradir **{a['JAX / gradir']:.2f}** (medians; best times "
                     f"{a['JAX best ms'] / a['best ms']:.2f})")
    if a and a.get("torch / gradir") is not None:
        parts.append(f"PyTorch / gradir **{a['torch / gradir']:.0f}**")
    s = by.get("sqrt")
    if s:
        parts.append(f"sqrt(T) checkpointing: {s['(peak - args) all / this']:.1f}x less memory "
                     f"above the arguments at {s['ms / all']:.2f}x the time")
    return [(f"ADBench LSTM gradient, c = {c} (float64)", "; ".join(parts))] if parts else []


def _remat_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "chain of N")
    if table is None:
        return []
    rows = _rows(table)
    n = max(r["N"] for r in rows)
    by = [r for r in rows if r["N"] == n]
    plain = next((r for r in by if r["plan"] == "store everything"), None)
    marks = next((r for r in by if r["plan"].startswith("markers")), None)
    auto = next((r for r in by if r["plan"] == "remat=auto" and "markers" in r["budget"]), None)
    if not (plain and marks and auto):
        return []
    return [(f"checkpointing, chain of {n} dense-tanh layers",
             f"remat=auto at the markers' peak ({auto['peak MiB']:.1f} MiB, store everything "
             f"{plain['peak MiB']:.1f}): **{auto['FLOPs (x plain)']:.2f}x** the plain "
             f"adjoint's FLOPs (sqrt(N) markers: {marks['FLOPs (x plain)']:.2f}x)")]


def _simplify_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "ops and FLOPs")
    if table is None:
        return []
    parts = [f"{r['model']} {r['simplified/hand ops']:.2f}" for r in _rows(table)]
    return [("simplified gradients (mlp, convnet, attention)",
             "ops / a hand-written backward's: " + ", ".join(parts))]


def _gpu_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "gradir against PyTorch CUDA")
    if table is None:
        return []
    out = []
    for r in _rows(table):
        if r["inputs"].startswith("numpy"):
            continue
        out.append((f"GPU {r['workload']} ({r['inputs']})",
                    f"PyTorch / gradir: **{r['torch/gradir']:.2f}**"))
    return out


def _gradient_pass_rows(data: dict) -> list[tuple[str, str]]:
    parts = []
    dense = _table(data, "rlx-gradient on N dense-tanh layers")
    if dense is not None and dense["rows"]:
        r = _rows(dense)[-1]
        parts.append(f"{r['N']} dense-tanh layers **{r['default ops/s']:,.0f}** forward ops/s")
    shared = _table(data, "rlx-gradient on chains that read one value")
    if shared is not None:
        for chain, label in (("residual", "residual"), ("shared", "shared-weight")):
            rows = [r for r in _rows(shared) if r["chain"] == chain]
            if rows:
                r = rows[-1]
                parts.append(f"{r['N']}-layer {label} chain **{r['default ops/s']:,.0f}** "
                             f"(time per op {r['per-op vs N=500']:.2f}x that at 500 layers)")
    tvm = []            # TVM Relax's C++ Gradient on the same program (where installed)
    if dense is not None and dense["rows"] and _rows(dense)[-1].get("TVM / default"):
        r = _rows(dense)[-1]
        tvm.append(f"**{r['TVM / default']:.2f}** at {r['N']} dense-tanh layers")
    models = _table(data, "rlx-gradient on models imported from PyTorch")
    for r in _rows(models) if models is not None else []:
        if r["model"] in ("resnet-meanpool", "mlp", "resmlp200") and r.get("TVM / default"):
            tvm.append(f"**{r['TVM / default']:.2f}** on {r['model']}")
    if tvm:
        parts.append("TVM Relax's Gradient / gradir: " + ", ".join(tvm))
    if not parts:
        return []
    return [("gradient pass speed (`rlx-gradient`, default pipeline)", "; ".join(parts))]


def _train_step_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "One training step")
    if table is None:
        return []
    # One thread: at 2 threads on a loaded machine the peers' pools spin.
    rows = [r for r in _rows(table) if r["threads"] == 1]
    parts = [f"{r['model']} eager **{r['eager/gradir']:.2f}**, torch.compile "
             f"**{r['inductor/gradir']:.2f}** (first step {r['gradir first step s']:.1f} s "
             f"against inductor's {r['inductor first step s']:.1f} s)" for r in rows]
    return [("training step through the drop-in module (SGD), imported",
             "PyTorch / gradir at 1 thread: " + "; ".join(parts))] if rows else []


def _gradbench_rows(data: dict) -> list[tuple[str, str]]:
    table = _table(data, "GradBench evals")
    if table is None:
        return []
    rows = _rows(table)
    evals = []
    for r in rows:
        if r["eval"] not in evals:
            evals.append(r["eval"])
    ahead = {"jax": 0, "torch": 0}
    counted = {"jax": 0, "torch": 0}
    worst = {"jax": (None, None), "torch": (None, None)}
    for r in rows:
        for peer in ("jax", "torch"):
            ratio = r.get(f"{peer}/gradir")
            if not isinstance(ratio, (int, float)):
                continue
            counted[peer] += 1
            ahead[peer] += ratio >= 1.0
            if worst[peer][0] is None or ratio < worst[peer][0]:
                worst[peer] = (ratio, f"{r['eval']} {r['function']} {r['size']}")
    parts = [f"{name} / gradir >= 1 in **{ahead[peer]} of {counted[peer]}** rows (lowest "
             f"{worst[peer][0]:.2f}, {worst[peer][1]})"
             for peer, name in (("jax", "JAX"), ("torch", "PyTorch")) if counted[peer]]
    return [(f"GradBench's {len(evals)} evals, one thread, float64", "; ".join(parts))]


HEADLINES = (("cpu", _cpu_rows), ("cnn", _cnn_rows), ("transformer", _transformer_rows),
             ("attention", _attention_rows),
             ("train_step", _train_step_rows), ("gradbench", _gradbench_rows),
             ("compile_time", _compile_rows),
             ("lstm_gradient", _lstm_rows), ("remat", _remat_rows),
             ("simplify", _simplify_rows), ("gradient_pass", _gradient_pass_rows),
             ("gpu", _gpu_rows))


def readme_table(results: dict[str, dict] | None = None, lead: bool = True) -> str:
    """One markdown table, a row per headline workload, each naming its
    bench command, machine and date (``lead``: after a line that says how
    to read it and where the rest is)."""
    results = load_results() if results is None else results
    lines = ["Ratios are a peer's time / gradir's (>1: gradir is faster); every number, "
             "its machine and its command: [docs/performance.md](docs/performance.md).",
             ""] if lead else []
    lines += ["| workload | result | measured with · on · date · load |", "|---|---|---|"]
    for stem, rows_of in HEADLINES:
        if stem == "gpu" and stem not in results:
            lines.append("| NVIDIA GPU | no GPU run is recorded (`bench/results/gpu.json`); "
                         "[docs/performance.md](docs/performance.md#nvidia-gpu-gradir-against-pytorch-cuda) says how to make one "
                         "| `bench/gpu.py` |")
            continue
        if stem not in results:
            continue
        for workload, result in rows_of(results[stem]):
            lines.append(f"| {workload} | {result} | {_source(results[stem])} |")
    return "\n".join(lines) + "\n"


def _readme_block(text: str) -> tuple[int, int] | None:
    """(start, end) offsets of the text between the README's markers."""
    if BEGIN not in text or END not in text:
        return None
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END, start)
    return start, end


def _block(table: str) -> str:
    return "\n" + table


def _diff(old: str, new: str, name: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        f"{name} (stored)", f"{name} (rendered)"))


def main(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return 0
    unknown = [a for a in argv if a not in ("--check", "--readme-table")]
    if unknown:
        print(f"error: unknown argument {unknown[0]!r}\nusage: {__doc__.splitlines()[2].strip()}",
              file=sys.stderr)
        return 2
    results = load_results()
    if "--readme-table" in argv:
        sys.stdout.write(readme_table(results))
        return 0
    page = render(results)
    readme = open(README).read() if os.path.exists(README) else ""
    block = _readme_block(readme)
    if "--check" in argv:
        ok = True
        stored = open(PAGE).read() if os.path.exists(PAGE) else ""
        if stored != page:
            sys.stdout.write(_diff(stored, page, "docs/performance.md"))
            print("docs/performance.md: differs from bench/results (run "
                  "bench/render_performance.py)")
            ok = False
        else:
            print("docs/performance.md: up to date")
        if block is None:
            print("README.md: no performance markers, not checked")
        elif readme[block[0]:block[1]] != _block(readme_table(results)):
            sys.stdout.write(_diff(readme[block[0]:block[1]], _block(readme_table(results)),
                                   "README.md performance block"))
            print("README.md performance block: differs (run bench/render_performance.py)")
            ok = False
        else:
            print("README.md performance block: up to date")
        return 0 if ok else 1
    os.makedirs(os.path.dirname(PAGE), exist_ok=True)
    with open(PAGE, "w") as f:
        f.write(page)
    print(f"wrote {os.path.relpath(PAGE, ROOT)} ({len(results)} results files)")
    if block is not None:
        new = readme[:block[0]] + _block(readme_table(results)) + readme[block[1]:]
        if new != readme:
            with open(README, "w") as f:
                f.write(new)
            print("wrote README.md's performance block")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

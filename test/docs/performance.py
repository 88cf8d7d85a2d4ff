# RUN: %PYTHON %gradir_src/bench/render_performance.py --check | FileCheck %s
# RUN: %PYTHON %s | FileCheck %s --check-prefix=FILES
# docs/performance.md is rendered from bench/results/*.json (and README.md's
# performance block, when it has the markers, from the same files) and must be
# up to date; every results file records its provenance (date, commit, command,
# machine, load average, versions) and well-formed tables; the page has a
# section for every results file, and one for the GPU (a run or how to make one).
# CHECK: docs/performance.md: up to date
# CHECK-NEXT: README.md{{( performance block: up to date|: no performance markers, not checked)}}

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import render_performance  # noqa: E402

results = render_performance.load_results()
problems = []
for stem, data in results.items():
    p = data.get("provenance", {})
    m = p.get("machine", {})
    for key in ("date", "commit", "command"):
        if not p.get(key):
            problems.append(f"{stem}: no {key}")
    for key in ("cpu", "isa", "cores", "load_start", "load_end"):
        if m.get(key) in (None, "", []):
            problems.append(f"{stem}: no machine {key}")
    if not p.get("versions", {}).get("python"):
        problems.append(f"{stem}: no Python version")
    if not data.get("tables"):
        problems.append(f"{stem}: no tables")
    for t in data.get("tables", []):
        if any(len(r) != len(t["columns"]) for r in t["rows"]):
            problems.append(f"{stem}: ragged table {t['title']!r}")
        if len(t.get("formats") or t["columns"]) != len(t["columns"]):
            problems.append(f"{stem}: formats of {t['title']!r}")
print("cpu results:", "cpu" in results, "; problems:", problems)
# FILES: cpu results: True ; problems: []

page = render_performance.render(results)
missing = [stem for stem in results if f"(../bench/results/{stem}.json)" not in page]
print("sections missing:", missing, "; GPU section:", "## NVIDIA GPU" in page)
# FILES: sections missing: [] ; GPU section: True

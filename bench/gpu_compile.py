"""gradir's compile time for the GPU: a fresh compile, a compile-cache miss and a hit.

    build/venv/bin/python bench/gpu_compile.py                 # mlp, resnet, transformer; 3 rounds
    build/venv/bin/python bench/gpu_compile.py --quick         # bench/gpu.py's --quick shapes
    build/venv/bin/python bench/gpu_compile.py --rounds 5 --workloads resnet --chip sm_80
    build/venv/bin/python bench/gpu_compile.py --json bench/results/gpu_compile.json

Needs no GPU: ``gradir.compile(module, target="cuda")`` lowers, runs
ptxas and (on a miss) writes the cache entry without one; only the first
call needs the driver (docs/gpu.md, "The compile cache").  The workloads
are bench/gpu.py's, differentiated as there (``@main_adjoint`` with every
parameter resident): mlp (examples/mlp.py's 784-512-512-10 MLP step, batch 256), resnet
(bench/cnn.py's CIFAR ResNet step, batch 128) and transformer (one
pre-norm encoder layer and a linear head, batch 32, sequence 128), each
with ``precision="fp32"`` and ``compute_dtype="bf16"``.

Each measurement is a fresh Python process that parses the saved module
and times ``gradir.compile`` alone (the process's start, imports and
parse are not in it; the first row of each workload gives them):

  * no cache:  ``cache=False``: lower, ptxas, host code;
  * miss:      an empty cache folder: the same plus the entry's export;
  * hit:       the folder the miss wrote: the key (the module printed and
               hashed) and the entry's signatures read, nothing compiled.

Rounds alternate the three kinds; the table prints the median, min and max
of each, and hit / no cache.  The numbers depend on the host CPU (the
lowering and ptxas run here), printed with the results."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance

WORKLOADS = ("mlp", "resnet", "transformer")
VARIANTS = (("fp32", {}), ("bf16", {"compute_dtype": "bf16"}))
KINDS = ("no cache", "miss", "hit")


def _module_text(workload: str, quick: bool) -> tuple[str, list[int]]:
    """The differentiated workload as rlx text, and the resident arguments."""
    import torch

    import gpu   # bench/gpu.py: the models and their shapes
    import gradir
    from gradir.frontends.torch import import_module
    from gradir.ir import print_module
    if workload == "mlp":        # bench/gpu.py's mlp{B}_resident (examples/mlp.py)
        sys.path.insert(0, os.path.join(gpu.ROOT, "examples"))
        from mlp import build_mlp, differentiate
        module = differentiate(build_mlp(64 if quick else 256, gpu.SIZES))
        return print_module(module), list(gpu.MLP_PARAMS)
    cfg = gpu.MODEL_CONFIG[workload][quick]
    model = gpu.make_model(torch, workload, cfg)
    x, y = gpu.model_inputs(torch, workload, cfg)
    n = len(list(model.parameters()))
    module = import_module(model, (x, y))
    wrt = ",".join(str(i) for i in range(2, 2 + n))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    return print_module(module), list(range(2, 2 + n))


def child(path: str, options: dict) -> tuple[float, object]:
    """Parses the module in ``path`` and returns the seconds
    ``gradir.compile`` took with ``options`` and the executable's
    ``cache_hit`` (None without a cache)."""
    import gradir
    with open(path) as f:
        module = gradir.parse(f.read())
    options["keep_resident"] = tuple(options["keep_resident"])
    t0 = time.perf_counter()
    exe = gradir.compile(module, target="cuda", functions=["main_adjoint"], **options)
    return time.perf_counter() - t0, getattr(exe, "cache_hit", None)


def _run_child(path: str, options: dict, hit) -> float:
    """The seconds of one compile in a fresh process; refuses a run whose
    cache did not do what its kind says (``hit``: True, False or None)."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path,
                           json.dumps(options)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    seconds, got = json.loads(proc.stdout.strip().splitlines()[-1])
    if got is not hit:
        raise RuntimeError(f"expected cache_hit {hit}, the compile gave {got} ({options})")
    return seconds


def measure(workload: str, quick: bool, chip: str, rounds: int, folder: str) -> list[list]:
    t0 = time.perf_counter()
    text, resident = _module_text(workload, quick)
    print(f"{workload}: imported and differentiated in {time.perf_counter() - t0:.1f} s "
          f"({text.count(chr(10))} lines)", flush=True)
    path = os.path.join(folder, workload + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    rows = []
    for variant, extra in VARIANTS:
        base = {"chip": chip, "keep_resident": resident, **extra}
        times = {k: [] for k in KINDS}
        for r in range(rounds):
            cache = os.path.join(folder, f"cache-{workload}-{variant}-{r}")
            times["no cache"].append(_run_child(path, {**base, "cache": False}, None))
            times["miss"].append(_run_child(path, {**base, "cache": cache}, False))
            times["hit"].append(_run_child(path, {**base, "cache": cache}, True))
        med = {k: statistics.median(v) for k, v in times.items()}
        for k in KINDS:
            rows.append([workload, variant, k, med[k], min(times[k]), max(times[k]),
                         med[k] / med["no cache"]])
            print(f"  {variant:5} {k:9} median {med[k]:7.3f} s  min {min(times[k]):7.3f}  "
                  f"max {max(times[k]):7.3f}  / no cache {med[k] / med['no cache']:.3f}",
                  flush=True)
    return rows


def main(argv: list[str]) -> int:
    if "--child" in argv:
        i = argv.index("--child")
        print(json.dumps(child(argv[i + 1], json.loads(argv[i + 2]))))
        return 0
    _cli.check(argv, __doc__, flags=("--quick",),
               valued=("--rounds", "--workloads", "--chip", "--json"))
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    chip = argv[argv.index("--chip") + 1] if "--chip" in argv else "sm_90"
    workloads = (argv[argv.index("--workloads") + 1].split(",") if "--workloads" in argv
                 else list(WORKLOADS))
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown or rounds < 1:
        print(f"usage: unknown workloads {unknown} (one of {', '.join(WORKLOADS)}) or "
              f"--rounds below 1", file=sys.stderr)
        return 2
    quick = "--quick" in argv
    import _steps  # noqa: E402  bench/_steps.py: the host line
    print(f"# {_steps.machine()}; load average {os.getloadavg()[0]:.2f}; chip {chip}",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="gradir-gpu-compile-") as folder:
        for workload in workloads:
            rows += measure(workload, quick, chip, rounds, folder)
    path = _results.json_option(argv)
    if path:
        _results.save_results(path, "gpu_compile", [{
            "title": f"gradir.compile(target=\"cuda\", chip=\"{chip}\"): seconds, "
                     f"fresh process each, median of {rounds}",
            "columns": ["workload", "arithmetic", "compile", "median s", "min s", "max s",
                        "/ no cache"],
            "formats": [None, None, None, ".3f", ".3f", ".3f", ".3f"],
            "rows": rows}],
            notes=["no cache: cache=False; miss: an empty cache folder (the entry written); "
                   "hit: the folder the miss wrote. No GPU used: ptxas and the lowering run "
                   "on this CPU."])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""gradir on an NVIDIA GPU against numpy (errors) and PyTorch CUDA eager (speed).

Two halves, because MLIR does not travel to the GPU machine:

    build/venv/bin/python bench/gpu.py --build DIR [--quick] [--chip sm_90] [--format isa]
        here (MLIR, ptxas): compiles every workload for the GPU and exports
        shared libraries (cubins embedded) plus inputs/expected results to DIR
        (a few MiB; libmlir_cuda_runtime.so and a libLLVM.so stand-in are
        copied next to them);
    python3 bench/gpu.py --run DIR [--out results.json] [--json PATH] [--repeat 50]
        on the GPU machine with python3 + numpy + torch only: loads the
        libraries with gradir.runtime.load (numpy + ctypes), checks every
        result and times gradir against PyTorch side by side in one process;
        --out writes the raw results, --json the tables with the machine,
        the device, date, commit and command (bench/_results.py), for
        bench/results/gpu.json and docs/performance.md.

Workloads (float32):
  * ops: every case of the numeric conversion suites (test/conversion/cpu/
    numeric_*.py: each rlx op in several shapes and dtypes, and the gradients
    of every op) against the reference interpreter's results computed at
    build time: max abs error per case, failures against the suites' own
    tolerances;
  * mlp{B}: one gradient step (loss, logits, all six parameter gradients) of
    a 784-512-512-10 MLP with nll_loss(log_softmax), B in {256, 4096}, checked
    against a float64 numpy backward; gradir with every input copied in
    (numpy in, numpy out) and with the parameters kept resident on the device
    (keep_resident), PyTorch eager (torch.autograd.grad) on tensors already on
    the device and with the same copies from/to numpy;
  * gemm4096: C = A @ B at 4096^3 against torch.matmul; the timed gradir
    function is sum(A @ B) with A and B resident, so one call is the GEMM
    kernel plus a 64 MiB reduction and a 4-byte copy (torch: (a @ b).sum()
    and a @ b alone); the full product is checked once against torch.
Timings: median of --repeat calls after warm-up, each call synchronised
(gradir's calls return after a stream synchronise).  Ratios are
gradir time / PyTorch time (< 1: gradir is faster).

With a GPU machine reached through the device tool (build/ is git-ignored):
    build/venv/bin/python bench/gpu.py --build build/gpu-bench    # here, ~1 min, ~15 MiB
    run(command="python3 bench/gpu.py --run build/gpu-bench --out $OUT/gpu-raw.json "
                "--json $OUT/gpu.json", carry=["build/gpu-bench"], timeout_s=600)
    then copy $OUT's gpu.json to bench/results/gpu.json and run
    bench/render_performance.py.
If the cubins do not load there (driver older than ptxas), rebuild with
--format isa (PTX, compiled by the driver).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import _results  # noqa: E402  bench/_results.py: --json (standard library only)

SIZES = [784, 512, 512, 10]
MLP_PARAMS = (2, 3, 4, 5, 6, 7)      # argument indices of the weights and biases
SUITES = ("numeric_elementwise", "numeric_shape_reduce", "numeric_nn", "numeric_gradient")


# --- build (needs MLIR) -----------------------------------------------------------

def build(out: str, quick: bool, chip: str, fmt: str | None = None) -> None:
    import numpy as np

    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import gradir
    from mlp import build_mlp, differentiate

    os.makedirs(out, exist_ok=True)
    meta = {"chip": chip, "format": fmt, "quick": quick, "mlp": [], "gemm": None, "ops": [],
            "built": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        meta["commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    except OSError:
        pass

    from gradir.runtime.cuda import compile_cuda
    from gradir.runtime.jit import CompileOptions

    def export(module, name, keep_resident=()):
        t0 = time.perf_counter()
        exe = compile_cuda(module, CompileOptions("cuda", 3, chip, tuple(keep_resident)),
                           format=fmt)
        path = exe.export_library(os.path.join(out, name + ".so"))
        print(f"  {name}.so: {os.path.getsize(path) / 1e6:.2f} MB, {exe.format}, "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        return exe

    print("mlp")
    for batch in ([64] if quick else [256, 4096]):
        module = differentiate(build_mlp(batch, SIZES))
        export(module, f"mlp{batch}")
        export(module, f"mlp{batch}_resident", keep_resident=MLP_PARAMS)
        meta["mlp"].append(batch)

    print("gemm")
    n = 512 if quick else 4096
    t = f"tensor<{n}x{n}xf32>"
    gemm = gradir.parse(f"""
func.func @gemm(%a: {t}, %b: {t}) -> {t} {{
  %m = "rlx.matmul"(%a, %b) : ({t}, {t}) -> {t}
  return %m : {t}
}}
func.func @gemm_sum(%a: {t}, %b: {t}) -> tensor<f32> {{
  %m = "rlx.matmul"(%a, %b) : ({t}, {t}) -> {t}
  %s = "rlx.sum"(%m) : ({t}) -> tensor<f32>
  return %s : tensor<f32>
}}""")
    export(gemm, f"gemm{n}", keep_resident=(0, 1))
    meta["gemm"] = n

    print("ops")
    for suite in SUITES:
        for k, (title, module, cases) in enumerate(_collect_suites(suite)):
            if quick:
                cases = cases[:6]
            name = f"ops_{suite}_{k}"
            arrays = {}
            entries = []
            for i, (case, fn, inputs, rtol, atol) in enumerate(cases):
                want = gradir.interpret(module, fn, *inputs)
                for j, x in enumerate(inputs):
                    arrays[f"c{i}_in{j}"] = x
                for j, w in enumerate(_flat(want)):
                    arrays[f"c{i}_out{j}"] = np.asarray(w)
                entries.append({"name": f"{title}/{case}", "fn": fn, "n_in": len(inputs),
                                "n_out": len(list(_flat(want))), "rtol": rtol, "atol": atol})
            np.savez(os.path.join(out, name + ".npz"), **arrays)
            export(module, name)
            meta["ops"].append({"suite": name, "title": title, "cases": entries})
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    total = sum(os.path.getsize(os.path.join(out, p)) for p in os.listdir(out))
    print(f"wrote {out} ({total / 2 ** 20:.1f} MiB)")


def _collect_suites(suite: str):
    """``(title, module, cases)`` of every Suite of a numeric test file
    (captured instead of run; gradient suites differentiated), cases as
    ``(name, function, inputs, rtol, atol)``."""
    import runpy

    import numpy as np

    import gradir

    sys.path.insert(0, os.path.join(ROOT, "test", "Conversion", "Inputs"))
    import numeric_helpers

    suites = []
    original = numeric_helpers.Suite.run
    numeric_helpers.Suite.run = lambda self: suites.append(self)
    try:
        with open(os.devnull, "w") as null:
            stdout, sys.stdout = sys.stdout, null
            try:
                runpy.run_path(os.path.join(ROOT, "test", "Conversion", f"{suite}.py"),
                               run_name="__main__")
            finally:
                sys.stdout = stdout
    finally:
        numeric_helpers.Suite.run = original
    out = []
    for s in suites:
        module = s.module()
        suffix = ""
        if s.gradient:
            passes = ",".join(f"rlx-gradient{{func=case{i}}}" for i in range(len(s.cases)))
            gradir.run_pipeline(module, f"builtin.module({passes})")
            suffix = "_adjoint"
        cases = []
        for i, (name, _, inputs, rtol, atol) in enumerate(s.cases):
            dt = np.asarray(inputs[0]).dtype if inputs else np.dtype(np.float32)
            rt, at = numeric_helpers.TOLERANCES.get(dt, (2e-5, 2e-6))
            cases.append((name, f"case{i}{suffix}", inputs, rt if rtol is None else rtol,
                          at if atol is None else atol))
        out.append((s.title, module, cases))
    return out


# --- run (numpy + torch + the exported libraries) ----------------------------------

def timeit(fn, repeat: int) -> float:
    for _ in range(3):
        fn()
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def _load(path):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from gradir.runtime import load
    return load(path)


def numpy_mlp_step(x, labels, *params):
    """float64 forward + backward of the MLP: (loss, logits, grads...)."""
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from mlp import numpy_step          # numpy only: no MLIR needed here
    return numpy_step(x.astype(np.float64), labels, *[p.astype(np.float64) for p in params])


def init_params(sizes, seed=0):
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from mlp import init_params as mlp_init
    return mlp_init(sizes, np.float32, seed, bias=0.01)


def run_ops(d: str, meta: dict) -> dict:
    import numpy as np
    out = {"cases": 0, "failures": [], "max_abs_error": {}}
    for entry in meta["ops"]:
        suite = entry["suite"]
        lib = _load(os.path.join(d, f"{suite}.so"))
        data = np.load(os.path.join(d, f"{suite}.npz"))
        worst = 0.0
        for i, c in enumerate(entry["cases"]):
            inputs = [data[f"c{i}_in{j}"] for j in range(c["n_in"])]
            want = [data[f"c{i}_out{j}"] for j in range(c["n_out"])]
            got = lib[c["fn"]](*inputs)
            got = got if isinstance(got, tuple) else (got,)
            got = list(_flat(got))
            err, bad = 0.0, False
            for g, w in zip(got, want):
                g, w = np.asarray(g), np.asarray(w)
                if w.dtype.kind in "biu":
                    bad |= not np.array_equal(g, w)
                    continue
                diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
                finite = np.isfinite(w)
                if diff[finite].size:
                    err = max(err, float(diff[finite].max()))
                bad |= not np.allclose(g, w, rtol=c["rtol"], atol=c["atol"], equal_nan=True)
            out["cases"] += 1
            worst = max(worst, err)
            out["max_abs_error"][c["name"]] = err
            if bad:
                out["failures"].append(c["name"])
        print(f"  {entry['title']}: {len(entry['cases'])} cases, max abs error {worst:.3g}, "
              f"{sum(1 for c in entry['cases'] if c['name'] in out['failures'])} failing",
              flush=True)
    return out


def _flat(values):
    for v in values:
        if isinstance(v, tuple):
            yield from _flat(v)
        else:
            yield v


def _sync(torch, dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def run_mlp(d: str, meta: dict, repeat: int, device: str = "cuda") -> list[dict]:
    import numpy as np
    import torch
    rows = []
    dev = torch.device(device)
    for batch in meta["mlp"]:
        rng = np.random.default_rng(1)
        x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
        y = rng.integers(0, SIZES[-1], batch).astype(np.int64)
        params = init_params(SIZES)
        want = numpy_mlp_step(x, y, *params)
        plain = _load(os.path.join(d, f"mlp{batch}.so"))["main_adjoint"]
        resident_lib = _load(os.path.join(d, f"mlp{batch}_resident.so"))
        resident = resident_lib["main_adjoint"]
        got = plain(x, y, *params)
        err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
        got_r = resident(x, y, *params)
        err_r = max(float(np.max(np.abs(g - w))) for g, w in zip(got_r, want))
        resident_lib["main_adjoint_upload_resident"](*params)

        tp = [torch.from_numpy(p).to(dev).requires_grad_() for p in params]
        tx, ty = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)

        def torch_grads(xx, yy, ps):
            h = xx
            for i in range(3):
                h = h @ ps[2 * i] + ps[2 * i + 1]
                if i < 2:
                    h = torch.relu(h)
            loss = torch.nn.functional.nll_loss(torch.log_softmax(h, -1), yy)
            return (loss, h, *torch.autograd.grad(loss, ps))

        def torch_device():
            torch_grads(tx, ty, tp)
            _sync(torch, dev)

        def torch_numpy():
            ps = [torch.from_numpy(p).to(dev).requires_grad_() for p in params]
            res = torch_grads(torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev), ps)
            [r.detach().cpu().numpy() for r in res]

        tres = torch_grads(tx, ty, tp)
        err_t = max(float(np.max(np.abs(t.detach().cpu().numpy() - w)))
                    for t, w in zip(tres, want))
        times = {"gradir (numpy in/out)": timeit(lambda: plain(x, y, *params), repeat),
                 "gradir (params resident)": timeit(lambda: resident(x, y, *params), repeat),
                 "torch (device tensors)": timeit(torch_device, repeat),
                 "torch (numpy in/out)": timeit(torch_numpy, repeat)}
        row = {"workload": f"mlp{batch}", "max_abs_error": {"gradir": err,
                                                            "gradir resident": err_r,
                                                            "torch": err_t},
               "ms": {k: v * 1e3 for k, v in times.items()}}
        row["ratio"] = {
            "resident vs torch device": times["gradir (params resident)"]
            / times["torch (device tensors)"],
            "numpy in/out vs torch numpy in/out": times["gradir (numpy in/out)"]
            / times["torch (numpy in/out)"]}
        rows.append(row)
        print(f"  mlp{batch}: " + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in times.items())
              + f"; max errors gradir {err:.2g}, torch {err_t:.2g}", flush=True)
    return rows


def run_gemm(d: str, meta: dict, repeat: int, device: str = "cuda") -> dict:
    import numpy as np
    import torch
    dev = torch.device(device)
    n = meta["gemm"]
    lib = _load(os.path.join(d, f"gemm{n}.so"))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
    c = lib["gemm"](a, b)
    ref = (ta.double() @ tb.double()).cpu().numpy()
    err = float(np.max(np.abs(c - ref)))
    err_t = float(np.max(np.abs((ta @ tb).cpu().numpy() - ref)))
    s = lib["gemm_sum"](a, b)
    flops = 2 * n ** 3

    def torch_mm():
        ta @ tb
        _sync(torch, dev)

    def torch_mm_sum():
        (ta @ tb).sum()
        _sync(torch, dev)

    times = {"gradir sum(a@b) (resident)": timeit(lambda: lib["gemm_sum"](a, b), repeat),
             "torch (a@b).sum()": timeit(torch_mm_sum, repeat),
             "torch a@b": timeit(torch_mm, repeat)}
    row = {"workload": f"gemm{n}", "max_abs_error": {"gradir": err, "torch": err_t},
           "sum_error": float(abs(float(s) - ref.sum())),
           "ms": {k: v * 1e3 for k, v in times.items()},
           "tflops": {k: flops / v / 1e12 for k, v in times.items()},
           "ratio": times["gradir sum(a@b) (resident)"] / times["torch (a@b).sum()"]}
    print(f"  gemm{n}: " + ", ".join(f"{k} {v * 1e3:.3f} ms ({flops / v / 1e12:.1f} TFLOP/s)"
                                     for k, v in times.items())
          + f"; max error gradir {err:.2g}, torch {err_t:.2g}", flush=True)
    return row


def device_info() -> dict:
    import torch
    info = {"torch": torch.__version__, "cuda (torch)": torch.version.cuda,
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "python": sys.version.split()[0]}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True)
        info["nvidia-smi"] = smi.stdout.strip()
    except OSError:
        pass
    return info


def run(d: str, out: str | None, repeat: int, parts: list[str], device: str = "cuda",
        json_path: str | None = None) -> None:
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    results = {"meta": meta}
    if len(parts) > 1:
        # Each part in its own process: a CUDA fault in one does not take the others down.
        for part in parts:
            proc = subprocess.run([sys.executable, __file__, "--run", d, "--repeat", str(repeat),
                                   "--part", part, "--out", os.path.join(d, f".{part}.json"),
                                   "--torch-device", device])
            path = os.path.join(d, f".{part}.json")
            if proc.returncode != 0 or not os.path.exists(path):
                results[part] = {"error": f"exit status {proc.returncode}"}
                continue
            with open(path) as f:
                results[part] = json.load(f)[part]
    else:
        part = parts[0]
        print(part, flush=True)
        if part == "info":
            results[part] = device_info()
            print("  " + json.dumps(results[part]))
        elif part == "ops":
            results[part] = run_ops(d, meta)
        elif part == "mlp":
            results[part] = run_mlp(d, meta, repeat, device)
        elif part == "gemm":
            results[part] = run_gemm(d, meta, repeat, device)
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=1)
    if len(parts) > 1:
        print(summary(results))
    if json_path:
        save_tables(json_path, results, repeat)


def tables(results: dict) -> list[dict]:
    """The results of a run as bench/_results.py's tables (a part that
    failed is left out; save_tables notes it)."""
    out = []
    ops = results.get("ops", {})
    if "cases" in ops:
        worst = max(ops["max_abs_error"].values(), default=0.0)
        out.append({"title": "every case of the numeric conversion suites on the GPU, against "
                             "the reference interpreter",
                    "columns": ["cases", "failing", "max abs error"],
                    "formats": [None, None, ".3g"],
                    "rows": [[ops["cases"], len(ops["failures"]), worst]]})
    rows = []
    for row in results.get("mlp", []) if isinstance(results.get("mlp"), list) else []:
        ms = row["ms"]
        for label, g, t in (("params resident / device tensors", "gradir (params resident)",
                             "torch (device tensors)"),
                            ("numpy in/out, both", "gradir (numpy in/out)",
                             "torch (numpy in/out)")):
            rows.append([row["workload"], label, ms[g], ms[t], ms[t] / ms[g], None, None])
    g = results.get("gemm", {})
    if "ms" in g:
        gk, tk = "gradir sum(a@b) (resident)", "torch (a@b).sum()"
        rows.append([g["workload"], "sum(a@b), operands resident", g["ms"][gk], g["ms"][tk],
                     g["ms"][tk] / g["ms"][gk], g["tflops"][gk], g["tflops"][tk]])
    if rows:
        out.append({"title": "gradir against PyTorch CUDA eager, float32",
                    "columns": ["workload", "inputs", "gradir ms", "torch ms", "torch/gradir",
                                "gradir TFLOP/s", "torch TFLOP/s"],
                    "formats": [None, None, ".3f", ".3f", ".2f", ".1f", ".1f"],
                    "rows": rows})
    return out


def save_tables(path: str, results: dict, repeat: int) -> None:
    meta = results.get("meta", {})
    info = results.get("info", {})
    notes = [f"Device: {info.get('device')} ({info.get('nvidia-smi')}), torch "
             f"{info.get('torch')} (CUDA {info.get('cuda (torch)')}); kernels built for "
             f"{meta.get('chip')} ({meta.get('format') or 'cubin'})"
             + (", --quick sizes" if meta.get("quick") else "") + ".",
             f"Medians of {repeat} calls after 3 warm-up calls, each synchronised; "
             "torch/gradir > 1: gradir is faster."]
    failed = [part for part in ("info", "ops", "mlp", "gemm")
              if isinstance(results.get(part), dict) and "error" in results[part]]
    if failed:
        notes.append("Parts that failed: " + ", ".join(
            f"{p} ({results[p]['error']})" for p in failed) + ".")
    ops = results.get("ops", {})
    if ops.get("failures"):
        notes.append("Failing cases: " + ", ".join(ops["failures"][:20]) + ".")
    extra = {"gpu": info, "built": meta.get("built")}
    if _results.git_state()["commit"] is None:      # no checkout on the GPU machine
        extra["commit"] = meta.get("commit")
        extra["commit_of"] = "the build (bench/gpu.py --build)"
    _results.save_results(path, "gpu", tables(results), notes, extra=extra)


def summary(results: dict) -> str:
    lines = []
    info = results.get("info", {})
    lines.append(f"device: {info.get('device')} ({info.get('nvidia-smi')}), torch "
                 f"{info.get('torch')} (CUDA {info.get('cuda (torch)')})")
    ops = results.get("ops", {})
    if "cases" in ops:
        worst = max(ops["max_abs_error"].values(), default=0.0)
        lines.append(f"ops: {ops['cases']} cases, {len(ops['failures'])} failing "
                     f"{ops['failures'][:10]}, max abs error {worst:.3g}")
    lines.append("| workload | gradir ms | PyTorch ms | gradir/PyTorch |")
    lines.append("|---|---|---|---|")
    for row in results.get("mlp", []) if isinstance(results.get("mlp"), list) else []:
        ms = row["ms"]
        lines.append(f"| {row['workload']} (params resident vs device tensors) | "
                     f"{ms['gradir (params resident)']:.3f} | {ms['torch (device tensors)']:.3f} "
                     f"| {row['ratio']['resident vs torch device']:.2f} |")
        lines.append(f"| {row['workload']} (numpy in/out, both) | "
                     f"{ms['gradir (numpy in/out)']:.3f} | {ms['torch (numpy in/out)']:.3f} "
                     f"| {row['ratio']['numpy in/out vs torch numpy in/out']:.2f} |")
    g = results.get("gemm", {})
    if "ms" in g:
        lines.append(f"| {g['workload']} sum(a@b) | {g['ms']['gradir sum(a@b) (resident)']:.3f} "
                     f"| {g['ms']['torch (a@b).sum()']:.3f} | {g['ratio']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--build", metavar="DIR", help="compile and export the workloads")
    mode.add_argument("--run", metavar="DIR", help="run exported workloads (GPU machine)")
    p.add_argument("--quick", action="store_true", help="small sizes (build)")
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--format", choices=["bin", "isa", "fatbin"],
                   help="kernel binaries (build): bin = cubin (default when ptxas is "
                        "found), isa = PTX the driver compiles at load")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--part", action="append", choices=["info", "ops", "mlp", "gemm"])
    p.add_argument("--out", help="write the raw results as JSON")
    _results.add_json_option(p)
    p.add_argument("--torch-device", default="cuda", help=argparse.SUPPRESS)  # testing
    args = p.parse_args(argv)
    if args.build:
        build(args.build, args.quick, args.chip, args.format)
    else:
        run(args.run, args.out, args.repeat, args.part or ["info", "ops", "mlp", "gemm"],
            args.torch_device, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

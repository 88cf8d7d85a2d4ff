"""gradir on an NVIDIA GPU against numpy (errors) and PyTorch CUDA (speed).

Two halves, because MLIR does not travel to the GPU machine:

    build/venv/bin/python bench/gpu.py --build DIR [--quick] [--parts a,b] [--chip sm_90]
                                       [--format isa]
        here (MLIR, ptxas): compiles every workload for the GPU and exports
        shared libraries (cubins embedded) plus inputs, weights and expected
        results to DIR (about 30 MiB; the CUDA runtime library,
        libmlir_cuda_runtime.so, gradir's or MLIR's with a libLLVM.so
        stand-in, goes next to them); meta.json records what was built,
        the commit, the runtime and each library's kernel launches per
        call (gradir.conversion.gpu.launches, counted at the kernels stage);
    python3 bench/gpu.py --run DIR [--parts a,b] [--repeat N] [--out raw.json] [--json PATH]
        on the GPU machine with python3 + numpy + torch only: loads the
        libraries with gradir.runtime.load (numpy + ctypes), checks every
        result and times gradir against PyTorch side by side.  Each part
        (workload) runs in its own process under a time limit
        (--part-timeout, default 200 s; --time-limit, default 340 s, for
        the whole run: later parts are skipped), so a CUDA fault or a hang
        in one loses that part only; the results are written after every
        part (and a part's partial results survive its time limit); --out
        writes the raw results, --json the tables with the machine, the
        device, date, commit and command (bench/_results.py), for
        bench/results/gpu.json and docs/performance.md.

Parts (--parts, comma-separated; default all, in this order): info, ops,
mlp, gemm, resnet, transformer.  Workloads (float32; gemm, resnet and
transformer also in TF32 and bf16, below):
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
    and a @ b alone); the full product is checked once against torch;
    then in every precision (bench/gpu_precision.py): gradir's library
    built with precision="fp32", "tf32" and compute_dtype="bf16" against
    torch.matmul with allow_tf32 off, on, and on bf16 operands (cuBLAS
    bf16; torch.autocast on the f32 operands too), and a "bf16 program"
    (the operands cast to bf16 by rlx.astype in the program, a bf16
    matmul; bf16 arrays cannot cross the numpy calling convention)
    against a.bfloat16() @ b.bfloat16(), both timing the casts; each
    side's error is max |x - float64| / max |float64| against a float64
    product on the GPU, and the printed ratio is gradir's throughput over
    torch's with the targets beside (>= 0.9 fp32, 0.8 TF32, 0.7
    bf16; errors within 1e-2 TF32, 3e-2 bf16);
  * resnet: the CIFAR ResNet training step of bench/cnn.py (build_model:
    conv stem, BatchNorm in training mode, max pool, two residual blocks,
    average pool, dense, cross_entropy), batch 128 of 3x32x32;
  * transformer: nn.TransformerEncoderLayer(256, 4, 1024, dropout=0,
    batch_first=True, norm_first=True), mean over the sequence,
    Linear(256, 10), cross_entropy; batch 32, sequence 128.
  For resnet and transformer the build half imports the PyTorch model
  (gradir.frontends.torch.import_module), differentiates it with respect to
  every parameter (rlx-gradient) and exports @main_adjoint with the
  parameters resident (keep_resident); it saves the inputs and the model's
  state_dict (numpy) so the run half rebuilds the same model on the same
  weights.  The run half checks gradir's loss and gradients against PyTorch
  in float64 on the GPU (error: max |gradir - torch64| / max |torch64| per
  tensor, the worst tensor), and times gradir's step (parameters resident;
  the images/tokens and labels copied in, the loss and gradients copied
  out; and a second library with the inputs and labels resident too, so
  that only the loss and gradients are copied), PyTorch eager float32 with
  TF32 off and with TF32 on (matmuls and cuDNN convolutions), and
  torch.compile(mode="reduce-overhead") (TF32 off; its compile time is
  recorded; if it fails there, the error is recorded and the rest goes
  on).  The build half also exports the step with precision="tf32" and
  with compute_dtype="bf16" (resnet_tf32.so, resnet_bf16.so, ...;
  parameters resident), and the run half times and checks them against
  PyTorch eager with TF32 on and under torch.autocast("cuda",
  dtype=torch.bfloat16), each side's loss and gradients against the
  float64 reference (a row per precision; bf16's target: no slower than
  autocast).  JAX is not timed: the GPU machine was not meant to have it
  (the info part records whether it imports there and which devices it
  sees).
  A kernel-time profile of one step of gradir and one of PyTorch eager
  comes from torch.profiler (CUPTI also records the kernels gradir's
  library launches through the driver in the same process): kernels per
  step, kernel time per step, the top 10 kernels by time.  Launches per
  call (the build's static count, by kernel kind) are printed beside.
Timings: median of --repeat calls (default per part: mlp 50, gemm 20,
resnet and transformer 20; at most 15 s of calls per timing) after 3
warm-up calls, each call synchronised (gradir's calls return after a
stream synchronise).  Printed ratios are gradir time / PyTorch time (< 1:
gradir is faster); the --json tables give PyTorch / gradir like the other
benches.

On a GPU machine reached through the device tool (build/ is git-ignored):
    build/venv/bin/python bench/gpu.py --build build/gpu-bench
        # here: 4 min on a quiet machine (6 to 11 on a loaded one), ~31 MiB
    run(command="python3 bench/gpu.py --run build/gpu-bench --out $OUT/gpu-raw.json "
                "--json $OUT/gpu.json", carry=["build/gpu-bench"], timeout_s=420)
    (3 to 5 minutes on an H200 before the TF32 and bf16 rows were added,
    torch.compile's compilations included, at most --time-limit 340 s;
    --parts info,resnet,transformer for the two training steps alone; the
    --quick build ran in 75 s there), then copy
    $OUT's gpu.json to bench/results/gpu.json and run
    bench/render_performance.py.
If the cubins do not load there (driver older than ptxas), rebuild with
--format isa (PTX, compiled by the driver).  --quick builds small shapes
and a few cases of each suite in 30 s (test/bench/gpu_build.py builds it
and runs it on a fake CUDA driver, so that neither half rots).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import _results  # noqa: E402  bench/_results.py: --json (standard library only)
import gpu_precision  # noqa: E402  the fp32/TF32/bf16 rows (standard library at import)

SIZES = [784, 512, 512, 10]
MLP_PARAMS = (2, 3, 4, 5, 6, 7)      # argument indices of the weights and biases
SUITES = ("numeric_elementwise", "numeric_shape_reduce", "numeric_nn", "numeric_gradient")
PARTS = ("info", "ops", "mlp", "gemm", "resnet", "transformer")
MODELS = ("resnet", "transformer")
REPEAT = {"mlp": 50, "gemm": 20, "resnet": 20, "transformer": 20}
MAX_TIMING_S = 15.0                  # per timing: stop after this many seconds of calls
# The models' shapes: full and --quick.
MODEL_CONFIG = {
    "resnet": {False: {"batch": 128, "image": 32}, True: {"batch": 4, "image": 8}},
    "transformer": {False: {"batch": 32, "seq": 128, "d_model": 256, "heads": 4, "ff": 1024},
                    True: {"batch": 2, "seq": 8, "d_model": 32, "heads": 2, "ff": 64}},
}
CLASSES = 10
GRAD_TOLERANCE = 2e-3                # max |gradir - torch float64| / max |torch float64|


# --- the models (PyTorch; both halves) -----------------------------------------------

def make_model(torch, name: str, cfg: dict):
    """The PyTorch model of workload ``name`` (seeded; its weights are
    replaced by the saved state_dict in the run half)."""
    if name == "resnet":
        from cnn import build_model      # bench/cnn.py: standard library at import
        return build_model(torch)
    nn = torch.nn

    class EncoderStep(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.TransformerEncoderLayer(cfg["d_model"], cfg["heads"], cfg["ff"],
                                                      dropout=0.0, batch_first=True,
                                                      norm_first=True)
            self.head = nn.Linear(cfg["d_model"], CLASSES)

        def forward(self, x, labels):
            return nn.functional.cross_entropy(self.head(self.encoder(x).mean(dim=1)), labels)

    torch.manual_seed(0)
    return EncoderStep().train()


def model_inputs(torch, name: str, cfg: dict):
    g = torch.Generator().manual_seed(1)
    if name == "resnet":
        x = torch.randn(cfg["batch"], 3, cfg["image"], cfg["image"], generator=g)
    else:
        x = torch.randn(cfg["batch"], cfg["seq"], cfg["d_model"], generator=g)
    y = torch.randint(0, CLASSES, (cfg["batch"],), generator=g)
    return x, y


# --- build (needs MLIR) -----------------------------------------------------------

def build(out: str, quick: bool, chip: str, fmt: str | None = None,
          parts=PARTS) -> int:
    """Compiles and exports ``parts``; returns the number that failed (each
    is recorded in meta.json's ``build_errors`` and the others go on)."""
    os.makedirs(out, exist_ok=True)
    meta = {"chip": chip, "format": fmt, "quick": quick, "mlp": [], "gemm": None, "ops": [],
            "models": {}, "launches": {}, "build_errors": {}, "parts": list(parts),
            "built": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        meta["commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    old = os.path.join(out, "meta.json")
    if os.path.exists(old):
        os.remove(old)                   # a failed build leaves no stale metadata
    builders = {"mlp": _build_mlp, "gemm": _build_gemm, "ops": _build_ops,
                "resnet": _build_model, "transformer": _build_model}
    t0 = time.perf_counter()
    for part in parts:
        if part not in builders:
            continue
        print(part, flush=True)
        try:
            builders[part](out, meta, quick, chip, fmt, part)
        except Exception as err:  # noqa: BLE001 - recorded; the other parts go on
            traceback.print_exc()
            meta["build_errors"][part] = f"{type(err).__name__}: {str(err)[:2000]}"
            print(f"  FAILED: {part}: {type(err).__name__}: {str(err)[:300]}", flush=True)
    meta["cuda_runtime"] = _runtime_kind(out)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    total = sum(os.path.getsize(os.path.join(out, p)) for p in os.listdir(out)
                if os.path.isfile(os.path.join(out, p)))
    print(f"wrote {out} ({total / 2 ** 20:.1f} MiB) in {time.perf_counter() - t0:.0f} s; "
          f"failed parts: {sorted(meta['build_errors']) or 'none'}")
    return len(meta["build_errors"])


def _runtime_kind(out: str) -> str:
    """Which CUDA runtime the libraries in ``out`` use: "gradir" (its own,
    gradir.runtime.cuda_runtime, kernel launches replayed as CUDA graphs)
    or "mlir" (MLIR's libmlir_cuda_runtime.so)."""
    try:
        from gradir.runtime import cuda_runtime
        return ("gradir" if cuda_runtime.is_current(os.path.join(out, cuda_runtime.LIBRARY_NAME))
                else "mlir")
    except ImportError:
        return "mlir"


def _export(out, name, module, chip, fmt, keep_resident=(), functions=None, meta=None,
            count=(), precision="fp32", compute_dtype=None):
    """Compiles ``module`` for the GPU (``precision`` and ``compute_dtype``
    as gradir.compile's), exports DIR/name.so and records the launches per
    call of the functions ``count`` in meta["launches"][name]."""
    from gradir.conversion.gpu.launches import count_lowered
    from gradir.runtime.cuda import compile_cuda
    from gradir.runtime.jit import CompileOptions

    t0 = time.perf_counter()
    options = CompileOptions("cuda", 3, chip, tuple(keep_resident), precision=precision,
                             compute_dtype=compute_dtype)
    exe = compile_cuda(module, options, format=fmt, functions=functions)
    path = exe.export_library(os.path.join(out, name + ".so"))
    if count and meta is not None:
        meta["launches"][name] = count_lowered(module, list(count), chip=chip,
                                               keep_resident=tuple(keep_resident),
                                               precision=precision,
                                               compute_dtype=compute_dtype)
    launches = ", ".join(f"@{f} {d['launches']} launches" for f, d in
                         (meta or {}).get("launches", {}).get(name, {}).items())
    arithmetic = (f"compute_dtype={compute_dtype}, " if compute_dtype else
                  f"precision={precision}, " if precision != "fp32" else "")
    print(f"  {name}.so: {os.path.getsize(path) / 1e6:.2f} MB, {arithmetic}{exe.format}, "
          f"{time.perf_counter() - t0:.1f} s" + (f"; {launches}" if launches else ""),
          flush=True)
    return exe


def _build_mlp(out, meta, quick, chip, fmt, part):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from mlp import build_mlp, differentiate
    for batch in ([64] if quick else [256, 4096]):
        module = differentiate(build_mlp(batch, SIZES))
        _export(out, f"mlp{batch}", module, chip, fmt, meta=meta, count=["main_adjoint"])
        _export(out, f"mlp{batch}_resident", module, chip, fmt, keep_resident=MLP_PARAMS,
                meta=meta, count=["main_adjoint"])
        meta["mlp"].append(batch)


def _build_gemm(out, meta, quick, chip, fmt, part):
    import gradir
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
    _export(out, f"gemm{n}", gemm, chip, fmt, keep_resident=(0, 1), meta=meta,
            count=["gemm", "gemm_sum"])
    meta["gemm"] = n
    gpu_precision.build_gemm(out, meta, gemm, n, chip, fmt, _export)


def _build_ops(out, meta, quick, chip, fmt, part):
    import numpy as np

    import gradir
    for suite in SUITES:
        for k, (title, module, cases) in enumerate(_collect_suites(suite)):
            if quick:
                if k > 0:
                    continue             # the first suite of each file
                cases = cases[:4]
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
            _export(out, name, module, chip, fmt,
                    functions=[c[1] for c in cases] if quick else None)
            meta["ops"].append({"suite": name, "title": title, "cases": entries})


def _build_model(out, meta, quick, chip, fmt, part):
    import numpy as np
    import torch

    import gradir
    from gradir.frontends.torch import import_module

    cfg = MODEL_CONFIG[part][quick]
    model = make_model(torch, part, cfg)
    x, y = model_inputs(torch, part, cfg)
    names = [n for n, _ in model.named_parameters()]
    t0 = time.perf_counter()
    module = import_module(model, (x, y))
    wrt = ",".join(str(i) for i in range(2, 2 + len(names)))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    print(f"  imported and differentiated in {time.perf_counter() - t0:.1f} s "
          f"({len(names)} parameters, "
          f"{sum(p.numel() for p in model.parameters()):,} weights)", flush=True)
    resident = tuple(range(2, 2 + len(names)))
    _export(out, part, module, chip, fmt, keep_resident=resident, functions=["main_adjoint"],
            meta=meta, count=["main_adjoint"])
    # The same step with the inputs and labels resident too (as PyTorch's
    # device tensors): only the loss and the gradients are copied per call.
    _export(out, part + "_inputs_resident", module, chip, fmt, keep_resident=(0, 1) + resident,
            functions=["main_adjoint"], meta=meta, count=["main_adjoint"])
    arrays = {"x": x.numpy(), "y": y.numpy()}
    arrays.update({"state." + k: v.detach().numpy() for k, v in model.state_dict().items()})
    np.savez(os.path.join(out, part + ".npz"), **arrays)
    meta["models"][part] = {"config": cfg, "parameters": names, "library": part + ".so",
                            "library_inputs_resident": part + "_inputs_resident.so",
                            "weights": sum(p.numel() for p in model.parameters())}
    gpu_precision.build_model(out, meta, part, module, resident, chip, fmt, _export)


def _collect_suites(suite: str):
    """``(title, module, cases)`` of every Suite of a numeric test file
    (captured instead of run; gradient suites differentiated), cases as
    ``(name, function, inputs, rtol, atol)``."""
    import runpy

    import numpy as np

    import gradir

    sys.path.insert(0, os.path.join(ROOT, "test", "conversion", "Inputs"))
    import numeric_helpers

    suites = []
    original = numeric_helpers.Suite.run
    numeric_helpers.Suite.run = lambda self: suites.append(self)
    try:
        with open(os.devnull, "w") as null:
            stdout, sys.stdout = sys.stdout, null
            try:
                runpy.run_path(os.path.join(ROOT, "test", "conversion", "cpu", f"{suite}.py"),
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

def timeit(fn, repeat: int, max_s: float = MAX_TIMING_S) -> float:
    for _ in range(3):
        fn()
    runs = []
    start = time.perf_counter()
    while len(runs) < repeat and (len(runs) < 3 or time.perf_counter() - start < max_s):
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


def run_ops(d: str, meta: dict, repeat: int, device: str, save) -> dict:
    import numpy as np
    out = {"cases": 0, "failures": [], "max_abs_error": {}, "errors": {}}
    for entry in meta["ops"]:
        suite = entry["suite"]
        try:
            lib = _load(os.path.join(d, f"{suite}.so"))
            data = np.load(os.path.join(d, f"{suite}.npz"))
        except Exception as err:  # noqa: BLE001
            out["errors"][suite] = f"{type(err).__name__}: {err}"
            print(f"  {entry['title']}: cannot load: {err}", flush=True)
            continue
        worst = 0.0
        for i, c in enumerate(entry["cases"]):
            inputs = [data[f"c{i}_in{j}"] for j in range(c["n_in"])]
            want = [data[f"c{i}_out{j}"] for j in range(c["n_out"])]
            try:
                got = lib[c["fn"]](*inputs)
            except Exception as err:  # noqa: BLE001
                out["cases"] += 1
                out["failures"].append(c["name"])
                out["errors"][c["name"]] = f"{type(err).__name__}: {err}"
                continue
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
        save(out)
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


def _launches(meta: dict, lib: str, fn: str):
    return meta.get("launches", {}).get(lib, {}).get(fn, {}).get("launches")


def run_mlp(d: str, meta: dict, repeat: int, device: str, save) -> list[dict]:
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
               "ms": {k: v * 1e3 for k, v in times.items()},
               "launches": _launches(meta, f"mlp{batch}_resident", "main_adjoint")}
        row["ratio"] = {
            "resident vs torch device": times["gradir (params resident)"]
            / times["torch (device tensors)"],
            "numpy in/out vs torch numpy in/out": times["gradir (numpy in/out)"]
            / times["torch (numpy in/out)"]}
        rows.append(row)
        save(rows)
        print(f"  mlp{batch}: " + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in times.items())
              + f"; max errors gradir {err:.2g}, torch {err_t:.2g}; "
              f"{row['launches']} launches per call", flush=True)
    return rows


def run_gemm(d: str, meta: dict, repeat: int, device: str, save) -> dict:
    import numpy as np
    import torch
    dev = torch.device(device)
    n = meta["gemm"]
    lib = _load(os.path.join(d, f"gemm{n}.so"))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
    torch.backends.cuda.matmul.allow_tf32 = False
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
           "ratio": times["gradir sum(a@b) (resident)"] / times["torch (a@b).sum()"],
           "launches": _launches(meta, f"gemm{n}", "gemm_sum")}
    print(f"  gemm{n}: " + ", ".join(f"{k} {v * 1e3:.3f} ms ({flops / v / 1e12:.1f} TFLOP/s)"
                                     for k, v in times.items())
          + f"; max error gradir {err:.2g}, torch {err_t:.2g}", flush=True)
    del ref, c
    save(row)

    # fp32, TF32 and bf16 side by side (bench/gpu_precision.py); the fp32
    # row reuses the timings above.
    def save_precision(value):
        row["precision"] = value
        save(row)
    fp32 = {"lib": lib, "ms": {"gradir": times["gradir sum(a@b) (resident)"] * 1e3,
                               "torch": times["torch (a@b).sum()"] * 1e3,
                               "torch a@b": times["torch a@b"] * 1e3}}
    gpu_precision.run_gemm(sys.modules[__name__], torch, d, meta, n, a, b, ta, tb, repeat,
                           fp32, save_precision)
    return row


def _ms(value) -> str:
    return "n/a" if value is None else f"{value:.3f} ms"


def _tf32(torch, on: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def _scaled_error(got, want) -> float:
    import numpy as np
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    return float(np.max(np.abs(got - want))) / (scale or 1.0) if want.size else 0.0


def kernel_profile(torch, fn, calls: int = 3) -> dict:
    """Kernels that ``calls`` calls of ``fn`` ran, from torch.profiler
    (CUPTI: every kernel of the process's CUDA context, those gradir's
    library launches through the driver included), per call."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    kernels, copies = {}, {"n": 0, "us": 0.0}
    for e in prof.events():
        if str(getattr(e, "device_type", "")).split(".")[-1] != "CUDA":
            continue
        us = e.time_range.elapsed_us()
        name = e.name
        if name.lower().startswith(("memcpy", "memset")):
            copies["n"] += 1
            copies["us"] += us
            continue
        k = kernels.setdefault(name, [0, 0.0])
        k[0] += 1
        k[1] += us
    total = sum(v[1] for v in kernels.values())
    top = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:10]
    return {"kernels_per_call": sum(v[0] for v in kernels.values()) / calls,
            "kernel_ms_per_call": total / calls / 1e3,
            "distinct_kernels": len(kernels),
            "copies_per_call": copies["n"] / calls,
            "copy_ms_per_call": copies["us"] / calls / 1e3,
            "top": [{"kernel": name[:120], "calls": n / calls, "ms": us / calls / 1e3,
                     "share": us / total if total else 0.0} for name, (n, us) in top]}


def run_model(d: str, meta: dict, repeat: int, device: str, save, name: str,
              compile_torch: bool = True) -> dict:
    import numpy as np
    import torch
    info = meta["models"][name]
    cfg = info["config"]
    dev = torch.device(device)
    row = {"workload": name, "config": cfg, "launches": _launches(meta, name, "main_adjoint"),
           "launch_breakdown": meta.get("launches", {}).get(name, {}).get("main_adjoint"),
           "ms": {}, "errors": {}}
    data = np.load(os.path.join(d, f"{name}.npz"))
    x, y = data["x"], data["y"]
    model = make_model(torch, name, cfg)
    model.load_state_dict({k[len("state."):]: torch.from_numpy(data[k].copy())
                           for k in data.files if k.startswith("state.")})
    model.to(dev).train()
    params = list(model.parameters())
    names = [n for n, _ in model.named_parameters()]
    assert names == info["parameters"], "parameter order differs from the build's"
    args = [x, y] + [p.detach().cpu().numpy().copy() for p in params]

    # gradir: the first call uploads the parameters, later calls keep them.
    lib = _load(os.path.join(d, info["library"]))
    step = lib["main_adjoint"]
    t0 = time.perf_counter()
    got = step(*args)
    row["ms"]["gradir first call"] = (time.perf_counter() - t0) * 1e3
    got = list(_flat(got if isinstance(got, tuple) else (got,)))
    assert len(got) == 1 + len(params), f"{len(got)} results for {len(params)} parameters"

    # float64 reference on the device (a copy of the model).
    import copy
    m64 = copy.deepcopy(model).double()
    xd = torch.from_numpy(x).to(dev)
    yd = torch.from_numpy(y).to(dev)
    loss64 = m64(xd.double(), yd)
    want = [loss64] + list(torch.autograd.grad(loss64, list(m64.parameters())))
    want = [w.detach().cpu().numpy() for w in want]
    del m64
    errs = [_scaled_error(g, w) for g, w in zip(got, want)]
    worst = int(np.argmax(errs))
    row["max_error"] = {"gradir": max(errs), "gradir loss": errs[0],
                    "gradir worst tensor": (["loss"] + names)[worst]}
    _tf32(torch, False)
    loss32 = model(xd, yd)
    t32 = [loss32] + list(torch.autograd.grad(loss32, params))
    row["max_error"]["torch fp32"] = max(_scaled_error(t.detach().cpu().numpy(), w)
                                     for t, w in zip(t32, want))
    row["ok"] = bool(max(errs) <= GRAD_TOLERANCE)
    print(f"  {name}: loss gradir {float(np.asarray(got[0])):.6f} torch64 "
          f"{float(want[0]):.6f}; max scaled error gradir {max(errs):.2g} "
          f"({row['max_error']['gradir worst tensor']}), torch fp32 "
          f"{row['max_error']['torch fp32']:.2g}: {'ok' if row['ok'] else 'FAILED'}", flush=True)
    save(row)

    def torch_step(m=model):
        torch.autograd.grad(m(xd, yd), params)
        _sync(torch, dev)

    def gradir_step():
        step(*args)

    row["ms"]["gradir"] = timeit(gradir_step, repeat) * 1e3
    save(row)
    if info.get("library_inputs_resident"):
        try:
            lib_r = _load(os.path.join(d, info["library_inputs_resident"]))
            step_r = lib_r["main_adjoint"]
            got_r = list(_flat(step_r(*args)))
            row["max_error"]["gradir inputs resident"] = max(
                _scaled_error(g, w) for g, w in zip(got_r, want))
            row["ms"]["gradir inputs resident"] = timeit(lambda: step_r(*args), repeat) * 1e3
        except Exception as err:  # noqa: BLE001
            row["errors"]["gradir inputs resident"] = f"{type(err).__name__}: {err}"
        save(row)
    _tf32(torch, False)
    row["ms"]["torch eager fp32"] = timeit(torch_step, repeat) * 1e3
    _tf32(torch, True)
    row["ms"]["torch eager tf32"] = timeit(torch_step, repeat) * 1e3
    _tf32(torch, False)
    print(f"  {name}: gradir {row['ms']['gradir']:.3f} ms ({row['launches']} launches per "
          f"call; inputs resident too: {_ms(row['ms'].get('gradir inputs resident'))}), "
          f"torch eager fp32 {row['ms']['torch eager fp32']:.3f} ms, tf32 "
          f"{row['ms']['torch eager tf32']:.3f} ms", flush=True)
    save(row)
    # TF32 and bf16 side by side (bench/gpu_precision.py).
    gpu_precision.run_model(sys.modules[__name__], torch, row, d, meta, info, model, params,
                            names, xd, yd, args, want, got, repeat, save)
    if row["launch_breakdown"]:
        b = row["launch_breakdown"]
        print(f"  {name}: gradir per call (static count): {b['launches']} launches "
              f"{b['kinds']}, {b['memcpy']} copies, {b['memset']} memsets", flush=True)

    if dev.type == "cuda":
        for label, fn in (("gradir", gradir_step), ("torch eager fp32", torch_step)):
            try:
                row.setdefault("profile", {})[label] = kernel_profile(torch, fn)
            except Exception as err:  # noqa: BLE001
                row["errors"][f"profile {label}"] = f"{type(err).__name__}: {err}"
        for label, p in row.get("profile", {}).items():
            print(f"  {name} {label}: {p['kernels_per_call']:.0f} kernels, "
                  f"{p['kernel_ms_per_call']:.3f} ms kernel time per step "
                  f"(copies {p['copies_per_call']:.0f}, {p['copy_ms_per_call']:.3f} ms)",
                  flush=True)
            for k in p["top"]:
                print(f"      {k['ms']:8.3f} ms {k['share'] * 100:5.1f}% x{k['calls']:.0f} "
                      f"{k['kernel'][:90]}", flush=True)
        save(row)

    if compile_torch:
        try:
            import torch._dynamo
            torch._dynamo.reset()
            compiled = torch.compile(model, mode="reduce-overhead")
            t0 = time.perf_counter()
            torch_step(compiled)
            torch_step(compiled)
            row["compile_s"] = time.perf_counter() - t0
            row["ms"]["torch.compile reduce-overhead"] = timeit(
                lambda: torch_step(compiled), repeat) * 1e3
            print(f"  {name}: torch.compile(mode='reduce-overhead') "
                  f"{row['ms']['torch.compile reduce-overhead']:.3f} ms "
                  f"(compiled in {row['compile_s']:.0f} s)", flush=True)
        except Exception as err:  # noqa: BLE001 - recorded; the rest goes on
            row["errors"]["torch.compile"] = f"{type(err).__name__}: {str(err)[:500]}"
            print(f"  {name}: torch.compile failed: {type(err).__name__}: "
                  f"{str(err)[:300]}", flush=True)
        save(row)
    return row


def _jax_info() -> str:
    """JAX on this machine: its version and devices, or why not (no JAX
    rows either way: the GPU machine was not meant to have it)."""
    import importlib.util
    if importlib.util.find_spec("jax") is None:
        return "not installed on this machine (no JAX rows)"
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        return (f"jax {jax.__version__} importable, devices "
                f"{[str(d) for d in jax.devices()]} (not timed here)")
    except Exception as err:  # noqa: BLE001
        return f"not usable on this machine ({type(err).__name__}: {str(err)[:150]})"


def device_info() -> dict:
    import importlib.util

    import torch
    info = {"torch": torch.__version__, "cuda (torch)": torch.version.cuda,
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "python": sys.version.split()[0],
            "jax": _jax_info(),
            "triton": "importable" if importlib.util.find_spec("triton") else "not installed"}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True)
        info["nvidia-smi"] = smi.stdout.strip()
    except OSError:
        pass
    return info


def _run_part(part: str, d: str, meta: dict, repeat: int | None, device: str, save,
              compile_torch: bool):
    rep = repeat or REPEAT.get(part, 20)
    if part == "info":
        return device_info()
    if part in meta.get("build_errors", {}):
        return {"error": "not built: " + meta["build_errors"][part][:300]}
    if part == "ops":
        return run_ops(d, meta, rep, device, save)
    if part == "mlp":
        return run_mlp(d, meta, rep, device, save)
    if part == "gemm":
        return run_gemm(d, meta, rep, device, save)
    if part in MODELS:
        if part not in meta.get("models", {}):
            return {"error": "not built"}
        return run_model(d, meta, rep, device, save, part, compile_torch)
    raise ValueError(f"unknown part {part!r}")


def run(d: str, out: str | None, repeat: int | None, parts: list[str], device: str = "cuda",
        json_path: str | None = None, part_timeout: float = 200.0,
        compile_torch: bool = True, time_limit: float = 340.0) -> None:
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    parts = [p for p in parts if p == "info" or p in meta.get("parts", PARTS)]
    results = {"meta": meta}
    if len(parts) == 1 and out and os.environ.get("GRADIR_BENCH_CHILD"):
        # One part in this process (a child of the loop below): saves as it goes.
        part = parts[0]

        last = {}

        def save(value):
            last["value"] = value
            _write_json(out, {part: value})
        try:
            value = _run_part(part, d, meta, repeat, device, save, compile_torch)
        except Exception as err:  # noqa: BLE001 - recorded beside what was saved
            traceback.print_exc()
            message = f"{type(err).__name__}: {str(err)[:500]}"
            value = last.get("value")
            if isinstance(value, dict):
                value.setdefault("errors", {})["run"] = message
            elif not isinstance(value, list):
                value = {"error": message}
        save(value)
        return
    start = time.perf_counter()
    # Each part in its own process: a CUDA fault or a hang in one does not
    # take the others down; what it saved before its time limit is kept.
    for part in parts:
        print(part, flush=True)
        path = os.path.join(d, f".{part}.json")
        if os.path.exists(path):
            os.remove(path)
        cmd = [sys.executable, os.path.abspath(__file__), "--run", d, "--parts", part,
               "--out", path, "--torch-device", device]
        if repeat:
            cmd += ["--repeat", str(repeat)]
        if not compile_torch:
            cmd.append("--no-compile")
        status = None
        left = time_limit - (time.perf_counter() - start)
        if left < 10:
            results[part] = {"error": f"skipped: the run's time limit ({time_limit:.0f} s)"}
            print(f"  skipped: {results[part]['error']}", flush=True)
            continue
        try:
            proc = subprocess.run(cmd, timeout=min(part_timeout, left),
                                  env=dict(os.environ, GRADIR_BENCH_CHILD="1"))
            status = proc.returncode
        except subprocess.TimeoutExpired:
            status = f"time limit ({min(part_timeout, left):.0f} s)"
        value = None
        if os.path.exists(path):
            with open(path) as f:
                value = json.load(f).get(part)
        if value is None:
            value = {"error": f"exit status {status}"}
        elif status not in (0,) and isinstance(value, dict):
            value.setdefault("errors", {})["process"] = f"exit status {status}"
        elif status not in (0,):
            value = {"error": f"exit status {status}", "partial": value}
        results[part] = value
        if out:
            _write_json(out, results)
        if json_path:
            save_tables(json_path, results, repeat)
        print(f"  ({part}: {time.perf_counter() - start:.0f} s so far)", flush=True)
    print(summary(results))


def _write_json(path: str, value) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1)
    os.replace(tmp, path)


def _model_rows(results: dict) -> list[dict]:
    return [results[m] for m in MODELS
            if isinstance(results.get(m), dict) and "ms" in results[m]]


def tables(results: dict) -> list[dict]:
    """The results of a run as bench/_results.py's tables (a part that
    failed is left out; save_tables notes it)."""
    out = []
    ops = results.get("ops", {})
    if isinstance(ops, dict) and "cases" in ops:
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
    if isinstance(g, dict) and "ms" in g:
        gk, tk = "gradir sum(a@b) (resident)", "torch (a@b).sum()"
        rows.append([g["workload"], "sum(a@b), operands resident", g["ms"][gk], g["ms"][tk],
                     g["ms"][tk] / g["ms"][gk], g["tflops"][gk], g["tflops"][tk]])
    for m in _model_rows(results):
        ms = m["ms"]
        if "gradir" in ms and "torch eager fp32" in ms:
            rows.append([f"{m['workload']} step", "params resident / device tensors",
                         ms["gradir"], ms["torch eager fp32"],
                         ms["torch eager fp32"] / ms["gradir"], None, None])
        if "gradir inputs resident" in ms and "torch eager fp32" in ms:
            rows.append([f"{m['workload']} step", "params and inputs resident / device tensors",
                         ms["gradir inputs resident"], ms["torch eager fp32"],
                         ms["torch eager fp32"] / ms["gradir inputs resident"], None, None])
    if rows:
        out.append({"title": "gradir against PyTorch CUDA eager, float32",
                    "columns": ["workload", "inputs", "gradir ms", "torch ms", "torch/gradir",
                                "gradir TFLOP/s", "torch TFLOP/s"],
                    "formats": [None, None, ".3f", ".3f", ".2f", ".1f", ".1f"],
                    "rows": rows})
    steps = []
    for m in _model_rows(results):
        ms, cfg = m["ms"], m.get("config", {})
        comp = ms.get("torch.compile reduce-overhead")
        steps.append([m["workload"], cfg.get("batch"), m.get("launches"), ms.get("gradir"),
                      ms.get("gradir inputs resident"),
                      ms.get("torch eager fp32"), ms.get("torch eager tf32"), comp,
                      _ratio(ms.get("torch eager fp32"), ms.get("gradir")),
                      _ratio(comp, ms.get("gradir")),
                      m.get("max_error", {}).get("gradir"),
                      m.get("max_error", {}).get("torch fp32")])
    if steps:
        out.append({"title": "training steps (loss and every parameter gradient): gradir "
                             "against PyTorch eager and torch.compile",
                    "columns": ["workload", "batch", "gradir launches per call", "gradir ms",
                                "gradir ms, inputs resident too",
                                "eager fp32 ms", "eager TF32 ms",
                                "torch.compile reduce-overhead ms", "eager fp32/gradir",
                                "compiled/gradir", "gradir error", "torch fp32 error"],
                    "formats": [None, None, None, ".3f", ".3f", ".3f", ".3f", ".3f", ".2f",
                                ".2f", ".2g", ".2g"],
                    "rows": steps})
    out += gpu_precision.tables(results, _model_rows(results))
    prof, top = [], []
    for m in _model_rows(results):
        for label, p in m.get("profile", {}).items():
            prof.append([m["workload"], label, p["kernels_per_call"], p["distinct_kernels"],
                         p["kernel_ms_per_call"], m["ms"].get(label), p["copy_ms_per_call"]])
            if label == "gradir":
                for k in p["top"]:
                    top.append([m["workload"], k["kernel"], k["calls"], k["ms"], k["share"]])
    if prof:
        out.append({"title": "kernel time per training step (torch.profiler / CUPTI)",
                    "columns": ["workload", "runner", "kernels per step", "distinct kernels",
                                "kernel ms per step", "step ms (timed)", "copy ms per step"],
                    "formats": [None, None, ".0f", None, ".3f", ".3f", ".3f"],
                    "rows": prof})
    if top:
        out.append({"title": "gradir's 10 longest kernels per training step",
                    "columns": ["workload", "kernel", "launches per step", "ms per step",
                                "share of kernel time"],
                    "formats": [None, None, ".0f", ".3f", ".1%"],
                    "rows": top})
    return out


def _ratio(a, b):
    return a / b if a and b else None


def save_tables(path: str, results: dict, repeat: int | None) -> None:
    meta = results.get("meta", {})
    info = results.get("info", {})
    reps = (f"{repeat} calls" if repeat else
            "--repeat calls (" + ", ".join(f"{k} {v}" for k, v in REPEAT.items()) + ")")
    notes = [f"Device: {info.get('device')} ({info.get('nvidia-smi')}), torch "
             f"{info.get('torch')} (CUDA {info.get('cuda (torch)')}); kernels built for "
             f"{meta.get('chip')} ({meta.get('format') or 'cubin'}), "
             + {"gradir": "gradir's CUDA runtime (launches replayed as CUDA graphs)",
                "mlir": "MLIR's CUDA runtime"}.get(meta.get("cuda_runtime"),
                                                  "CUDA runtime not recorded")
             + f"; libraries built from commit {meta.get('commit')} on {meta.get('built')}"
             + (", --quick sizes" if meta.get("quick") else "") + ".",
             f"Medians of {reps} after 3 warm-up calls (at most {MAX_TIMING_S:.0f} s of "
             "calls per timing), each synchronised; torch/gradir > 1: gradir is faster.",
             "Training steps: gradir runs @main_adjoint with the parameters resident on the "
             "device (the inputs and labels copied in, the loss and gradients copied out "
             "every call); PyTorch runs torch.autograd.grad on device tensors. Errors: "
             "max |x - torch float64| / max |torch float64| over the loss and every gradient. "
             "torch.compile runs with TF32 off. Launches per call: gradir's static count "
             "(gradir.conversion.gpu.launches; an upper bound where it counts both branches "
             "of a condition, e.g. the first call's upload of the resident parameters).",
             f"JAX: {info.get('jax', 'not installed on the GPU machine')}."]
    notes += gpu_precision.notes()
    failed = [part for part in PARTS
              if isinstance(results.get(part), dict) and "error" in results[part]]
    if failed:
        notes.append("Parts that failed: " + ", ".join(
            f"{p} ({results[p]['error'][:200]})" for p in failed) + ".")
    for m in _model_rows(results):
        for what, err in m.get("errors", {}).items():
            notes.append(f"{m['workload']}: {what} failed: {err[:300]}")
        if m.get("ok") is False:
            notes.append(f"{m['workload']}: gradir's gradients differ from PyTorch's float64 "
                         f"ones beyond {GRAD_TOLERANCE:g} (error {m['max_error']['gradir']:.3g}).")
    ops = results.get("ops", {})
    if isinstance(ops, dict) and ops.get("failures"):
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
                 f"{info.get('torch')} (CUDA {info.get('cuda (torch)')}); JAX: "
                 f"{info.get('jax')}; gradir's CUDA runtime: "
                 f"{results.get('meta', {}).get('cuda_runtime', 'not recorded')}")
    ops = results.get("ops", {})
    if isinstance(ops, dict) and "cases" in ops:
        worst = max(ops["max_abs_error"].values(), default=0.0)
        lines.append(f"ops: {ops['cases']} cases, {len(ops['failures'])} failing "
                     f"{ops['failures'][:10]}, max abs error {worst:.3g}")
    lines.append("| workload | gradir ms | PyTorch ms | gradir/PyTorch | launches per call |")
    lines.append("|---|---|---|---|---|")
    for row in results.get("mlp", []) if isinstance(results.get("mlp"), list) else []:
        ms = row["ms"]
        lines.append(f"| {row['workload']} (params resident vs device tensors) | "
                     f"{ms['gradir (params resident)']:.3f} | {ms['torch (device tensors)']:.3f} "
                     f"| {row['ratio']['resident vs torch device']:.2f} | "
                     f"{row.get('launches')} |")
        lines.append(f"| {row['workload']} (numpy in/out, both) | "
                     f"{ms['gradir (numpy in/out)']:.3f} | {ms['torch (numpy in/out)']:.3f} "
                     f"| {row['ratio']['numpy in/out vs torch numpy in/out']:.2f} | |")
    g = results.get("gemm", {})
    if isinstance(g, dict) and "ms" in g:
        lines.append(f"| {g['workload']} sum(a@b) | {g['ms']['gradir sum(a@b) (resident)']:.3f} "
                     f"| {g['ms']['torch (a@b).sum()']:.3f} | {g['ratio']:.2f} | "
                     f"{g.get('launches')} |")
    for m in _model_rows(results):
        ms = m["ms"]
        for peer in ("torch eager fp32", "torch eager tf32", "torch.compile reduce-overhead"):
            if "gradir" in ms and peer in ms:
                lines.append(f"| {m['workload']} step vs {peer} | {ms['gradir']:.3f} | "
                             f"{ms[peer]:.3f} | {ms['gradir'] / ms[peer]:.2f} | "
                             f"{m.get('launches')} |")
        if "gradir inputs resident" in ms and "torch eager fp32" in ms:
            g = ms["gradir inputs resident"]
            lines.append(f"| {m['workload']} step, inputs resident too, vs torch eager fp32 | "
                         f"{g:.3f} | {ms['torch eager fp32']:.3f} | "
                         f"{g / ms['torch eager fp32']:.2f} | |")
        err = m.get("max_error", {})
        if err:
            lines.append(f"| {m['workload']} errors: gradir {err.get('gradir', 0):.2g}, torch "
                         f"fp32 {err.get('torch fp32', 0):.2g} "
                         f"({'ok' if m.get('ok') else 'FAILED'}) "
                         "| | | | |")
    lines += gpu_precision.summary_lines(results, _model_rows(results))
    for part in PARTS:
        v = results.get(part)
        if isinstance(v, dict) and ("error" in v or v.get("errors")):
            lines.append(f"{part}: {v.get('error') or v.get('errors')}")
    return "\n".join(lines)


def _parts(text: list[str] | None) -> list[str]:
    parts = []
    for chunk in text or []:
        for p in chunk.split(","):
            p = p.strip()
            if p and p not in PARTS:
                raise SystemExit(f"gpu.py: unknown part {p!r} (parts: {', '.join(PARTS)})")
            if p and p not in parts:
                parts.append(p)
    return [p for p in PARTS if p in parts] if parts else list(PARTS)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--build", metavar="DIR", help="compile and export the workloads")
    mode.add_argument("--run", metavar="DIR", help="run exported workloads (GPU machine)")
    p.add_argument("--quick", action="store_true", help="small sizes, few cases (build)")
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--format", choices=["bin", "isa", "fatbin"],
                   help="kernel binaries (build): bin = cubin (default when ptxas is "
                        "found), isa = PTX the driver compiles at load")
    p.add_argument("--repeat", type=int, default=None,
                   help="timed calls per timing (default per part: " +
                        ", ".join(f"{k} {v}" for k, v in REPEAT.items()) + ")")
    p.add_argument("--parts", "--part", action="append", metavar="A,B",
                   help="workloads to build or run, comma-separated (" + ", ".join(PARTS)
                        + "; default all)")
    p.add_argument("--part-timeout", type=float, default=200.0,
                   help="seconds each part may run (run)")
    p.add_argument("--time-limit", type=float, default=340.0,
                   help="seconds the whole run may take: later parts are skipped, a part "
                        "is stopped at it (run)")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (run)")
    p.add_argument("--out", help="write the raw results as JSON")
    _results.add_json_option(p)
    p.add_argument("--torch-device", default="cuda", help=argparse.SUPPRESS)  # testing
    args = p.parse_args(argv)
    parts = _parts(args.parts)
    if args.build:
        return 1 if build(args.build, args.quick, args.chip, args.format, parts) else 0
    run(args.run, args.out, args.repeat, parts, args.torch_device, args.json,
        args.part_timeout, not args.no_compile, args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())

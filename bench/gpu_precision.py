"""bench/gpu.py's precision rows: the GEMM and the two training steps in
fp32, TF32 and bf16, gradir against PyTorch in the same precision, each
side's error against a float64 reference.

What each precision compares (gradir's options are those of
``gradir.compile(target="cuda")``, docs/gpu.md "Tensor cores and precision"):

  * fp32: gradir precision="fp32" (the default); PyTorch with allow_tf32
    off;
  * tf32: gradir precision="tf32"; PyTorch with
    torch.backends.cuda.matmul.allow_tf32 (and cuDNN's) on;
  * bf16: gradir compute_dtype="bf16" on the f32 program; PyTorch's GEMM
    torch.matmul on bf16 operands (cuBLAS bf16; torch.autocast on the f32
    tensors beside it), its steps under torch.autocast("cuda",
    dtype=torch.bfloat16);
  * bf16 program (GEMM only): the f32 operands cast to bf16 in the program
    (rlx.astype), a bf16 matmul (f32 accumulation, bf16 product), against
    a.bfloat16() @ b.bfloat16(), the casts timed on both sides.

bf16 arrays cannot cross the numpy calling convention, so a program with
bf16 arguments cannot be called from the run half: "bf16 program" is the
nearest a user gets to cuBLAS's bf16 operands (its timing includes the two
casts; so does PyTorch's).

Errors: max |x - float64| / max |float64| (the product; for the steps the
worst of the loss and every parameter gradient).  Targets (issue 44, an
H200): gradir's GEMM at >= 0.9x cuBLAS's fp32 throughput, 0.8x TF32's,
0.7x bf16's; the bf16 steps no slower than PyTorch eager with autocast;
TF32 errors within 1e-2 and bf16 ones within 3e-2 of float64.

The build half (``build_gemm``, ``build_model``) needs MLIR; the run half
(``run_gemm``, ``run_model``, ``tables``, ``summary_lines``) needs numpy and
torch only, and gets bench/gpu.py's helpers (timing, loading, errors) as
its ``bench`` argument.  Nothing here is imported at module level but the
standard library.
"""

from __future__ import annotations

import os

__all__ = ["OPTIONS", "GEMM_TARGET", "ERROR_BOUND", "build_gemm", "build_model", "run_gemm",
           "run_model", "tables", "notes", "summary_lines"]

# gradir.compile's options per precision (the libraries' suffixes).
OPTIONS = {"fp32": {}, "tf32": {"precision": "tf32"}, "bf16": {"compute_dtype": "bf16"}}
GEMM_CASES = ("fp32", "tf32", "bf16", "bf16 program")
# gradir's GEMM throughput / cuBLAS's in the same precision, at least (issue 44).
GEMM_TARGET = {"fp32": 0.9, "tf32": 0.8, "bf16": 0.7}
# max |x - float64| / max |float64|, at most (issue 44; none stated for fp32).
ERROR_BOUND = {"tf32": 1e-2, "bf16": 3e-2, "bf16 program": 3e-2}
TORCH_LABEL = {"fp32": "torch.matmul, allow_tf32 off", "tf32": "torch.matmul, allow_tf32 on",
               "bf16": "torch.matmul on bf16 operands",
               "bf16 program": "torch a.bfloat16() @ b.bfloat16(), casts included"}
GRADIR_LABEL = {"fp32": "precision='fp32'", "tf32": "precision='tf32'",
                "bf16": "compute_dtype='bf16'",
                "bf16 program": "bf16 matmul, operands cast in the program"}
STEP_TORCH = {"fp32": "torch eager fp32", "tf32": "torch eager tf32",
              "bf16": "torch eager bf16 autocast"}
CHECK_ROWS = 512                     # rows of the product checked off the GPU (--torch-device cpu)


# --- build (needs MLIR) -----------------------------------------------------------

def _bf16_program(n: int):
    import gradir
    t, h = f"tensor<{n}x{n}xf32>", f"tensor<{n}x{n}xbf16>"
    return gradir.parse(f"""
func.func @gemm(%a: {t}, %b: {t}) -> {t} {{
  %a16 = "rlx.astype"(%a) : ({t}) -> {h}
  %b16 = "rlx.astype"(%b) : ({t}) -> {h}
  %m = "rlx.matmul"(%a16, %b16) : ({h}, {h}) -> {h}
  %r = "rlx.astype"(%m) : ({h}) -> {t}
  return %r : {t}
}}
func.func @gemm_sum(%a: {t}, %b: {t}) -> tensor<f32> {{
  %a16 = "rlx.astype"(%a) : ({t}) -> {h}
  %b16 = "rlx.astype"(%b) : ({t}) -> {h}
  %m = "rlx.matmul"(%a16, %b16) : ({h}, {h}) -> {h}
  %s = "rlx.sum"(%m) : ({h}) -> tensor<bf16>
  %r = "rlx.astype"(%s) : (tensor<bf16>) -> tensor<f32>
  return %r : tensor<f32>
}}""")


def build_gemm(out: str, meta: dict, module, n: int, chip: str, fmt, export) -> None:
    """Exports the f32 GEMM ``module`` (@gemm, @gemm_sum) with TF32 and with
    bf16 compute, and the bf16 program, as gemm{n}_{tf32,bf16,bf16_program}.so
    (operands resident); ``export`` is bench/gpu.py's ``_export``.  A
    precision that fails is recorded in meta["gemm_precisions"]["errors"]
    and the others go on."""
    libs, errors = {"fp32": f"gemm{n}"}, {}
    for case in GEMM_CASES[1:]:
        name = f"gemm{n}_{case.replace(' ', '_')}"
        try:
            if case == "bf16 program":
                export(out, name, _bf16_program(n), chip, fmt, keep_resident=(0, 1), meta=meta,
                       count=["gemm_sum"])
            else:
                export(out, name, module, chip, fmt, keep_resident=(0, 1), meta=meta,
                       count=["gemm_sum"], **OPTIONS[case])
            libs[case] = name
        except Exception as err:  # noqa: BLE001 - recorded; the other precisions go on
            errors[case] = f"{type(err).__name__}: {str(err)[:1000]}"
            print(f"  FAILED: gemm {case}: {errors[case][:300]}", flush=True)
    meta["gemm_precisions"] = {"libraries": libs, "errors": errors}


def build_model(out: str, meta: dict, part: str, module, resident: tuple, chip: str, fmt,
                export) -> None:
    """Exports @main_adjoint of the model ``part`` with TF32 and with bf16
    compute (parameters resident) as {part}_tf32.so and {part}_bf16.so;
    records them in meta["models"][part]["precisions"] (a failure in
    ["precision_errors"])."""
    info = meta["models"][part]
    info["precisions"] = {"fp32": info["library"]}
    info["precision_errors"] = {}
    for prec in ("tf32", "bf16"):
        name = f"{part}_{prec}"
        try:
            export(out, name, module, chip, fmt, keep_resident=resident,
                   functions=["main_adjoint"], meta=meta, count=["main_adjoint"],
                   **OPTIONS[prec])
            info["precisions"][prec] = name + ".so"
        except Exception as err:  # noqa: BLE001 - recorded; fp32 and the other go on
            info["precision_errors"][prec] = f"{type(err).__name__}: {str(err)[:1000]}"
            print(f"  FAILED: {part} {prec}: {info['precision_errors'][prec][:300]}",
                  flush=True)


# --- run (numpy + torch + the exported libraries) ----------------------------------

def _rel(x, ref, scale) -> float:
    return float((x.double() - ref).abs().max() / scale)


def run_gemm(bench, torch, d: str, meta: dict, n: int, a, b, ta, tb, repeat: int,
             fp32: dict, save=None) -> dict:
    """The GEMM in every precision: ``{"rows": {case: row}, "errors": {...}}``.
    ``a``, ``b``: the numpy operands; ``ta``, ``tb``: them on the device;
    ``fp32``: what bench/gpu.py's run_gemm measured already (its library
    and its times, reused for the fp32 row)."""
    dev = ta.device
    info = meta.get("gemm_precisions") or {"libraries": {"fp32": f"gemm{n}"}, "errors": {}}
    out = {"n": n, "rows": {}, "errors": dict(info.get("errors", {}))}
    # The float64 product: on the GPU in full; elsewhere (the CPU test) on
    # the first CHECK_ROWS rows.
    rows = n if dev.type == "cuda" else min(n, CHECK_ROWS)
    ref = ta[:rows].double() @ tb.double()
    scale = float(ref.abs().max()) or 1.0
    bench._tf32(torch, False)
    a16, b16 = ta.bfloat16(), tb.bfloat16()

    def timed(fn):
        def call():
            fn()
            bench._sync(torch, dev)
        return bench.timeit(call, repeat)

    for case in GEMM_CASES:
        if case not in info["libraries"]:
            continue
        row = {"precision": case, "gradir": GRADIR_LABEL[case], "torch": TORCH_LABEL[case],
               "ms": {}, "error": {}, "target": GEMM_TARGET.get(case),
               "error_bound": ERROR_BOUND.get(case),
               "launches": bench._launches(meta, info["libraries"][case], "gemm_sum")}
        out["rows"][case] = row
        try:
            if case == "fp32":
                lib = fp32["lib"]
            else:
                lib = bench._load(os.path.join(d, info["libraries"][case] + ".so"))
            c = lib["gemm"](a, b)
            row["error"]["gradir"] = _rel(torch.from_numpy(c[:rows]).to(dev), ref, scale)
            del c
            row["ms"]["gradir"] = (fp32["ms"]["gradir"] if case == "fp32" else
                                   bench.timeit(lambda: lib["gemm_sum"](a, b), repeat) * 1e3)
        except Exception as err:  # noqa: BLE001 - recorded; the torch side and others go on
            out["errors"][f"gradir {case}"] = f"{type(err).__name__}: {str(err)[:500]}"
        bench._tf32(torch, case == "tf32")
        if case in ("fp32", "tf32"):
            row["error"]["torch"] = _rel((ta[:rows] @ tb), ref, scale)
            if case == "fp32":
                row["ms"]["torch"], row["ms"]["torch a@b"] = (fp32["ms"]["torch"],
                                                              fp32["ms"]["torch a@b"])
            else:
                row["ms"]["torch"] = timed(lambda: (ta @ tb).sum()) * 1e3
                row["ms"]["torch a@b"] = timed(lambda: ta @ tb) * 1e3
        elif case == "bf16":
            row["error"]["torch"] = _rel(a16[:rows] @ b16, ref, scale)
            row["ms"]["torch"] = timed(lambda: (a16 @ b16).sum()) * 1e3
            row["ms"]["torch a@b"] = timed(lambda: a16 @ b16) * 1e3
            with torch.autocast(dev.type, dtype=torch.bfloat16):
                row["error"]["torch autocast"] = _rel(ta[:rows] @ tb, ref, scale)

            def autocast_sum():
                with torch.autocast(dev.type, dtype=torch.bfloat16):
                    (ta @ tb).sum()
            row["ms"]["torch autocast"] = timed(autocast_sum) * 1e3
        else:
            row["error"]["torch"] = out["rows"].get("bf16", {}).get("error", {}).get("torch")
            row["ms"]["torch"] = timed(lambda: (ta.bfloat16() @ tb.bfloat16()).sum()) * 1e3
        bench._tf32(torch, False)
        _judge(row)
        _print_gemm(n, row)
        if save:
            save(out)
    del ref
    return out


def _judge(row: dict) -> None:
    """Fills torch/gradir, TFLOP/s and whether the targets are met."""
    ms = row["ms"]
    g, t = ms.get("gradir"), ms.get("torch")
    row["torch/gradir"] = t / g if g and t else None
    if row.get("target") is not None and row["torch/gradir"] is not None:
        row["meets_target"] = bool(row["torch/gradir"] >= row["target"])
    err, bound = row["error"].get("gradir"), row.get("error_bound")
    if bound is not None and err is not None:
        row["error_within_bound"] = bool(err <= bound)


def _print_gemm(n: int, row: dict) -> None:
    ms, err = row["ms"], row["error"]
    flops = 2 * n ** 3

    def t(key):
        v = ms.get(key)
        return "n/a" if v is None else f"{v:.3f} ms ({flops / (v * 1e-3) / 1e12:.1f} TFLOP/s)"

    def e(key):
        v = err.get(key)
        return "n/a" if v is None else f"{v:.2g}"

    line = (f"  gemm{n} {row['precision']}: gradir sum(a@b) {t('gradir')}, torch "
            f"(a@b).sum() {t('torch')}")
    if "torch a@b" in ms:
        line += f", a@b alone {t('torch a@b')}"
    if "torch autocast" in ms:
        line += f", autocast (a@b).sum() {t('torch autocast')}"
    ratio = row.get("torch/gradir")
    if ratio is not None:
        line += f"; gradir at {ratio:.2f}x torch's throughput"
        if row.get("target") is not None:
            line += f" (target >= {row['target']:g})"
    line += f"; errors vs float64 gradir {e('gradir')}, torch {e('torch')}"
    if "torch autocast" in err:
        line += f", autocast {e('torch autocast')}"
    if row.get("error_bound") is not None:
        line += f" (bound {row['error_bound']:g})"
    print(line, flush=True)


def run_model(bench, torch, row: dict, d: str, bench_meta: dict, info: dict, model, params,
              names, xd, yd, args, want, got32, repeat: int, save) -> None:
    """The training step of ``model`` in TF32 and bf16, gradir against
    PyTorch eager (TF32 on; bf16 autocast), into row["ms"],
    row["max_error"] and row["precision"] (one entry per precision, fp32
    from what bench/gpu.py's run_model measured)."""
    import numpy as np
    dev = xd.device
    ms, err = row["ms"], row["max_error"]

    def errors(key, values):
        """err[key]: the worst tensor's error; beside it its name, the
        loss's error and the gradients' as one vector (|x - float64|_2 /
        |float64|_2 over every gradient: a norm that tensors whose float64
        values nearly cancel do not dominate)."""
        values = [v.detach().float().cpu().numpy() if hasattr(v, "detach") else v
                  for v in values]
        errs = [bench._scaled_error(g, w) for g, w in zip(values, want)]
        err[key] = max(errs)
        err[key + " worst tensor"] = (["loss"] + names)[errs.index(max(errs))]
        err[key + " loss"] = errs[0]
        diff = sum(float(np.sum((np.asarray(g, np.float64) - w) ** 2))
                   for g, w in zip(values[1:], want[1:]))
        norm = sum(float(np.sum(np.asarray(w, np.float64) ** 2)) for w in want[1:])
        err[key + " gradients norm"] = (diff / norm) ** 0.5 if norm else 0.0

    def torch_grads(autocast: bool):
        if autocast:
            with torch.autocast(dev.type, dtype=torch.bfloat16):
                loss = model(xd, yd)
        else:
            loss = model(xd, yd)
        return [loss] + list(torch.autograd.grad(loss, params))

    # PyTorch: fp32 and TF32 (their timings are bench/gpu.py's), bf16 autocast.
    errors("gradir", got32)
    try:
        bench._tf32(torch, False)
        errors("torch fp32", torch_grads(False))
        bench._tf32(torch, True)
        errors("torch tf32", torch_grads(False))
        bench._tf32(torch, False)
        errors("torch bf16 autocast", torch_grads(True))

        def autocast_step():
            torch_grads(True)
            bench._sync(torch, dev)
        ms[STEP_TORCH["bf16"]] = bench.timeit(autocast_step, repeat) * 1e3
    except Exception as e:  # noqa: BLE001 - recorded; gradir's rows go on
        row["errors"]["torch precisions"] = f"{type(e).__name__}: {str(e)[:500]}"
    finally:
        bench._tf32(torch, False)
    save(row)
    # gradir: one library per precision (parameters resident).
    for prec, lib_name in info.get("precisions", {}).items():
        if prec == "fp32":
            continue
        try:
            step = bench._load(os.path.join(d, lib_name))["main_adjoint"]
            errors(f"gradir {prec}", list(bench._flat(step(*args))))
            ms[f"gradir {prec}"] = bench.timeit(lambda: step(*args), repeat) * 1e3
        except Exception as e:  # noqa: BLE001 - recorded; the other precision goes on
            row["errors"][f"gradir {prec}"] = f"{type(e).__name__}: {str(e)[:500]}"
        save(row)
    for prec, e in info.get("precision_errors", {}).items():
        row["errors"][f"gradir {prec} build"] = e
    table = {}
    for prec in OPTIONS:
        g_key = "gradir" if prec == "fp32" else f"gradir {prec}"
        t_key = STEP_TORCH[prec]
        t_err = "torch fp32" if prec == "fp32" else t_key.replace("torch eager", "torch")
        lib = info.get("precisions", {}).get(prec, "")[:-len(".so")]
        entry = {"gradir ms": ms.get(g_key), "torch ms": ms.get(t_key),
                 "torch": t_key, "gradir error": err.get(g_key),
                 "gradir worst tensor": err.get(g_key + " worst tensor"),
                 "gradir gradients norm": err.get(g_key + " gradients norm"),
                 "torch error": err.get(t_err),
                 "torch worst tensor": err.get(t_err + " worst tensor"),
                 "torch gradients norm": err.get(t_err + " gradients norm"),
                 "error_bound": ERROR_BOUND.get(prec),
                 "launches": bench._launches(bench_meta, lib, "main_adjoint")}
        g, t = entry["gradir ms"], entry["torch ms"]
        entry["torch/gradir"] = t / g if g and t else None
        if prec == "bf16" and entry["torch/gradir"] is not None:
            entry["no_slower"] = bool(entry["torch/gradir"] >= 1.0)
        if entry["error_bound"] is not None and entry["gradir error"] is not None:
            entry["error_within_bound"] = bool(entry["gradir error"] <= entry["error_bound"])
        table[prec] = entry
        print(f"  {row['workload']} {prec}: gradir {bench._ms(g)}, {t_key} {bench._ms(t)}"
              + (f" (gradir/torch {g / t:.2f})" if g and t else "")
              + f"; errors vs float64 gradir "
              f"{_g(entry['gradir error'], entry['gradir worst tensor'])}, torch "
              f"{_g(entry['torch error'], entry['torch worst tensor'])}; as one vector "
              f"gradir {_g(entry['gradir gradients norm'])}, torch "
              f"{_g(entry['torch gradients norm'])}"
              + (f" (bound {entry['error_bound']:g})" if entry["error_bound"] else "")
              + f"; {entry['launches']} launches per call", flush=True)
    row["precision"] = table
    save(row)


def _g(value, tensor=None) -> str:
    """An error as printed, with its worst tensor where known."""
    if value is None:
        return "n/a"
    return f"{value:.2g}" + (f" ({tensor})" if tensor else "")


# --- tables and summary ---------------------------------------------------------------

def tables(results: dict, model_rows: list[dict]) -> list[dict]:
    """The precision tables of a run (bench/_results.py's format)."""
    out = []
    g = results.get("gemm")
    prec = g.get("precision") if isinstance(g, dict) else None
    if isinstance(prec, dict) and prec.get("rows"):
        n = prec["n"]
        flops = 2 * n ** 3
        rows = []
        for case, r in prec["rows"].items():
            gm, tm = r["ms"].get("gradir"), r["ms"].get("torch")
            rows.append([case, r["gradir"], r["torch"], gm, tm, r.get("torch/gradir"),
                         r.get("target"), _tflops(flops, gm), _tflops(flops, tm),
                         _tflops(flops, r["ms"].get("torch a@b")),
                         r["error"].get("gradir"), r["error"].get("torch"),
                         r.get("error_bound")])
        out.append({"title": f"GEMM {n}^3 by precision: gradir sum(a@b) against torch.matmul "
                             "in the same precision, operands resident",
                    "columns": ["precision", "gradir", "torch", "gradir ms", "torch ms",
                                "torch/gradir", "target", "gradir TFLOP/s", "torch TFLOP/s",
                                "torch a@b TFLOP/s", "gradir error", "torch error",
                                "error bound"],
                    "formats": [None, None, None, ".3f", ".3f", ".2f", ".2f", ".1f", ".1f",
                                ".1f", ".2g", ".2g", ".0e"],
                    "rows": rows})
    steps = []
    for m in model_rows:
        for p, e in (m.get("precision") or {}).items():
            steps.append([m["workload"], m.get("config", {}).get("batch"), p, e["gradir ms"],
                          e["torch"], e["torch ms"], e["torch/gradir"], e["gradir error"],
                          e["torch error"], e.get("gradir gradients norm"),
                          e.get("torch gradients norm"), e["error_bound"]])
    if steps:
        out.append({"title": "training steps by precision: gradir (precision, compute_dtype) "
                             "against PyTorch eager (TF32, bf16 autocast)",
                    "columns": ["workload", "batch", "precision", "gradir ms", "torch",
                                "torch ms", "torch/gradir", "gradir error", "torch error",
                                "gradir error, gradients as one vector",
                                "torch error, gradients as one vector", "error bound"],
                    "formats": [None, None, None, ".3f", None, ".3f", ".2f", ".2g", ".2g",
                                ".2g", ".2g", ".0e"],
                    "rows": steps})
    return out


def _tflops(flops: int, ms) -> float | None:
    return flops / (ms * 1e-3) / 1e12 if ms else None


def notes() -> list[str]:
    return ["Precisions: gradir fp32 = precision='fp32', tf32 = precision='tf32', bf16 = "
            "compute_dtype='bf16' on the f32 program (f32 accumulation and results); "
            "PyTorch fp32 = allow_tf32 off, tf32 = allow_tf32 on (matmuls and cuDNN), GEMM "
            "bf16 = torch.matmul on bf16 operands (cuBLAS bf16, bf16 product), steps bf16 = "
            "torch.autocast('cuda', dtype=torch.bfloat16). GEMM 'bf16 program': gradir casts "
            "the f32 operands to bf16 in the program and multiplies bf16 matrices; PyTorch "
            "a.bfloat16() @ b.bfloat16(); both time the casts. Errors: max |x - float64| / "
            "max |float64| (GEMM: the product; steps: the worst of the loss and every "
            "gradient; also |x - float64|_2 / |float64|_2 over all gradients as one vector). "
            "Targets: GEMM torch/gradir >= 0.9 (fp32), 0.8 (tf32), 0.7 (bf16); "
            "bf16 steps torch/gradir >= 1; errors within 1e-2 (tf32) and 3e-2 (bf16)."]


def summary_lines(results: dict, model_rows: list[dict]) -> list[str]:
    lines = []
    g = results.get("gemm")
    prec = g.get("precision") if isinstance(g, dict) else None
    if isinstance(prec, dict):
        for case, r in prec.get("rows", {}).items():
            gm, tm = r["ms"].get("gradir"), r["ms"].get("torch")
            if gm and tm:
                lines.append(f"| gemm{prec['n']} {case} vs {r['torch']} | {gm:.3f} | {tm:.3f} "
                             f"| {gm / tm:.2f} | {r.get('launches')} |")
            lines.append(f"| gemm{prec['n']} {case} errors: gradir {_g(r['error'].get('gradir'))}"
                         f", torch {_g(r['error'].get('torch'))} | | | | |")
        for what, e in prec.get("errors", {}).items():
            lines.append(f"gemm {what}: {e[:300]}")
    for m in model_rows:
        for p, e in (m.get("precision") or {}).items():
            if p == "fp32":
                continue
            if e["gradir ms"] and e["torch ms"]:
                lines.append(f"| {m['workload']} step {p} vs {e['torch']} | "
                             f"{e['gradir ms']:.3f} | {e['torch ms']:.3f} | "
                             f"{e['gradir ms'] / e['torch ms']:.2f} | {e.get('launches')} |")
            lines.append(f"| {m['workload']} {p} errors: gradir {_g(e['gradir error'])}, "
                         f"torch {_g(e['torch error'])} (gradients as one vector: gradir "
                         f"{_g(e.get('gradir gradients norm'))}, torch "
                         f"{_g(e.get('torch gradients norm'))}) | | | | |")
    return lines

"""The Hopper GEMM's load paths on a real sm_90 GPU (not a lit test: it
needs the GPU the emulator stands in for elsewhere).

    python test/conversion/gpu/Inputs/wgmma_device_check.py [--quick]

For each shape (square, ragged, transposed, batched, split-K) and element
type (f32 under precision=tf32, f16), compiles the matmul three ways --
cooperative loads in one stage (wgmma.ASYNC off), the cp.async pipeline
(the default) and TMA (wgmma.TMA on) -- runs each on the GPU and prints its
error against numpy in float64 and the median time of a call (host copies
included), one line per case: ``shape dtype variant error ok ms``.  Exit
status 1 if a result is off (TF32's and f16's tolerances).  A TMA kernel that
never completes an mbarrier phase hangs the GPU: run it under ``timeout``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

SHAPES = {                    # (batch, M, K, N, transposed B)
    "square": ((), 2048, 2048, 2048, True),
    "ragged": ((), 1000, 1032, 999, True),
    "nn": ((), 1024, 1024, 1024, False),
    "batched": ((8,), 512, 512, 512, True),
    "split_k": ((), 64, 8192, 64, True),
}
QUICK = ("ragged", "split_k")


def program(batch, m, k, n, tb, t):
    pre = "".join(f"{d}x" for d in batch)
    perm = ", ".join(str(i) for i in range(len(batch))) + (", " if batch else "")
    perm += f"{len(batch) + 1}, {len(batch)}"
    xb = f"tensor<{pre}{n}x{k}x{t}>" if tb else f"tensor<{pre}{k}x{n}x{t}>"
    lines, w = [], "%w"
    if tb:
        lines.append(f'%wt = "rlx.permute_dims"(%w) {{axes = array<i64: {perm}>}} : ({xb}) -> '
                     f"tensor<{pre}{k}x{n}x{t}>")
        w = "%wt"
    out = f"tensor<{pre}{m}x{n}x{t}>"
    lines.append(f'%y = "rlx.matmul"(%x, {w}) : (tensor<{pre}{m}x{k}x{t}>, '
                 f"tensor<{pre}{k}x{n}x{t}>) -> {out}")
    body = "\n  ".join(lines)
    return (f"func.func @main(%x: tensor<{pre}{m}x{k}x{t}>, %w: {xb}) -> {out} {{\n  {body}\n"
            f"  return %y : {out}\n}}"), tb


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="two shapes, three calls each")
    args = p.parse_args(argv)
    import gradir
    from gradir.conversion.gpu.kernels import wgmma

    rng = np.random.default_rng(0)
    failed = False
    for name, (batch, m, k, n, tb) in SHAPES.items():
        if args.quick and name not in QUICK:
            continue
        for t, opts, tol in (("f32", {"precision": "tf32"}, 5e-3), ("f16", {}, 5e-3)):
            text, tb = program(batch, m, k, n, tb, t)
            dtype = np.float32 if t == "f32" else np.float16
            x = rng.standard_normal(batch + (m, k)).astype(dtype)
            w = rng.standard_normal(batch + ((n, k) if tb else (k, n))).astype(dtype)
            wk = np.swapaxes(w, -1, -2) if tb else w
            want = np.matmul(x.astype(np.float64), wk.astype(np.float64))
            for variant, (use_async, use_tma) in (("one-stage", (False, False)),
                                                  ("cp.async", (True, False)),
                                                  ("tma", (True, True))):
                wgmma.ASYNC, wgmma.TMA = use_async, use_tma
                exe = gradir.compile(gradir.parse(text), target="cuda", chip="sm_90", **opts)
                got = np.asarray(exe["main"](x, w), np.float64)
                err = float(np.abs(got - want).max() / np.abs(want).max())
                times = []
                for _ in range(3 if args.quick else 20):
                    start = time.perf_counter()
                    exe["main"](x, w)
                    times.append(time.perf_counter() - start)
                ok = err < tol
                failed |= not ok
                print(f"{name} {t} {variant} {err:.2e} {'ok' if ok else 'OFF'} "
                      f"{1e3 * statistics.median(times):.3f}", flush=True)
    wgmma.ASYNC, wgmma.TMA = True, False
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

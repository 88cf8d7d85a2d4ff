"""Pass speed: rlx-gradient on chains of N dense-tanh layers, against TVM,
and on chains whose values have one user per layer.

    build/venv/bin/python bench/gradient_pass.py [N ...] [--repeat R] [--profile N]
        [--shared-depths N,N,...] [--profile-chain dense|residual|shared] [--json PATH]

The program (the issue's): x: 4x16, W_i: 16x16, b_i: 16,
``h = tanh(matmul(h, W_i) + b_i)`` N times, then ``sum``: 3N+1 forward ops.
Times ``run_pipeline(m, "builtin.module(rlx-gradient{...})")`` after parsing
(best of R, default 3, and at least 20 for N <= 100, for gradir and TVM
alike; printing excluded; CPU time of this process, which a machine shared
with other jobs disturbs less than wall time) for

- raw: ``simplify=false`` (the gradient and dead-op removal only);
- default: gradient + simplification (rlx-simplify-gradient's patterns,
  rlx-cse, rlx-dce);
- remat=auto: default + ``remat=auto budget=0.5`` (planning included);

side by side with TVM Relax's C++ ``relax.transform.Gradient`` on the same
program in the same run when TVM is installed (``build/venv/bin/pip install
apache-tvm``; not part of the pinned stack).  Columns: milliseconds and
forward ops per second; ``per-op vs N=100``: time per forward op of the
default pipeline relative to N=100 (1.0 = linear).  ``--profile N`` prints
the CPU time of the default pipeline's phases at depth N (of the chain
``--profile-chain`` names; default dense).

The second table: two chains where one value is read by every layer, at
500, 1000, 2000 and 4000 layers (``--shared-depths``), best of R:

- residual: x: 4x16, ``h = tanh(h) * c + x`` with ``c`` one splat
  constant (``dense<0.5> : tensor<4x16xf32>``), then ``sum``: 3N+1 forward
  ops; ``x`` and ``c`` have N users each (the shape of every residual
  network);
- shared: x: 4x16, one w: 16x16, ``h = tanh(matmul(h, w))`` N times, then
  ``sum``: 2N+1 forward ops; ``w`` has N users (and the gradient N
  transposes of it, which rlx-cse merges).

Columns: milliseconds and forward ops per second of ``simplify=false`` and
of the default pipeline, microseconds per forward op, and ``per-op vs
N=500``: the default pipeline's time per op relative to the first depth
(1.0 = linear).  ``--json PATH`` also writes both tables, with the
machine, date, commit and command, to PATH (bench/results/gradient_pass.json;
see bench/_results.py).
"""

from __future__ import annotations

import sys
import time

import _cli  # bench/_cli.py: --help, unknown options
import _results  # bench/_results.py: --json, the results' provenance
import gradir
from gradir import _compat
from gradir.testing.chains import dense_tanh as chain, residual, shared

CHAINS = {"dense": chain, "residual": residual, "shared": shared}
DEPTHS = (10, 100, 1000, 5000)
SHARED_DEPTHS = (500, 1000, 2000, 4000)


def forward_ops(text: str) -> int:
    return text.count('"rlx.')


def gradir_time(text: str, options: str, repeat: int) -> float:
    best = float("inf")
    _compat.push_diagnostic_sink(lambda *d: None)     # remat=auto's budget warnings
    try:
        for _ in range(repeat):
            m = gradir.parse(text)
            t0 = time.process_time()
            gradir.run_pipeline(m, f"builtin.module(rlx-gradient{{{options}}})")
            best = min(best, time.process_time() - t0)
            del m
    finally:
        _compat.pop_diagnostic_sink()
    return best


def tvm_chain(n: int, batch: int = 4, width: int = 16):
    from tvm import relax
    from tvm.script import relax as R
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((batch, width), "float32").as_ty())
    params = []
    for i in range(n):
        params.append(relax.Var(f"w{i}", R.Tensor((width, width), "float32").as_ty()))
        params.append(relax.Var(f"b{i}", R.Tensor((width,), "float32").as_ty()))
    with bb.function("main", [x] + params):
        with bb.dataflow():
            cur = x
            for i in range(n):
                mm = bb.emit(relax.op.matmul(cur, params[2 * i]))
                cur = bb.emit(relax.op.tanh(bb.emit(relax.op.add(mm, params[2 * i + 1]))))
            out = bb.emit_output(relax.op.sum(cur))
        bb.emit_func_output(out)
    return bb.get()


def tvm_time(n: int, repeat: int):
    try:
        from tvm import relax
    except ImportError:
        return None
    best = float("inf")
    for _ in range(repeat):
        mod = tvm_chain(n)
        t0 = time.process_time()
        relax.transform.Gradient("main")(mod)
        best = min(best, time.process_time() - t0)
    return best


def profile(n: int, build=chain) -> None:
    """CPU time of the default pipeline's phases at depth ``n`` of the
    chain ``build`` makes."""
    from gradir.autodiff import gradient
    from gradir.autodiff.simplify import _driver, _mirror
    from gradir.dialects import rlx
    from gradir.transforms import rlx_gradient
    spent: dict[str, float] = {}
    depth = [0]

    def timed(owner, name, label):
        fn = getattr(owner, name)

        def run(*a, **k):
            depth[0] += 1
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                depth[0] -= 1
                spent[label] = spent.get(label, 0.0) + time.process_time() - t0
        setattr(owner, name, run)
        return owner, name, fn

    from gradir.autodiff import checkpoint
    patched = [timed(rlx, "build_op", "  op builders (type inference + create)"),
               timed(gradient, "backward", "gradient: reverse sweep (rules)"),
               timed(rlx_gradient, "differentiate", "gradient: total"),
               timed(_mirror.Mirror, "__init__", "simplify: read the block (mirror)"),
               timed(_driver._Driver, "run", "simplify: patterns (worklist driver)"),
               timed(_driver, "cse", "simplify: rlx-cse"),
               timed(_driver, "dce", "simplify: rlx-dce"),
               timed(_mirror.Mirror, "release", "simplify: freeing the mirror"),
               timed(rlx_gradient, "simplify_function", "simplify: total"),
               timed(checkpoint, "plan_checkpoints", "checkpoint planning")]
    try:
        text = build(n)
        m = gradir.parse(text)
        t0 = time.process_time()
        gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
        total = time.process_time() - t0
    finally:
        for owner, name, fn in patched:
            setattr(owner, name, fn)
    print(f"\nprofile, default pipeline, {build.__name__} N={n} ({forward_ops(text)} forward "
          "ops), CPU seconds:")
    for label, t in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<42} {t:7.3f}  {100 * t / total:5.1f}%")
    print(f"  {'total':<42} {total:7.3f}")


def machine() -> str:
    """The CPU model and the load average (every timing names them)."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
    except OSError:
        load = "unknown"
    import os
    return f"{cpu}, {os.cpu_count()} cores, load average {load}"


def shared_rows(depths: list[int], repeat: int) -> list[list]:
    """The second table's rows: [chain, N, forward ops, raw ms, raw ops/s,
    default ms, default ops/s, us per op, per-op vs the first depth]."""
    print(f"\n{'chain':<9} {'N':>5} {'fwd ops':>8} | {'raw ms':>9} {'ops/s':>7} | "
          f"{'default ms':>10} {'ops/s':>7} {'us/op':>7} {f'per-op vs N={depths[0]}':>16}")
    rows = []
    for name in ("residual", "shared"):
        first = None
        for n in depths:
            text = CHAINS[name](n)
            fwd = forward_ops(text)
            raw = gradir_time(text, "simplify=false", repeat)
            default = gradir_time(text, "", repeat)
            per_op = default / fwd
            first = first or per_op
            rows.append([name, n, fwd, raw * 1e3, fwd / raw, default * 1e3, fwd / default,
                         per_op * 1e6, per_op / first])
            print(f"{name:<9} {n:>5} {fwd:>8} | {raw * 1e3:>9.1f} {fwd / raw:>7.0f} | "
                  f"{default * 1e3:>10.1f} {fwd / default:>7.0f} {per_op * 1e6:>7.1f} "
                  f"{per_op / first:>16.2f}", flush=True)
    return rows


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, positional=None,
               valued=("--repeat", "--profile", "--shared-depths", "--profile-chain", "--json"),
               choices={"--profile-chain": tuple(CHAINS)})
    repeat, prof, depths, prof_chain, path = 3, None, [], "dense", None
    shared_depths = list(SHARED_DEPTHS)
    it = iter(argv)
    for a in it:
        if a == "--repeat":
            repeat = int(next(it))
        elif a == "--profile":
            prof = int(next(it))
        elif a == "--shared-depths":
            shared_depths = [int(d) for d in next(it).split(",") if d]
        elif a == "--profile-chain":
            prof_chain = next(it)
        elif a == "--json":
            path = next(it)
        else:
            depths.append(int(a))
    depths = depths or list(DEPTHS)
    print(f"machine: {machine()}")
    print(f"{'N':>5} {'fwd ops':>8} | {'raw ms':>9} {'ops/s':>7} | {'default ms':>10} "
          f"{'ops/s':>7} {'per-op vs N=100':>15} | {'remat ms':>9} {'ops/s':>7} | "
          f"{'TVM ms':>9} {'ops/s':>7} {'TVM/default':>11}")
    per_op_100 = gradir_time(chain(100), "", max(repeat, 3)) / 301
    dense_rows = []
    for n in depths:
        text = chain(n)
        fwd = 3 * n + 1
        # Milliseconds on a shared machine: more repeats where one is short
        # (the same for gradir and TVM).
        r = repeat if n > 100 else max(repeat, 20)
        raw = gradir_time(text, "simplify=false", r)
        default = gradir_time(text, "", r)
        auto = gradir_time(text, "remat=auto budget=0.5", r)
        tvm = tvm_time(n, r)
        tvm_cols = (f"{tvm * 1e3:>9.1f} {fwd / tvm:>7.0f} {tvm / default:>11.2f}"
                    if tvm is not None else f"{'-':>9} {'-':>7} {'-':>11}")
        print(f"{n:>5} {fwd:>8} | {raw * 1e3:>9.1f} {fwd / raw:>7.0f} | {default * 1e3:>10.1f} "
              f"{fwd / default:>7.0f} {default / fwd / per_op_100:>15.2f} | "
              f"{auto * 1e3:>9.1f} {fwd / auto:>7.0f} | {tvm_cols}", flush=True)
        dense_rows.append([n, fwd, raw * 1e3, fwd / raw, default * 1e3, fwd / default,
                           default / fwd / per_op_100, auto * 1e3, fwd / auto,
                           None if tvm is None else tvm * 1e3,
                           None if tvm is None else fwd / tvm,
                           None if tvm is None else tvm / default])
    chain_rows = shared_rows(shared_depths, repeat) if shared_depths else []
    print(f"after: {machine()}")
    if prof:
        profile(prof, CHAINS[prof_chain])
    if path:
        tables = [{"title": "rlx-gradient on N dense-tanh layers, against TVM Relax's Gradient",
                   "columns": ["N", "forward ops", "raw ms", "raw ops/s", "default ms",
                               "default ops/s", "per-op vs N=100", "remat=auto ms",
                               "remat=auto ops/s", "TVM ms", "TVM ops/s", "TVM / default"],
                   "formats": [None, None, ".1f", ".0f", ".1f", ".0f", ".2f", ".1f", ".0f",
                               ".1f", ".0f", ".2f"],
                   "rows": dense_rows}]
        if chain_rows:
            tables.append({
                "title": "rlx-gradient on chains that read one value in every layer "
                         "(residual: input and constant; shared: one weight)",
                "columns": ["chain", "N", "forward ops", "raw ms", "raw ops/s", "default ms",
                            "default ops/s", "us per op", f"per-op vs N={shared_depths[0]}"],
                "formats": [None, None, None, ".1f", ".0f", ".1f", ".0f", ".1f", ".2f"],
                "rows": chain_rows})
        notes = ["CPU time of the process (best of "
                 f"{repeat}, at least 20 for N <= 100), parsing and printing excluded; raw: "
                 "simplify=false; default: gradient, rlx-simplify-gradient's patterns, rlx-cse "
                 "and rlx-dce; remat=auto: default + remat=auto budget=0.5.",
                 "TVM: relax.transform.Gradient on the same program in the same run "
                 "(blank where TVM is not installed)."]
        _results.save_results(path, "gradient_pass", tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""One whole PyTorch training step (forward, loss.backward(), optimizer.step(),
zero_grad) through gradir's drop-in module, PyTorch eager and torch.compile,
float32, side by side in one process per model and thread count.

    build/venv/bin/python bench/train_step.py                 # every model, threads 1 and 2
    build/venv/bin/python bench/train_step.py --threads 1 --models digits --quick [--json PATH]

The models:
  * digits64: the digits CNN of examples/train_digits_cnn.py (its
    ``make_model()``: conv 3x3 1->16, relu, max-pool 2, conv 3x3 16->32,
    relu, max-pool 2, dense 128->10, cross_entropy inside), batch 64 of the
    8x8 digits (the demo's first 64 training images);
  * lenet64: LeNet-5 of bench/lenet.py (its shapes, initial weights and
    inputs, ``lenet_inputs(64)``; the forward as that file's ``torch_step``:
    conv 5x5 1->6, relu, max-pool 2, conv 5x5 6->16, relu, max-pool 2, dense
    256-120-84-10, log_softmax + nll_loss) as an ``nn.Module``, batch 64 of
    28x28;
  * resnet-cifar32: the CIFAR ResNet of bench/cnn.py (its ``build_model``:
    BatchNorm in training mode, so the running statistics are updated each
    step too), batch 32 of 3x32x32.
Each model is trained three ways from the same initial weights (copies of
one model) on the same batch: (a) ``gradir.frontends.torch.compile(model,
args, threads=T)`` (gradir's compiled forward and backward), (b) PyTorch
eager, (c) ``torch.compile(model)`` (inductor, default mode); all three with
``torch.optim.SGD(lr=0.01, momentum=0.9)`` (PyTorch's own, eager) and
``zero_grad()`` after the step.
"first step" is the first training step's wall time, compile included:
gradir's ``compile`` (torch.export import, rlx-gradient, gradir.compile)
plus the step, with gradir's compile cache off (GRADIR_CACHE=0), beside
inductor's first step (Dynamo, AOTAutograd, inductor for the forward and
then the backward) with inductor's caches off
(TORCHINDUCTOR_FORCE_DISABLE_CACHES=1); both after importing their
packages (and torch._dynamo / torch._inductor / torch.export), in a fresh
process.  Correctness: after 3 steps, every parameter (and floating
buffer) of gradir's model must equal eager's to 1e-4 relative
(max |gradir - eager| / max |eager| per tensor), or the bench fails; the
same difference for the parameter updates (after 3 steps minus initial) and
for inductor is printed too.  Timing: warm-up steps, then at least 20 timed
steps of each (more for fast models: about 2 s of steps each), in 5 rounds
that alternate the three (so a change of load hits all three); the median
step time.  Ratios are eager / gradir and inductor / gradir (>1: gradir is
faster).  Each (model, thread count) runs in a fresh process pinned to
that many cores, torch.set_num_threads and gradir's ``threads=`` set to
it.  Prints the CPU, its vector ISA and the load average.  ``--quick``: a
smoke run (1 warm-up and 3 timed steps).  ``--json PATH``: the tables also
go to PATH with their provenance (bench/_results.py).
"""

from __future__ import annotations

import copy
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import cpu  # noqa: E402  bench/cpu.py: child_env, pin
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance

MODELS = {"digits": "digits64", "lenet": "lenet64", "resnet": "resnet-cifar32"}
LR, MOMENTUM = 0.01, 0.9
CHECK_STEPS, RTOL = 3, 1e-4
ROUNDS, MIN_STEPS, TARGET_S = 5, 20, 2.0
IMPLS = ("gradir", "eager", "inductor")


def make(name: str):
    """(model, example args, loss of the model's output) of ``name``."""
    import numpy as np
    import torch

    if name == "digits":
        import train_digits_cnn as demo        # examples/train_digits_cnn.py
        xtr, _, ytr, _ = demo.load_digits_split()
        args = (torch.from_numpy(xtr[:demo.BATCH]), torch.from_numpy(ytr[:demo.BATCH]))
        return demo.make_model(), args, lambda out: out[0]
    if name == "lenet":
        import lenet                           # bench/lenet.py
        x, y, params = lenet.lenet_inputs(64)
        F = torch.nn.functional

        class LeNet5(torch.nn.Module):
            """bench/lenet.py's LeNet-5 (its weights, laid out as there:
            dense weights (in, out)) with the forward of its torch_step."""

            def __init__(self):
                super().__init__()
                self.w = torch.nn.ParameterList(torch.nn.Parameter(torch.from_numpy(p.copy()))
                                                for p in params)

            def forward(self, tx, ty):
                tp = list(self.w)
                h = F.max_pool2d(torch.relu(F.conv2d(tx, tp[0], tp[1])), 2)
                h = F.max_pool2d(torch.relu(F.conv2d(h, tp[2], tp[3])), 2)
                h = torch.relu(h.reshape(tx.shape[0], 256) @ tp[4] + tp[5])
                h = torch.relu(h @ tp[6] + tp[7])
                return F.nll_loss(torch.log_softmax(h @ tp[8] + tp[9], -1), ty)

        return LeNet5(), (torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))), \
            lambda out: out
    if name == "resnet":
        import cnn                             # bench/cnn.py
        model = cnn.build_model(torch)        # seeds 0
        gen = torch.Generator().manual_seed(1)
        args = (torch.randn(32, 3, 32, 32, generator=gen), torch.randint(0, 10, (32,), generator=gen))
        return model, args, lambda out: out
    raise ValueError(name)


def state(model) -> dict:
    """The parameters and floating-point buffers, as numpy copies."""
    out = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    out.update({n: b.detach().numpy().copy() for n, b in model.named_buffers()
                if b.dtype.is_floating_point})
    return out


def rel_diff(a: dict, b: dict, base: dict | None = None) -> tuple[float, str]:
    """The largest max|a - b| / max|b| over the tensors (of a - base against
    b - base when ``base`` is given: the updates), and its tensor's name."""
    import numpy as np
    worst, where = 0.0, ""
    for k in b:
        x, y = (a[k], b[k]) if base is None else (a[k] - base[k], b[k] - base[k])
        scale = float(np.max(np.abs(y))) if y.size else 0.0
        d = float(np.max(np.abs(x - y))) / scale if scale > 0 else float(np.max(np.abs(x - y)))
        if d >= worst:
            worst, where = d, k
    return worst, where


def run(name: str, threads: int, quick: bool) -> dict:
    import torch
    torch.set_num_threads(threads)
    # the packages, imported before any first step (neither pays for the
    # other's imports, nor for its own Python imports)
    import torch._dynamo  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    import torch.export  # noqa: F401
    import gradir.frontends.torch as gt
    import gradir.frontends.torch.training  # noqa: F401
    import gradir.frontends.torch.importer  # noqa: F401

    model, args, loss_of = make(name)
    model.train()
    initial = state(model)
    models = {impl: copy.deepcopy(model) for impl in IMPLS}
    opts = {impl: torch.optim.SGD(m.parameters(), lr=LR, momentum=MOMENTUM)
            for impl, m in models.items()}
    nets = {"eager": models["eager"]}

    def stepper(impl):
        net, opt = nets[impl], opts[impl]

        def step():
            loss = loss_of(net(*args))
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step

    first = {}
    t0 = time.perf_counter()
    nets["gradir"] = gt.compile(models["gradir"], args, threads=threads)
    loss_g = stepper("gradir")()
    first["gradir"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    nets["inductor"] = torch.compile(models["inductor"])
    loss_i = stepper("inductor")()
    first["inductor"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    loss_e = stepper("eager")()
    first["eager"] = time.perf_counter() - t0
    steps = {impl: stepper(impl) for impl in IMPLS}
    for _ in range(CHECK_STEPS - 1):
        for impl in IMPLS:
            steps[impl]()
    after = {impl: state(m) for impl, m in models.items()}
    check = {
        "first_loss": [float(loss_g), float(loss_e), float(loss_i)],
        "gradir_params": rel_diff(after["gradir"], after["eager"]),
        "gradir_updates": rel_diff(after["gradir"], after["eager"], initial),
        "inductor_params": rel_diff(after["inductor"], after["eager"]),
        "inductor_updates": rel_diff(after["inductor"], after["eager"], initial),
    }

    # warm-up, then rounds that alternate the three
    warm = {}
    for impl in IMPLS:
        times = []
        for _ in range(1 if quick else 3):
            t0 = time.perf_counter()
            steps[impl]()
            times.append(time.perf_counter() - t0)
        warm[impl] = min(times)
    n = 3 if quick else max(MIN_STEPS, min(400, int(TARGET_S / max(warm.values()))))
    rounds = 1 if quick else ROUNDS
    per_round = -(-n // rounds)
    times = {impl: [] for impl in IMPLS}
    for _ in range(rounds):
        for impl in IMPLS:
            time.sleep(0.05)
            for _ in range(per_round):
                t0 = time.perf_counter()
                steps[impl]()
                times[impl].append(time.perf_counter() - t0)
    row = {"model": name, "threads": threads, "steps": len(times["gradir"]),
           "first_s": first, "check": check,
           "ms": {impl: statistics.median(t) * 1e3 for impl, t in times.items()}}
    return row


def header() -> str:
    import platform
    from gradir.conversion.cpu.host import detect_host
    host = detect_host()
    return (f"{host.model or platform.machine()}, {os.cpu_count()} cores, vector ISA "
            f"{host.isa} ({host.vector_bits}-bit x {host.vector_registers} registers); "
            f"L1d {host.l1d // 1024} KiB, L2 {host.l2 // 1024} KiB")


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--quick",),
               valued=("--threads", "--models", "--child", "--json"))
    quick = "--quick" in argv
    names = list(MODELS)
    if "--models" in argv:
        names = argv[argv.index("--models") + 1].split(",")
        bad = [m for m in names if m not in MODELS]
        if bad:
            print(f"--models: of {', '.join(MODELS)}, not {', '.join(bad)}", file=sys.stderr)
            return 2
    if "--child" in argv:
        threads = int(argv[argv.index("--child") + 1])
        cpu.pin(threads)
        print("ROW " + json.dumps(run(names[0], threads, quick)))
        return 0
    threads = [1, 2]
    if "--threads" in argv:
        threads = [int(t) for t in argv[argv.index("--threads") + 1].split(",")]
    _cli.fresh_bytecode()
    rows, failed = [], []
    for th in threads:
        for name in names:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", str(th),
                   "--models", name] + (["--quick"] if quick else [])
            # Cold first steps: gradir's compile cache and inductor's caches off.
            env = dict(cpu.child_env(th), GRADIR_CACHE="0",
                       TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                print(proc.stdout, proc.stderr, file=sys.stderr)
                print(f"FAILED: {name} at {th} thread(s)", file=sys.stderr)
                return 1
            rows += [json.loads(ln[4:]) for ln in proc.stdout.splitlines()
                     if ln.startswith("ROW ")]
    machine = header()
    print(f"# {machine}; load average {os.getloadavg()[0]:.1f} at the end "
          f"({_results.LOAD_START[0]:.1f} at the start); nice {os.getpriority(os.PRIO_PROCESS, 0)}")
    print("# one training step: forward, loss.backward(), SGD(lr=0.01, momentum=0.9).step(), "
          "zero_grad(); float32; median ms")
    print(f"{'model':<16}{'thr':>4}{'steps':>6}{'gradir ms':>11}{'eager ms':>10}"
          f"{'inductor ms':>13}{'eager/gradir':>14}{'inductor/gradir':>17}"
          f"{'gradir 1st s':>14}{'inductor 1st s':>16}")
    table, checks = [], []
    for r in rows:
        ms, f = r["ms"], r["first_s"]
        cells = [MODELS[r["model"]], r["threads"], r["steps"], ms["gradir"], ms["eager"],
                 ms["inductor"], ms["eager"] / ms["gradir"], ms["inductor"] / ms["gradir"],
                 f["gradir"], f["inductor"]]
        table.append(cells)
        print(f"{cells[0]:<16}{cells[1]:>4}{cells[2]:>6}{cells[3]:>11.2f}{cells[4]:>10.2f}"
              f"{cells[5]:>13.2f}{cells[6]:>14.2f}{cells[7]:>17.2f}{cells[8]:>14.2f}"
              f"{cells[9]:>16.2f}")
        c = r["check"]
        ok = c["gradir_params"][0] <= RTOL
        if not ok:
            failed.append(f"{MODELS[r['model']]} at {r['threads']} thread(s): parameter "
                          f"{c['gradir_params'][1]} differs from eager's by "
                          f"{c['gradir_params'][0]:.1e} relative (> {RTOL:g})")
        checks.append([MODELS[r["model"]], r["threads"], c["gradir_params"][0],
                       c["gradir_updates"][0], c["inductor_params"][0],
                       c["inductor_updates"][0], c["gradir_updates"][1], "OK" if ok else "FAILED"])
    print(f"\n# after {CHECK_STEPS} steps, max |x - eager| / max |eager| over the parameters and "
          f"floating buffers (gradir must be <= {RTOL:g}); 'updates': of (after - initial)")
    print(f"{'model':<16}{'thr':>4}{'gradir params':>15}{'gradir updates':>16}"
          f"{'inductor params':>17}{'inductor updates':>18}  check  (worst gradir update)")
    for c in checks:
        print(f"{c[0]:<16}{c[1]:>4}{c[2]:>15.1e}{c[3]:>16.1e}{c[4]:>17.1e}{c[5]:>18.1e}  {c[7]:<6} ({c[6]})")
    path = _results.json_option(argv)
    if path and not failed:
        tables = [
            {"title": "One training step (forward, backward, SGD momentum step, zero_grad): "
                      "gradir's drop-in module against PyTorch eager and torch.compile",
             "columns": ["model", "threads", "timed steps", "gradir ms", "eager ms",
                         "inductor ms", "eager/gradir", "inductor/gradir",
                         "gradir first step s", "inductor first step s"],
             "formats": [None, None, None, ".2f", ".2f", ".2f", ".2f", ".2f", ".2f", ".2f"],
             "rows": table},
            {"title": f"Parameters after {CHECK_STEPS} steps against eager's "
                      "(max |x - eager| / max |eager|, worst tensor)",
             "columns": ["model", "threads", "gradir params", "gradir updates",
                         "inductor params", "inductor updates", "worst gradir update",
                         "check"],
             "formats": [None, None, ".1e", ".1e", ".1e", ".1e", None, None],
             "rows": checks}]
        notes = [f"gradir's host detection: {machine}.",
                 "torch.optim.SGD(lr=0.01, momentum=0.9) for all three, float32, the same "
                 "initial weights and the same batch; the step is forward, loss.backward(), "
                 "optimizer.step(), zero_grad().",
                 "Median step times after warm-up steps, at least 20 timed steps (about 2 s "
                 "of steps each for fast models) in 5 rounds alternating the three; each "
                 "(model, thread count) in a fresh process pinned to that many cores, "
                 "torch.set_num_threads and gradir's threads= set to it. eager/gradir, "
                 "inductor/gradir > 1: gradir is faster.",
                 "\"first step\": the first training step including compilation, in a fresh "
                 "process after the packages are imported: gradir's compile (torch.export "
                 "import, rlx-gradient, gradir.compile) with its compile cache off; "
                 "torch.compile's Dynamo + AOTAutograd + inductor (forward and backward) "
                 "with TORCHINDUCTOR_FORCE_DISABLE_CACHES=1.",
                 "The machine is shared: see the load average in the provenance."]
        import gradir
        package = os.path.dirname(os.path.abspath(gradir.__file__))
        if package != os.path.join(os.path.dirname(HERE), "python", "gradir"):
            notes.append(f"gradir imported from {package} (PYTHONPATH), not from this "
                         "checkout's python/gradir.")
        if quick:
            notes.append("--quick: 1 warm-up and 3 timed steps (a smoke run, not a measurement).")
        _results.save_results(path, "train_step", tables, notes)
    if failed:
        for f in failed:
            print("FAILED: " + f, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

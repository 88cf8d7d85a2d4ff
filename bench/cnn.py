"""A CIFAR-sized ResNet gradient step imported from PyTorch: gradir against
PyTorch eager and torch.compile, float32, side by side in one process per
thread count.

    build/venv/bin/python bench/cnn.py                 # threads 1 and 2
    build/venv/bin/python bench/cnn.py --threads 1 [--batch 32] [--ops] [--no-compile] [--json PATH]

The model (nobody tuned gradir for it): a 3x3 conv stem (3->32, padding 1)
with BatchNorm (training mode: batch statistics) and relu, a 3x3 max pool
of stride 2 and padding 1 (overlapping windows), a residual basic block of
two 3x3 convs with BatchNorm (32 channels, 16x16), a 3x3 conv of stride 2
(32->64), a second basic block (64 channels, 8x8), global average pooling,
a dense layer and cross_entropy; batch 32 of 3x32x32 images.  gradir runs
``import_module`` (torch.export -> rlx), ``rlx-gradient`` with respect to
every parameter and ``gradir.compile`` (checked against torch.autograd, and
bitwise the same from one call to the next); torch runs the model and
``torch.autograd.grad``, eager and through ``torch.compile`` (inductor;
``--no-compile`` leaves it out).  All time the loss and every parameter
gradient (median of the calls made in 2 s after a warm-up call; wall time,
and the process's CPU time, steadier on a shared machine); "first call" is
gradir's import_module, rlx-gradient, compile (the compile cache off) and
first run.  Ratios are torch time / gradir time (>1: gradir faster).
``--ops``: also each rlx op of the gradient program compiled alone (the
slowest 15, with the sum per op kind; CPU time), to see where gradir's time
goes.  Prints the CPU, its vector ISA and the load average.  ``--json
PATH``: the tables also go to PATH with their provenance (bench/_results.py).
"""

from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import cpu  # noqa: E402  bench/cpu.py: child_env, the header
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance
import _steps  # noqa: E402  bench/_steps.py: the step's timing and tables


def build_model(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b1 = nn.BatchNorm2d(c)
            self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b2 = nn.BatchNorm2d(c)

        def forward(self, x):
            return torch.relu(x + self.b2(self.c2(torch.relu(self.b1(self.c1(x))))))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 32, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(32)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.block1 = Block(32)
            self.down = nn.Conv2d(32, 64, 3, stride=2, padding=1)
            self.block2 = Block(64)
            self.fc = nn.Linear(64, 10)

        def forward(self, x, y):
            h = self.pool(torch.relu(self.bn(self.stem(x))))
            h = self.block2(torch.relu(self.down(self.block1(h))))
            h = torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)
            return torch.nn.functional.cross_entropy(self.fc(h), y)

    torch.manual_seed(0)
    return Net().train()


def run(threads: int, batch: int, ops: bool, compiled: bool) -> dict:
    import numpy as np
    import torch

    import gradir
    from gradir.frontends.torch import import_module

    torch.set_num_threads(threads)
    model = build_model(torch)
    x = torch.randn(batch, 3, 32, 32)
    y = torch.randint(0, 10, (batch,))
    params = list(model.parameters())
    t0 = time.perf_counter()
    module = import_module(model, (x, y))
    wrt = ",".join(str(i) for i in range(2, 2 + len(params)))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    step = gradir.compile(module, threads=threads)["main_adjoint"]
    args = [x.numpy(), y.numpy()] + [p.detach().numpy().copy() for p in params]
    got = step(*args)
    first = time.perf_counter() - t0
    want = torch.autograd.grad(model(x, y), params)
    for g, w in zip(got[1:], want):
        np.testing.assert_allclose(g, w.numpy(), rtol=2e-3, atol=2e-4)
    row = {"threads": threads, "first_s": first}
    _steps.time_step(row, step, args, model, (x, y), params, compiled)
    if ops:
        row["ops"] = op_times(module, threads)
    return row


def op_times(module, threads: int) -> list:
    """(seconds, op name, first line) of each rlx op of @main_adjoint
    compiled alone on random operands (the median CPU time of its calls;
    identical ops once)."""
    import numpy as np
    from mlir import ir

    import gradir

    dtypes = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32,
              "i1": np.bool_}
    rng = np.random.default_rng(0)
    seen, rows = {}, []
    with module.context:
        for f in module.body.operations:
            if ir.StringAttr(f.attributes["sym_name"]).value != "main_adjoint":
                continue
            for op in f.regions[0].blocks[0].operations:
                name = op.operation.name
                types = [str(v.type) for v in list(op.operands) + list(op.results)]
                if not name.startswith("rlx.") or name == "rlx.constant" or \
                        any("tuple" in t for t in types):
                    continue
                attrs = op.operation.attributes
                text = ", ".join(f"{k} = {attrs[k]}" for k in attrs)
                ins = [str(v.type) for v in op.operands]
                outs = [str(r.type) for r in op.results]
                line = (f'"{name}"({", ".join(f"%a{i}" for i in range(len(ins)))}) '
                        f'{{{text}}} : ({", ".join(ins)}) -> ({", ".join(outs)})')
                if line not in seen:
                    src = (f"func.func @f({', '.join(f'%a{i}: {t}' for i, t in enumerate(ins))})"
                           f" -> ({', '.join(outs)}) {{\n  %r:{len(outs)} = {line}\n  return "
                           f"{', '.join(f'%r#{i}' for i in range(len(outs)))} : "
                           f"{', '.join(outs)}\n}}")
                    fn = gradir.compile(gradir.parse(src), threads=threads)["f"]
                    vals = []
                    for t in ins:
                        *shape, elt = t[len("tensor<"):-1].split("x")
                        dt = dtypes[elt]
                        shape = [int(s) for s in shape]
                        vals.append(rng.integers(0, 4, shape).astype(dt) if dt in (np.int64, np.int32)
                                    else (rng.random(shape) > 0.5) if dt is np.bool_
                                    else rng.standard_normal(shape).astype(dt))
                    seen[line] = _steps.timeit(lambda: fn(*vals), 0.2)[1]
                rows.append((seen[line], name, line))
    return rows


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--ops", "--no-compile"),
               valued=("--threads", "--batch", "--child", "--json"))
    batch = int(argv[argv.index("--batch") + 1]) if "--batch" in argv else 32
    ops, compiled = "--ops" in argv, "--no-compile" not in argv
    if "--child" in argv:
        threads = int(argv[argv.index("--child") + 1])
        cpu.pin(threads)
        print("ROW " + json.dumps(run(threads, batch, ops, compiled)))
        return 0
    threads = [1, 2]
    if "--threads" in argv:
        threads = [int(t) for t in argv[argv.index("--threads") + 1].split(",")]
    rows = _steps.run_children(__file__, threads, ["--batch", str(batch)]
                               + (["--ops"] if ops else [])
                               + ([] if compiled else ["--no-compile"]))
    if rows is None:
        return 1
    tables = _steps.step_tables(f"resnet-cifar{batch}", "ResNet gradient step imported from "
                                "PyTorch: gradir against PyTorch eager and torch.compile", rows)
    path = _results.json_option(argv)
    if path:
        notes = [f"gradir's host detection: {_steps.machine()}.", _steps.STEP_NOTE]
        if batch != 32:
            notes.append(f"--batch {batch} (default 32).")
        _results.save_results(path, "cnn", tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A Transformer encoder layer's gradient step imported from PyTorch:
gradir against PyTorch eager and torch.compile, float32, side by side in
one process per thread count.

    build/venv/bin/python bench/transformer.py                 # threads 1 and 2
    build/venv/bin/python bench/transformer.py --threads 1 [--batch 8] [--seq 128] [--ops] [--no-compile] [--json PATH]

The model (nobody tuned gradir for it): ``nn.TransformerEncoderLayer(256,
4, 1024, dropout=0, batch_first=True, norm_first=True)`` (pre-norm: layer
norm, 4-head self-attention, residual, layer norm, 256-1024-256 relu
feed-forward, residual), the mean over the sequence, ``Linear(256, 10)``
and cross_entropy; batch 8 of 128 tokens of width 256.  gradir runs
``import_module`` (torch.export -> rlx), ``rlx-gradient`` with respect to
every parameter and ``gradir.compile``; its loss and gradients are checked
against torch.autograd (each gradient to 1e-4 of its largest element, the
loss to 1e-4 relative).  torch runs the model and ``torch.autograd.grad``,
eager and through ``torch.compile`` (inductor; ``--no-compile`` leaves it
out).  All time the loss and every parameter gradient (median of the calls
made in 2 s after a warm-up call; wall time, and the process's CPU time,
steadier on a shared machine); "first call" is gradir's import_module,
rlx-gradient, compile (the compile cache off) and first run.  Ratios are
torch time / gradir time (>1: gradir faster).  ``--ops``: also each rlx op
of the gradient program (weight gradients of batched matmuls folded as
rlx-to-linalg folds them) compiled alone (bench/cnn.py's breakdown: the
slowest 15, and the sum per op kind; CPU time), to see where gradir's time goes.
Prints the CPU, its vector ISA and the load average.  ``--json PATH``: the
tables also go to PATH with their provenance (bench/_results.py).
"""

from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import cpu  # noqa: E402  bench/cpu.py: child_env, pin
import cnn  # noqa: E402  bench/cnn.py: op_times
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance
import _steps  # noqa: E402  bench/_steps.py: the step's timing and tables


WIDTH, HEADS, FFN, CLASSES = 256, 4, 1024, 10


def build_model(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(WIDTH, HEADS, FFN, dropout=0.0,
                                                    batch_first=True, norm_first=True)
            self.head = nn.Linear(WIDTH, CLASSES)

        def forward(self, x, y):
            h = self.layer(x).mean(1)
            return nn.functional.cross_entropy(self.head(h), y)

    torch.manual_seed(0)
    return Net().train()


def check(got, loss, want) -> None:
    """gradir's loss and gradients against torch.autograd's: the loss to
    1e-4 relative, each gradient to 1e-4 of its largest element."""
    import numpy as np
    np.testing.assert_allclose(got[0], loss.detach().numpy(), rtol=1e-4)
    for g, w in zip(got[1:], want):
        w = w.numpy()
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


def run(threads: int, batch: int, seq: int, ops: bool, compiled: bool) -> dict:
    import torch

    import gradir
    from gradir.frontends.torch import import_module

    torch.set_num_threads(threads)
    model = build_model(torch)
    x = torch.randn(batch, seq, WIDTH)
    y = torch.randint(0, CLASSES, (batch,))
    params = list(model.parameters())
    t0 = time.perf_counter()
    module = import_module(model, (x, y))
    wrt = ",".join(str(i) for i in range(2, 2 + len(params)))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    step = gradir.compile(module, threads=threads, functions=["main_adjoint"])["main_adjoint"]
    args = [x.numpy(), y.numpy()] + [p.detach().numpy().copy() for p in params]
    got = step(*args)
    first = time.perf_counter() - t0
    loss = model(x, y)
    check(got, loss, torch.autograd.grad(loss, params))
    row = {"threads": threads, "first_s": first}
    _steps.time_step(row, step, args, model, (x, y), params, compiled)
    if ops:
        # The program as rlx-to-linalg sees it: weight gradients of batched
        # matmuls already one 2-D matmul each (conversion/linalg/matmul.py).
        from gradir.conversion.linalg.matmul import fold_batch_sums
        folded = gradir.parse(str(module))
        with folded.context:
            fold_batch_sums(folded.operation)
        row["ops"] = cnn.op_times(folded, threads)
    return row


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--ops", "--no-compile"),
               valued=("--threads", "--batch", "--seq", "--child", "--json"))
    batch = int(argv[argv.index("--batch") + 1]) if "--batch" in argv else 8
    seq = int(argv[argv.index("--seq") + 1]) if "--seq" in argv else 128
    ops, compiled = "--ops" in argv, "--no-compile" not in argv
    if "--child" in argv:
        threads = int(argv[argv.index("--child") + 1])
        cpu.pin(threads)
        print("ROW " + json.dumps(run(threads, batch, seq, ops, compiled)))
        return 0
    threads = [1, 2]
    if "--threads" in argv:
        threads = [int(t) for t in argv[argv.index("--threads") + 1].split(",")]
    rows = _steps.run_children(__file__, threads, ["--batch", str(batch), "--seq", str(seq)]
                               + (["--ops"] if ops else [])
                               + ([] if compiled else ["--no-compile"]))
    if rows is None:
        return 1
    tables = _steps.step_tables(f"encoder{batch}x{seq}", "Transformer encoder layer gradient "
                                "step imported from PyTorch: gradir against PyTorch eager and "
                                "torch.compile", rows)
    path = _results.json_option(argv)
    if path:
        notes = [f"gradir's host detection: {_steps.machine()}.", _steps.STEP_NOTE]
        if (batch, seq) != (8, 128):
            notes.append(f"--batch {batch} --seq {seq} (default 8 and 128).")
        _results.save_results(path, "transformer", tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

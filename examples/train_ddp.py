"""Data-parallel training on gradir's gradients: ``DistributedDataParallel``
around ``gradir.frontends.torch.compile``, N processes, gloo.

The demo's CNN (``train_digits_cnn.py``) on scikit-learn's 8x8 digits: every
process compiles the model (its forward and backward are gradir's compiled
code), wraps it in DDP and trains with ``torch.optim.Adam`` on its share of
every batch of 64 (the batches are the demo's; rank r takes the r-th slice);
DDP's hooks all-reduce gradir's gradients while the backward runs.

    torchrun --nproc-per-node=2 examples/train_ddp.py --quick     # one machine
    python examples/train_ddp.py --nproc 2 --quick                # the same, spawning itself
    torchrun --nnodes=2 --node-rank=0 --nproc-per-node=4 \\
        --rdzv-backend=c10d --rdzv-endpoint=host0:29400 examples/train_ddp.py   # two machines
                                                            # (--node-rank=1 on the other)

Checks itself, and exits non-zero otherwise: the first step's averaged
gradients equal those of one PyTorch eager process on the whole batch
(1e-5), every process ends with the same parameters, and the test accuracy
reaches the threshold.
"""

from __future__ import annotations

import argparse
import copy
import os
import socket
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_digits_cnn import BATCH, EPOCHS, LR, QUICK_EPOCHS, batches, load_digits_split, \
    make_model  # noqa: E402


def first_step_reference(model, x, y):
    """The gradients of one eager process on the whole batch."""
    ref = copy.deepcopy(model)
    ref(x, y)[0].backward()
    return [p.grad for p in ref.parameters()]


def train(args) -> bool:
    import torch
    import torch.distributed as dist
    import torch.nn as nn

    import gradir.frontends.torch as gt

    torch.set_num_threads(1)
    dist.init_process_group("gloo")               # "nccl" for CUDA tensors
    rank, world = dist.get_rank(), dist.get_world_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    if BATCH % world:
        raise SystemExit(f"the batch of {BATCH} does not split over {world} processes")
    share = BATCH // world
    epochs = args.epochs or (QUICK_EPOCHS if args.quick else EPOCHS)
    xtr, xte, ytr, yte = (torch.from_numpy(a) for a in load_digits_split())
    say(f"{world} processes (gloo), {share} images of every batch of {BATCH} each, "
        f"Adam lr {LR}, {epochs} epochs")

    model = make_model()                          # the same seed, the same weights everywhere
    mine = slice(rank * share, (rank + 1) * share)
    first = torch.from_numpy(batches(len(xtr), 1)[0])
    want = first_step_reference(model, xtr[first], ytr[first])
    t0 = time.perf_counter()
    compiled = gt.compile(model, (xtr[first][mine], ytr[first][mine]), threads=1)
    say(f"compiled in {time.perf_counter() - t0:.2f} s (each process)")
    ddp = nn.parallel.DistributedDataParallel(compiled)
    opt = torch.optim.Adam(ddp.parameters(), lr=LR)

    ok = True
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        losses = []
        for step, idx in enumerate(batches(len(xtr), epoch)):
            idx = torch.from_numpy(idx)[mine]
            opt.zero_grad()
            loss, _ = ddp(xtr[idx], ytr[idx])
            loss.backward()                       # gradir's backward, then DDP's all-reduce
            if epoch == 1 and step == 0:
                diff = max(float((p.grad - w).abs().max() / w.abs().max().clamp_min(1e-30))
                           for p, w in zip(model.parameters(), want))
                ok = ok and diff < 1e-5
                say(f"first step: averaged gradients vs one eager process on the whole "
                    f"batch, largest relative difference {diff:.1e} "
                    f"{'OK' if diff < 1e-5 else 'FAILED'}")
            opt.step()
            losses.append(loss.detach())
        mean = torch.stack(losses).mean()
        dist.all_reduce(mean)                      # the mean over the processes
        say(f"  epoch {epoch:2d}/{epochs} loss {float(mean) / world:.4f}  "
            f"{time.perf_counter() - t0:.3f} s")

    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    low, high = flat.clone(), flat.clone()
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    same = bool(torch.equal(low, high))
    ok = ok and same
    say(f"parameters equal on every process: {'OK' if same else 'FAILED'}")

    if rank == 0:
        correct = 0
        with torch.no_grad():                     # the training shapes: padded batches
            for i in range(0, len(xte), share):
                xb, yb = xte[i:i + share], yte[i:i + share]
                n = len(xb)
                xb = torch.cat([xb, xb.new_zeros((share - n,) + xb.shape[1:])])
                yb = torch.cat([yb, yb.new_zeros(share - n)])
                correct += int((compiled(xb, yb)[1][:n].argmax(1) == yte[i:i + n]).sum())
        acc = correct / len(xte)
        threshold = args.min_accuracy or (0.85 if args.quick else 0.93)
        good = acc >= threshold
        print(f"test accuracy {acc:.2%} (threshold {threshold:.0%}) "
              f"{'OK' if good else 'FAILED'}")
        ok = ok and good
    status = torch.tensor([0 if ok else 1])
    dist.all_reduce(status)
    dist.destroy_process_group()
    return int(status) == 0


def _spawned(rank, world, args):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    if not train(args):
        sys.exit(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", type=int, default=2,
                        help="processes to spawn when not started by torchrun (default 2)")
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"training epochs (default {EPOCHS}; --quick: {QUICK_EPOCHS})")
    parser.add_argument("--quick", action="store_true", help="a short run, same checks")
    parser.add_argument("--min-accuracy", type=float, default=None,
                        help="test accuracy to reach (default 0.93; --quick: 0.85)")
    args = parser.parse_args(argv)
    if "RANK" in os.environ:                      # started by torchrun
        return 0 if train(args) else 1
    import torch.multiprocessing as mp
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    try:
        mp.spawn(_spawned, args=(args.nproc, args), nprocs=args.nproc, join=True)
    except mp.ProcessExitedException as err:
        print(f"FAILED: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

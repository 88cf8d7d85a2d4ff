# RUN: %PYTHON %s | FileCheck %s
# gradir.frontends.torch.compile under DistributedDataParallel (gloo, CPU):
# two processes on 127.0.0.1, each with half of every batch, train 3 steps of
# SGD (float64); DDP's all-reduce averages gradir's gradients, so the
# parameters equal those of one process training on the whole batch.

import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

import gradir.frontends.torch as gt

WORLD = 2
STEPS = 3
BATCH = 8
TOL = 1e-10


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3)).double()


def data():
    torch.manual_seed(1)
    return [(torch.randn(BATCH, 6, dtype=torch.float64),
             torch.randn(BATCH, 3, dtype=torch.float64)) for _ in range(STEPS)]


def worker(rank, port, out_dir):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=WORLD)
    try:
        model = make_model()
        half = BATCH // WORLD
        batches = [(x[rank * half:(rank + 1) * half], y[rank * half:(rank + 1) * half])
                   for x, y in data()]
        compiled = gt.compile(model, (batches[0][0],), cache=False, threads=1)
        ddp = nn.parallel.DistributedDataParallel(compiled)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        for x, y in batches:
            opt.zero_grad()
            out = ddp(x)
            assert type(out.grad_fn).__name__.startswith("GradirFunction")
            F.mse_loss(out, y).backward()
            opt.step()
        torch.save([p.detach().clone() for p in model.parameters()],
                   os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    # one process, whole batch, plain PyTorch
    ref = make_model()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for x, y in data():
        opt.zero_grad()
        F.mse_loss(ref(x), y).backward()
        opt.step()
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(free_port(), out_dir), nprocs=WORLD, join=True)
        ranks = [torch.load(os.path.join(out_dir, f"rank{r}.pt")) for r in range(WORLD)]
    for params in ranks:
        diff = max((p - q).abs().max().item() for p, q in zip(params, ref.parameters()))
        assert diff <= TOL, diff
    moved = max((p - q).abs().max().item() for p, q in zip(ranks[0], make_model().parameters()))
    assert moved > 1e-3
    print("ddp ok")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
# CHECK: ddp ok

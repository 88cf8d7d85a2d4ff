# The data-parallel example as docs/pytorch.md runs it: torchrun starts two
# processes on this machine, each compiles the demo's CNN with
# gradir.frontends.torch.compile, wraps it in DistributedDataParallel (gloo)
# and trains 3 epochs with torch.optim.Adam on its half of every batch; the
# script checks the first step's averaged gradients against one eager process
# on the whole batch, the parameters of the two processes against each other
# and the test accuracy (and exits non-zero otherwise).
# RUN: %PYTHON -m torch.distributed.run --nproc-per-node=2 %gradir_src/examples/train_ddp.py --quick 2>&1 | FileCheck %s
# CHECK: 2 processes (gloo), 32 images of every batch of 64 each
# CHECK: first step: averaged gradients vs one eager process on the whole batch, {{.*}} OK
# CHECK: epoch  3/3 loss
# CHECK: parameters equal on every process: OK
# CHECK: test accuracy {{.*}} OK

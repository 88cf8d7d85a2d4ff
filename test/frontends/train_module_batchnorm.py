# RUN: %PYTHON %s | FileCheck %s
# gradir.frontends.torch.compile with BatchNorm: in training mode each forward
# updates running_mean, running_var (unbiased batch variance, momentum) and
# num_batches_tracked in place as PyTorch does; in eval mode the forward reads
# the buffers' current values; momentum=None (a cumulative average) too,
# imported with momentum 1 (the batch statistics) and averaged with
# 1/num_batches_tracked outside.  Trained side by side with the plain PyTorch
# model from the same weights (float64, SGD): after every step the parameters
# and the buffers equal PyTorch's; then eval outputs equal eager's.  The
# importer's buffers=True puts the buffers after the parameters and returns
# the mutated ones after the outputs; by default buffers stay constants.

import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir.frontends.torch as gt  # noqa: E402
from gradir.frontends.torch.importer import (buffer_arguments, import_program,  # noqa: E402
                                             mutated_buffers)

torch.set_default_dtype(torch.float64)
TOL = 1e-10


class BNNet(nn.Module):
    """conv -> BatchNorm2d -> relu -> conv -> BatchNorm2d (momentum 0.3) ->
    pool -> linear -> BatchNorm1d -> linear."""

    def __init__(self, momentum=0.1):
        super().__init__()
        torch.manual_seed(1)
        self.conv1 = nn.Conv2d(2, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4, momentum=momentum)
        self.conv2 = nn.Conv2d(4, 6, 3)
        self.bn2 = nn.BatchNorm2d(6, momentum=0.3, affine=False)
        self.fc1 = nn.Linear(6 * 3 * 3, 10)
        self.bn3 = nn.BatchNorm1d(10, momentum=momentum)
        self.fc2 = nn.Linear(10, 3)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(self.bn2(self.conv2(x)), 2)
        x = F.relu(self.bn3(self.fc1(x.flatten(1))))
        return self.fc2(x)


def max_diff(a, b):
    return max((p.double() - q.double()).abs().max().item() for p, q in zip(a, b))


def batches(n=3, batch=5):
    torch.manual_seed(3)
    return [(torch.randn(batch, 2, 8, 8) * 2 + 1, torch.randint(0, 3, (batch,)))
            for _ in range(n)]


@run
def test_train_updates_buffers_then_eval(momentum=0.1):
    model = BNNet(momentum)
    ref = copy.deepcopy(model)
    data = batches()
    compiled = gt.compile(model, (data[0][0],), cache=False)
    opts = [torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9) for net in (model, ref)]
    for step, (x, y) in enumerate(data):
        losses = []
        for net, opt in zip((compiled, ref), opts):
            opt.zero_grad()
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) <= TOL, (step, losses)
        assert max_diff(model.parameters(), ref.parameters()) <= TOL, step
        for (name, b), (_, rb) in zip(model.named_buffers(), ref.named_buffers()):
            assert b.dtype == rb.dtype and (b.double() - rb.double()).abs().max() <= TOL, \
                (step, name, b, rb)
        assert int(model.bn1.num_batches_tracked) == step + 1
    # the statistics moved away from their initial values (0 and 1)
    assert model.bn1.running_mean.abs().max() > 0.01
    assert (model.bn3.running_var - 1).abs().max() > 0.01
    # eval: the current running statistics, read at each call
    compiled.eval()
    ref.eval()
    x = batches(1, 4)[0][0]
    with torch.no_grad():
        out, want = compiled(x), ref(x)
    assert (out - want).abs().max().item() <= TOL
    with torch.no_grad():
        for net in (model, ref):
            net.bn1.running_mean.add_(0.5)
            net.bn3.running_var.mul_(2.0)
        out, want = compiled(x), ref(x)
    assert (out - want).abs().max().item() <= TOL
    tracked = [b.clone() for b in model.buffers()]
    with torch.no_grad():
        compiled(x)
    assert max_diff(model.buffers(), tracked) == 0      # eval mutates nothing
    # back to training: the training variant, buffers updated again
    compiled.train()
    ref.train()
    x, y = data[0]
    F.cross_entropy(compiled(x), y).backward()
    F.cross_entropy(ref(x), y).backward()
    assert max_diff(model.buffers(), ref.buffers()) <= TOL
    assert int(model.bn3.num_batches_tracked) == 4
    print("batchnorm train/eval ok, momentum", momentum)
# CHECK-LABEL: TEST: test_train_updates_buffers_then_eval
# CHECK: batchnorm train/eval ok, momentum 0.1


@run
def test_cumulative_average():
    # momentum=None on bn1 and bn3 (bn2 keeps 0.3): the same checks; the
    # layers' momentum is None again after compiling
    test_train_updates_buffers_then_eval(None)
    model = BNNet(None)
    x = batches(1)[0][0]
    gt.compile(model, (x,), cache=False)
    assert model.bn1.momentum is None and model.bn3.momentum is None
    # float32, 5 steps of SGD: 1e-5 (Adam would magnify the rounding of the
    # convolutions' bias gradients, zero before a BatchNorm but for rounding)
    torch.set_default_dtype(torch.float32)
    try:
        model = BNNet(None)
        ref = copy.deepcopy(model)
        data = [(x.float(), y) for x, y in batches(5)]
        compiled = gt.compile(model, (data[0][0],), cache=False)
        opts = [torch.optim.SGD(net.parameters(), lr=0.01) for net in (model, ref)]
        for x, y in data:
            for net, opt in zip((compiled, ref), opts):
                opt.zero_grad()
                F.cross_entropy(net(x), y).backward()
                opt.step()
        assert max_diff(model.parameters(), ref.parameters()) <= 1e-5
        assert max_diff(model.buffers(), ref.buffers()) <= 1e-5
        assert int(model.bn1.num_batches_tracked) == 5
    finally:
        torch.set_default_dtype(torch.float64)
    print("cumulative average ok")
# CHECK-LABEL: TEST: test_cumulative_average
# CHECK: batchnorm train/eval ok, momentum None
# CHECK: cumulative average ok


@run
def test_no_grad_training_forward_updates():
    # a training-mode forward under no_grad (@main only) updates them too
    model = BNNet()
    ref = copy.deepcopy(model)
    x = batches(1)[0][0]
    compiled = gt.compile(model, (x,), cache=False)
    with torch.no_grad():
        out, want = compiled(x), ref(x)
    assert (out - want).abs().max().item() <= TOL
    assert max_diff(model.buffers(), ref.buffers()) <= TOL
    print("no_grad ok")
# CHECK-LABEL: TEST: test_no_grad_training_forward_updates
# CHECK: no_grad ok


@run
def test_importer_buffers_option():
    model = BNNet()
    x = batches(1)[0][0]
    default, _ = import_program(model, (x,))
    n_params = len(list(model.parameters()))
    assert len(default.body.operations[0].arguments) == 1 + n_params
    module, exported = import_program(model, (x,), buffers=True)
    names = buffer_arguments(model, exported)
    assert names == [n for n, _ in model.named_buffers()]
    fn = module.body.operations[0]
    assert len(fn.arguments) == 1 + n_params + len(names)
    mutated = mutated_buffers(model, exported)
    assert mutated == names                             # training mode: all of them
    print(len(fn.type.results), "results:", ", ".join(mutated))
    model.eval()
    module, exported = import_program(model, (x,), buffers=True)
    print("eval: mutated", mutated_buffers(model, exported),
          "arguments", len(buffer_arguments(model, exported)))
# CHECK-LABEL: TEST: test_importer_buffers_option
# CHECK: 10 results: bn1.running_mean, bn1.running_var, bn1.num_batches_tracked, bn2.running_mean, bn2.running_var, bn2.num_batches_tracked, bn3.running_mean, bn3.running_var, bn3.num_batches_tracked
# CHECK: eval: mutated [] arguments 6

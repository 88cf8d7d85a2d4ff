# RUN: %PYTHON %s | FileCheck %s
# gradir.frontends.torch.compile: a drop-in nn.Module whose forward runs
# @main_fwd and whose backward() runs @main_bwd (rlx-gradient split=true).
# Trained side by side with the plain PyTorch model from the same weights
# (float64): after every step of SGD (momentum) and Adam + StepLR the
# parameters equal PyTorch's; eval mode under no_grad runs @main only; a new
# batch size compiles a new variant; gradient clipping and input gradients.

import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir.frontends.torch as gt  # noqa: E402

torch.set_default_dtype(torch.float64)
TOL = 1e-10


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 4))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        return self.fc(x.flatten(1))


def max_diff(a, b):
    return max((p - q).abs().max().item() for p, q in zip(a, b))


def side_by_side(model, make_opt, batches, loss_fn, sched=None, clip=None):
    """Trains ``model`` compiled by gradir and a copy in PyTorch on the same
    batches; checks the parameters after every step.  Returns the compiled
    module."""
    ref = copy.deepcopy(model)
    compiled = gt.compile(model, (batches[0][0],), cache=False)
    assert all(p is q for p, q in zip(compiled.parameters(), model.parameters()))
    assert len(list(compiled.parameters())) == len(list(model.parameters()))
    opts = [make_opt(compiled.parameters()), make_opt(ref.parameters())]
    scheds = [sched(o) for o in opts] if sched else [None, None]
    for step, (x, y) in enumerate(batches):
        losses = []
        for net, opt, sch in zip((compiled, ref), opts, scheds):
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
            opt.step()
            if sch:
                sch.step()
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) <= TOL, (step, losses)
        diff = max_diff(model.parameters(), ref.parameters())
        assert diff <= TOL, (step, diff)
        assert all(p.grad is not None for p in model.parameters())
    compiled.ref = ref
    return compiled


def regression_batches(n=5, batch=6):
    torch.manual_seed(2)
    return [(torch.randn(batch, 8), torch.randn(batch, 4)) for _ in range(n)]


def digit_batches(n=5, batch=4):
    torch.manual_seed(3)
    return [(torch.randn(batch, 1, 8, 8), torch.randint(0, 5, (batch,))) for _ in range(n)]


@run
def test_mlp_sgd_momentum():
    compiled = side_by_side(mlp(), lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
                            regression_batches(), F.mse_loss)
    assert len(compiled.variants) == 1
    print("mlp sgd ok")
# CHECK-LABEL: TEST: test_mlp_sgd_momentum
# CHECK: mlp sgd ok


@run
def test_mlp_adam_steplr():
    side_by_side(mlp(), lambda ps: torch.optim.Adam(ps, lr=0.01), regression_batches(),
                 F.mse_loss, sched=lambda o: torch.optim.lr_scheduler.StepLR(o, 2, 0.5))
    print("mlp adam ok")
# CHECK-LABEL: TEST: test_mlp_adam_steplr
# CHECK: mlp adam ok


@run
def test_cnn_sgd_and_adam():
    side_by_side(CNN(), lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9),
                 digit_batches(), F.cross_entropy)
    compiled = side_by_side(CNN(), lambda ps: torch.optim.Adam(ps, lr=0.01), digit_batches(),
                            F.cross_entropy,
                            sched=lambda o: torch.optim.lr_scheduler.StepLR(o, 2, 0.5))
    # eval mode, no_grad: @main only, nothing saved, no graph
    compiled.eval()
    compiled.ref.eval()
    x = digit_batches(1, 3)[0][0]
    with torch.no_grad():
        out = compiled(x)
        want = compiled.ref(x)
    assert not out.requires_grad and out.grad_fn is None
    assert (out - want).abs().max().item() <= TOL
    eval_keys = [k for k in compiled.variants if not k[0]]
    assert len(eval_keys) == 1 and eval_keys[0][1] is False      # forward only
    print("cnn ok")
# CHECK-LABEL: TEST: test_cnn_sgd_and_adam
# CHECK: cnn ok


@run
def test_new_batch_size_recompiles():
    model = mlp()
    ref = copy.deepcopy(model)
    compiled = gt.compile(model, (torch.randn(6, 8),), cache=False)
    assert len(compiled.variants) == 1
    for batch in (6, 3, 6, 3):
        x, y = torch.randn(batch, 8), torch.randn(batch, 4)
        for net in (compiled, ref):
            net.zero_grad()
            F.mse_loss(net(x), y).backward()
        assert max_diff([p.grad for p in model.parameters()],
                        [p.grad for p in ref.parameters()]) <= TOL
    assert len(compiled.variants) == 2
    print("recompile ok")
# CHECK-LABEL: TEST: test_new_batch_size_recompiles
# CHECK: recompile ok


@run
def test_gradient_clipping():
    side_by_side(mlp(), lambda ps: torch.optim.SGD(ps, lr=0.5), regression_batches(3),
                 lambda out, y: 100 * F.mse_loss(out, y), clip=0.1)
    print("clip ok")
# CHECK-LABEL: TEST: test_gradient_clipping
# CHECK: clip ok


class WithLoss(nn.Module):
    """The loss inside, two outputs: (loss, logits)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.fc = nn.Linear(8, 3)
        self.scale = nn.Parameter(torch.ones(3), requires_grad=False)   # frozen

    def forward(self, x, labels):
        logits = self.fc(x) * self.scale
        return F.cross_entropy(logits, labels), logits


@run
def test_input_gradients_and_outputs():
    model = WithLoss()
    ref = copy.deepcopy(model)
    x = torch.randn(4, 8, requires_grad=True)
    xr = x.detach().clone().requires_grad_(True)
    labels = torch.tensor([0, 2, 1, 2])
    compiled = gt.compile(model, (x, labels), cache=False)
    loss, logits = compiled(x, labels)
    rloss, rlogits = ref(xr, labels)
    # both outputs reach the gradient: loss + sum(logits^2)
    (loss + (logits ** 2).sum()).backward()
    (rloss + (rlogits ** 2).sum()).backward()
    assert (x.grad - xr.grad).abs().max().item() <= TOL
    assert max_diff([model.fc.weight.grad], [ref.fc.weight.grad]) <= TOL
    assert model.scale.grad is None
    print("inputs ok")
# CHECK-LABEL: TEST: test_input_gradients_and_outputs
# CHECK: inputs ok

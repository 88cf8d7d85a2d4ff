# RUN: %PYTHON %s | FileCheck %s
# The drop-in module's call plans (call_plan.py): after a call through the
# general path, the calls that match it run on its plan (data pointers
# straight to the compiled code).  Trained side by side with a module whose
# calls always take the general path, from the same weights: the losses, the
# gradients, the parameters and the buffers (BatchNorm's running statistics,
# a cumulative average among them) are bitwise the same after every step.  A
# call that differs from the plan (a frozen or replaced parameter, a replaced
# buffer or submodule, a non-contiguous input, eval mode, no_grad) takes the
# general path and gives eager PyTorch's results; a backward through the
# same forward twice is refused as before; a module that redefines how its
# parameters are listed is never planned.

import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir.frontends.torch as gt  # noqa: E402
from gradir.frontends.torch import call_plan  # noqa: E402

torch.set_default_dtype(torch.float64)
TOL = 1e-10


class Net(nn.Module):
    """conv -> BatchNorm2d -> relu -> pool -> linear -> BatchNorm1d (a
    cumulative average) -> linear, cross-entropy against integer labels;
    returns the loss and the logits."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 4 * 4, 8)
        self.bn2 = nn.BatchNorm1d(8, momentum=None)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x, y):
        h = F.max_pool2d(F.relu(self.bn1(self.conv(x))), 2)
        logits = self.fc2(F.relu(self.bn2(self.fc1(h.flatten(1)))))
        return F.cross_entropy(logits, y), logits


def batch(seed, n=5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 2, 8, 8, generator=g), torch.randint(0, 3, (n,), generator=g)


class _NoPlans(dict):
    """A ``Program.plans`` that keeps none: every call takes the general path."""

    def __setitem__(self, key, value):
        pass


def counting():
    """Counts the calls that run on a plan (``CallPlan.pointers`` found them)."""
    seen = {"planned": 0}
    pointers = call_plan.CallPlan.pointers

    def counted(self, inputs):
        found = pointers(self, inputs)
        seen["planned"] += found is not None
        return found
    call_plan.CallPlan.pointers = counted
    return seen


SEEN = counting()


def step(net, opt, x, y):
    opt.zero_grad()
    loss, logits = net(x, y)
    (loss + 0.1 * logits.square().mean()).backward()
    opt.step()
    return loss


def same(a, b):
    return all(torch.equal(p, q) for p, q in zip(a, b))


@run
def planned_equals_general():
    model = Net()
    other = copy.deepcopy(model)
    x, y = batch(0)
    planned = gt.compile(model, (x, y), cache=False)
    general = gt.compile(other, (x, y), cache=False)
    general._program.plans = _NoPlans()
    opts = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (model, other)]
    start = SEEN["planned"]
    bitwise = True
    for i in range(4):
        x, y = batch(i)
        la = step(planned, opts[0], x, y)
        grads = [p.grad.clone() for p in model.parameters()]
        lb = step(general, opts[1], x, y)
        bitwise &= torch.equal(la, lb) and same(grads, [p.grad for p in other.parameters()])
        bitwise &= same(model.parameters(), other.parameters())
        bitwise &= same(model.buffers(), other.buffers())
    print("plans:", sorted(planned._program.plans), "planned calls:", SEEN["planned"] - start)
    print("bitwise the same after every step:", bitwise)
    print("running statistics moved:", not torch.equal(model.bn2.running_var,
                                                       torch.ones_like(model.bn2.running_var)))


# CHECK-LABEL: TEST: planned_equals_general
# CHECK-NEXT: plans: [(True, True)] planned calls: 3
# CHECK-NEXT: bitwise the same after every step: True
# CHECK-NEXT: running statistics moved: True


def close(a, b):
    return all((p - q).abs().max().item() <= TOL for p, q in zip(a, b))


def both(net, ref, x, y, what):
    """One forward and backward of ``net`` and ``ref`` (eager); prints
    whether the losses, the gradients and the buffers agree; returns the
    names of the parameters that got no gradient."""
    outs = []
    for m in (net, ref):
        loss, logits = m(x, y)
        (loss + 0.1 * logits.square().mean()).backward()
        outs.append(loss)
    model = net.module
    grads = [(p.grad is None) == (q.grad is None) and (p.grad is None or close([p.grad], [q.grad]))
             for p, q in zip(model.parameters(), ref.parameters())]
    none = [n for n, p in model.named_parameters() if p.grad is None]
    for m in (model, ref):
        m.zero_grad()
    print(f"{what}: loss {close(outs[:1], outs[1:])}, gradients {all(grads)}, "
          f"buffers {close(model.buffers(), ref.buffers())}")
    return none


@run
def plan_follows_changes():
    model = Net()
    ref = copy.deepcopy(model)
    x, y = batch(0)
    net = gt.compile(model, (x, y), cache=False)
    both(net, ref, x, y, "first call")
    start = SEEN["planned"]
    both(net, ref, x, y, "planned")
    print("on the plan:", SEEN["planned"] - start == 1)
    for m in (model, ref):
        m.fc1.bias.requires_grad_(False)
    print("no gradient:", both(net, ref, x, y, "bias frozen"))
    for m in (model, ref):
        m.fc1.bias.requires_grad_(True)
    with torch.no_grad():
        w = torch.randn_like(model.fc2.weight)
    model.fc2.weight = nn.Parameter(w.clone())
    ref.fc2.weight = nn.Parameter(w.clone())
    print("no gradient:", both(net, ref, x, y, "parameter replaced"))
    torch.manual_seed(5)
    model.fc1 = nn.Linear(4 * 4 * 4, 8)
    ref.fc1 = copy.deepcopy(model.fc1)
    both(net, ref, x, y, "submodule replaced")
    old = model.bn1.running_mean
    model.bn1.running_mean = torch.full_like(old, 0.5)
    ref.bn1.running_mean = torch.full_like(old, 0.5)
    before = old.clone()
    both(net, ref, x, y, "buffer replaced")
    print("old buffer left alone:", torch.equal(old, before))
    xt = x.transpose(2, 3).contiguous().transpose(2, 3)
    both(net, ref, xt, y, "non-contiguous input")
    start = SEEN["planned"]
    both(net, ref, x, y, "planned again")
    print("on the plan:", SEEN["planned"] - start == 1)
    model.eval()
    ref.eval()
    with torch.no_grad():
        for i in range(2):
            got, want = net(x, y)[1], ref(x, y)[1]
            print(f"eval, no_grad call {i}: logits {close([got], [want])}")
    print("plans:", sorted(net._program.plans))


# CHECK-LABEL: TEST: plan_follows_changes
# CHECK-NEXT: first call: loss True, gradients True, buffers True
# CHECK-NEXT: planned: loss True, gradients True, buffers True
# CHECK-NEXT: on the plan: True
# CHECK-NEXT: bias frozen: loss True, gradients True, buffers True
# CHECK-NEXT: no gradient: ['fc1.bias']
# CHECK-NEXT: parameter replaced: loss True, gradients True, buffers True
# CHECK-NEXT: no gradient: []
# CHECK-NEXT: submodule replaced: loss True, gradients True, buffers True
# CHECK-NEXT: buffer replaced: loss True, gradients True, buffers True
# CHECK-NEXT: old buffer left alone: True
# CHECK-NEXT: non-contiguous input: loss True, gradients True, buffers True
# CHECK-NEXT: planned again: loss True, gradients True, buffers True
# CHECK-NEXT: on the plan: True
# CHECK-NEXT: eval, no_grad call 0: logits True
# CHECK-NEXT: eval, no_grad call 1: logits True
# CHECK-NEXT: plans: [(False, False), (True, True)]


@run
def backward_twice():
    model = Net()
    x, y = batch(0)
    net = gt.compile(model, (x, y), cache=False)
    net(x, y)[0].backward()
    start = SEEN["planned"]
    loss = net(x, y)[0]
    print("on the plan:", SEEN["planned"] - start == 1)
    loss.backward(retain_graph=True)
    try:
        loss.backward()
    except RuntimeError as err:
        print("refused:", err)


# CHECK-LABEL: TEST: backward_twice
# CHECK-NEXT: on the plan: True
# CHECK-NEXT: refused: gradir: backward through the same forward twice (the saved values are freed after the first backward)


class Listed(Net):
    """Lists its parameters its own way (as wrappers such as FSDP do)."""

    def named_parameters(self, *args, **kwargs):
        return super().named_parameters(*args, **kwargs)


@run
def own_listing_not_planned():
    model = Listed()
    ref = copy.deepcopy(model)
    x, y = batch(0)
    net = gt.compile(model, (x, y), cache=False)
    for i in range(2):
        both(net, ref, x, y, f"call {i}")
    print("plans:", sorted(net._program.plans))


# CHECK-LABEL: TEST: own_listing_not_planned
# CHECK-NEXT: call 0: loss True, gradients True, buffers True
# CHECK-NEXT: call 1: loss True, gradients True, buffers True
# CHECK-NEXT: plans: []

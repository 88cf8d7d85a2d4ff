# RUN: %PYTHON %s | FileCheck %s
# The drop-in module in training mode under torch.no_grad(), or with nothing
# requiring grad: the call runs the variant's @main (the plain forward, which
# saves nothing), not @main_fwd (which also returns the values the backward
# needs), on the general path and on the call plan.  The outputs are bitwise
# those of the grad-mode forward from the same state; BatchNorm's running
# statistics and num_batches_tracked are updated as in the grad-mode forward
# (bitwise) and as eager PyTorch updates them.  Evidence that @main_fwd did
# not run: GradirFunction.apply (its only caller) is counted, the outputs
# carry no grad_fn, and the plan left for the mode runs @main.

import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir.frontends.torch as gt  # noqa: E402
from gradir.frontends.torch import training  # noqa: E402

TOL = 1e-5     # float32 against eager PyTorch


class Net(nn.Module):
    """conv -> BatchNorm2d -> relu -> pool -> linear -> BatchNorm1d -> linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 4 * 4, 10)
        self.bn2 = nn.BatchNorm1d(10, momentum=0.3)
        self.fc2 = nn.Linear(10, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv(x))), 2)
        return self.fc2(F.relu(self.bn2(self.fc1(x.flatten(1)))))


class Counted:
    """Counts GradirFunction.apply calls (each one runs @main_fwd)."""

    def __enter__(self):
        self.calls = 0
        self.apply = training.GradirFunction.apply

        def counted(*args):
            self.calls += 1
            return self.apply(*args)
        training.GradirFunction.apply = counted
        return self

    def __exit__(self, *exc):
        training.GradirFunction.apply = self.apply


def state(model):
    return [b.clone() for b in model.buffers()]


def restore(model, saved):
    with torch.no_grad():
        for b, s in zip(model.buffers(), saved):
            b.copy_(s)


def same(a, b) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a, b))


def check(compiled, model, x, ref, no_grad):
    """One grad-mode forward and one forward under ``no_grad`` (a context
    manager factory) from the same buffers: bitwise equal outputs and
    buffers, buffers as eager's; returns how many times @main_fwd ran in
    the second."""
    start = state(model)
    want = compiled(x)
    assert want.grad_fn is not None
    after = state(model)
    restore(model, start)
    with Counted() as count, no_grad():
        out = compiled(x)
    assert out.grad_fn is None and not out.requires_grad
    assert torch.equal(out, want.detach()), (out - want).abs().max()
    assert same(state(model), after)
    with torch.no_grad():
        eager = ref(x)
    assert (out - eager).abs().max().item() <= TOL
    assert max((p - q).abs().max().item() for p, q in zip(model.buffers(), ref.buffers())
               if p.is_floating_point()) <= TOL
    assert [b for b in model.buffers() if not b.is_floating_point()] == \
        [b for b in ref.buffers() if not b.is_floating_point()]
    return count.calls


@run
def test_no_grad_runs_main():
    model = Net()
    ref = copy.deepcopy(model)
    torch.manual_seed(3)
    xs = [torch.randn(6, 3, 8, 8) for _ in range(3)]
    compiled = gt.compile(model, (xs[0],), cache=False)
    n_variants = len(compiled.variants)
    # three calls: the first on the general path, the others on its plan
    calls = [check(compiled, model, x, ref, torch.no_grad) for x in xs]
    print("main_fwd calls under no_grad:", calls)
    print("variants:", len(compiled.variants) - n_variants, "new")
    plan = compiled._program.plans[(True, False)]
    print("plan runs main_fwd:", plan.apply)
# CHECK-LABEL: TEST: test_no_grad_runs_main
# CHECK: main_fwd calls under no_grad: [0, 0, 0]
# CHECK: variants: 0 new
# CHECK: plan runs main_fwd: False


@run
def test_nothing_requires_grad():
    # grad mode on, but the parameters frozen and the input plain: @main too
    model = Net()
    ref = copy.deepcopy(model)
    torch.manual_seed(4)
    xs = [torch.randn(6, 3, 8, 8) for _ in range(2)]
    compiled = gt.compile(model, (xs[0],), cache=False)

    class Frozen:
        def __enter__(self):
            for p in model.parameters():
                p.requires_grad_(False)

        def __exit__(self, *exc):
            for p in model.parameters():
                p.requires_grad_(True)

    calls = [check(compiled, model, x, ref, Frozen) for x in xs]
    print("main_fwd calls with nothing requiring grad:", calls)
    # and grad mode again: @main_fwd, a backward that fills .grad
    with Counted() as count:
        compiled(xs[0]).sum().backward()
    print("main_fwd calls in grad mode:", count.calls,
          all(p.grad is not None for p in model.parameters()))
# CHECK-LABEL: TEST: test_nothing_requires_grad
# CHECK: main_fwd calls with nothing requiring grad: [0, 0]
# CHECK: main_fwd calls in grad mode: 1 True

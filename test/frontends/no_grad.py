# RUN: %PYTHON %s | FileCheck %s
# Values that carry no gradient in PyTorch: x.detach(), t.detach_(), and
# everything computed under torch.no_grad() / set_grad_enabled(False)
# (torch.export's wrap_with_set_grad_enabled regions) import behind a
# grad.no_grad, so rlx-gradient's gradients equal torch.autograd's (float64).

import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import Fn, check_gradients, randn, run  # noqa: E402

torch.set_default_dtype(torch.float64)


def check_loss(fn, *args, **params):
    """The value and the gradients of a scalar ``fn(model, *args)`` against
    torch, w.r.t. the float inputs and the parameters."""
    model = Fn(fn, **params)
    return check_gradients(model, args, loss=model)


@run
def test_detach():
    # sum(y * y.detach()): d/dw = x * y, not 2 x y
    module = check_loss(lambda m, x: (x * m.w * (x * m.w).detach()).sum(),
                        randn(5), w=randn(5))
    print(module.body.operations[0])
    # a parameter detached, and a detached value feeding further arithmetic
    check_loss(lambda m, x: (torch.tanh(m.w.detach() * x) * m.w).sum()
               + ((x @ m.v).detach().exp() * (x @ m.v)).sum(), randn(4, 3), w=randn(3),
               v=randn(3, 2))
    print("detach ok")
# CHECK-LABEL: TEST: test_detach
# CHECK: "grad.no_grad"
# CHECK: detach ok


@run
def test_detach_in_place():
    # t.detach_() detaches t itself: its later uses carry no gradient either
    def f(m, x):
        y = x * m.w
        t = y * 2.0
        before = (t + m.w).sum()              # (add saves no operand)
        t.detach_()
        return before + (y * t).sum() + (t * m.w).sum()
    check_loss(f, randn(4), w=randn(4))
    print("detach_ ok")
# CHECK-LABEL: TEST: test_detach_in_place
# CHECK: detach_ ok


@run
def test_no_grad_region():
    def f(m, x):
        y = torch.tanh(x @ m.w)
        with torch.no_grad():
            scale = y.abs().mean(0, keepdim=True) + 1.0     # every value in here
            shifted = torch.sin(y * scale)                  # stops the gradient,
            flat = y.view(-1)                               # views included
        return ((y * scale).sum() + (y * shifted).sum() + (shifted * m.b).sum()
                + (flat * flat).sum())
    check_loss(f, randn(3, 4), w=randn(4, 2), b=randn(2))

    # an op that returns its input itself (not a copy, not a view) returns
    # a value that still carries its gradient; with an input's only on the
    # input's path
    def g(m, x):
        u, v = x * m.w, x * 2.0
        with torch.no_grad():
            same_u, same_v = u.contiguous(), v.to(v.dtype)
            copy_u = u.clone()
        return (same_u * same_u).sum() + (same_v * u).sum() + (copy_u * u).sum()
    check_loss(g, randn(4), w=randn(4))
    print("no_grad ok")
# CHECK-LABEL: TEST: test_no_grad_region
# CHECK: no_grad ok


@run
def test_nested_and_set_grad_enabled():
    def f(m, x):
        y = x * m.w
        with torch.no_grad():
            a = y * 2.0
            with torch.enable_grad():
                e = y * 3.0               # gradient flows again in here
                with torch.no_grad():
                    g = e * 4.0
                h = g * e
            q = torch.sin(a) + h
        torch.set_grad_enabled(False)
        k = y * 5.0
        torch.set_grad_enabled(True)
        return (y * q).sum() + (e * y).sum() + (k * y).sum() + (h * m.w).sum()
    check_loss(f, randn(3), w=randn(3))
    print("nested ok")
# CHECK-LABEL: TEST: test_nested_and_set_grad_enabled
# CHECK: nested ok


@run
def test_no_grad_submodule():
    # a no_grad forward of a submodule (a target network), and a no_grad
    # region whose only use is a buffer update (not an output of @main)
    class Target(nn.Module):
        def __init__(self):
            super().__init__()
            self.online = nn.Linear(3, 3)
            self.register_buffer("ema", torch.zeros(3))

        @torch.no_grad()
        def target(self, x):
            return torch.tanh(self.online(x))

        def forward(self, x):
            out = self.online(x)
            with torch.no_grad():
                self.ema.mul_(0.9).add_(out.mean(0))
            return ((out - self.target(x)) ** 2).sum()
    model = Target()
    check_gradients(model, (randn(4, 3),), loss=model)
    print("submodule ok")
# CHECK-LABEL: TEST: test_no_grad_submodule
# CHECK: submodule ok

# RUN: %PYTHON %s | FileCheck %s
# torch.compile(model, backend="gradir"): Dynamo's graphs run gradir's
# @main_fwd/@main_bwd (not AOTAutograd); trained 3 steps side by side with
# eager PyTorch (float64) the parameters are equal; a graph with an op gradir
# cannot take (torch.cumprod) runs eagerly after one warning naming the op and
# the source line, and still trains correctly; a new batch size (a dynamic
# size for Dynamo) runs on gradir too.

import copy
import os
import sys
import warnings

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir.frontends.torch  # noqa: E402,F401  (registers backend="gradir")
from gradir.frontends.torch.backend import GradirFallbackWarning  # noqa: E402

torch.set_default_dtype(torch.float64)
TOL = 1e-10


class Net(nn.Module):
    def __init__(self, scan=False, split=False):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)
        self.scan = scan
        self.split = split

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        if self.scan:
            h = torch.cumprod(h, 1)
        if self.split:
            torch._dynamo.graph_break()   # two graphs: h flows from one into the other
        return self.fc2(h)


def train_side_by_side(model, batches, **compile_args):
    """3 steps of SGD (momentum), compiled and eager; returns the warnings
    and the grad_fn names of the compiled outputs."""
    torch._dynamo.reset()
    ref = copy.deepcopy(model)
    compiled = torch.compile(model, backend="gradir", **compile_args)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (model, ref)]
    grad_fns = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step, (x, y) in enumerate(batches):
            for net, opt in zip((compiled, ref), opts):
                opt.zero_grad()
                out = net(x)
                if net is compiled:
                    grad_fns.append(type(out.grad_fn).__name__)
                ((out - y) ** 2).mean().backward()
                opt.step()
            diff = max((p - q).abs().max().item()
                       for p, q in zip(model.parameters(), ref.parameters()))
            assert diff <= TOL, (step, diff)
    return [w for w in caught if issubclass(w.category, GradirFallbackWarning)], grad_fns


def batches(sizes):
    torch.manual_seed(1)
    return [(torch.randn(b, 8), torch.randn(b, 3)) for b in sizes]


@run
def test_trains_on_gradir():
    warned, grad_fns = train_side_by_side(Net(), batches([4, 4, 4]))
    assert not warned
    assert all(name.startswith("GradirFunction") for name in grad_fns), grad_fns
    print("backend ok")
# CHECK-LABEL: TEST: test_trains_on_gradir
# CHECK: backend ok


@run
def test_new_batch_size():
    warned, grad_fns = train_side_by_side(Net(), batches([4, 6, 5]))
    assert not warned
    assert all(name.startswith("GradirFunction") for name in grad_fns), grad_fns
    print("dynamic ok")
# CHECK-LABEL: TEST: test_new_batch_size
# CHECK: dynamic ok


@run
def test_graph_break_and_options():
    # the second graph's input h requires grad: its gradient flows back into
    # the first graph's @main_bwd
    warned, grad_fns = train_side_by_side(Net(split=True), batches([4, 4, 4]),
                                          options={"threads": 1, "opt_level": 2})
    assert not warned
    assert all(name.startswith("GradirFunction") for name in grad_fns), grad_fns
    print("graph break ok")
# CHECK-LABEL: TEST: test_graph_break_and_options
# CHECK: graph break ok


@run
def test_unsupported_op_falls_back_once():
    warned, grad_fns = train_side_by_side(Net(scan=True), batches([4, 4, 4]))
    assert len(warned) == 1, [str(w.message) for w in warned]
    message = str(warned[0].message)
    print(message.replace(os.path.dirname(__file__) + os.sep, ""))
    assert not any(name.startswith("GradirFunction") for name in grad_fns)
# CHECK-LABEL: TEST: test_unsupported_op_falls_back_once
# CHECK: gradir cannot compile this graph, it runs in eager PyTorch: aten.cumprod.default: no rlx mapping
# CHECK-NEXT: at torch_compile_backend.py:{{[0-9]+}} in forward: h = torch.cumprod(h, 1)

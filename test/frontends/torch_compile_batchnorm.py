# RUN: %PYTHON %s | FileCheck %s
# torch.compile(model, backend="gradir") with BatchNorm: Dynamo lifts the
# buffers to graph inputs and mutates them in place (num_batches_tracked.add_,
# F.batch_norm's running-statistics update); the backend imports those
# mutations as extra results (input_mutations=True) and copies them into the
# buffers, so after each training step running_mean, running_var and
# num_batches_tracked equal eager PyTorch's, with the gradients gradir's
# (GradirFunction, no AOTAutograd).  Eval after training reads the trained
# statistics.  momentum=None (a cumulative average): Dynamo breaks the graph at
# the layer's float(num_batches_tracked), the layer runs in eager PyTorch and
# the graphs around it on gradir; the statistics still equal eager's.

import copy
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir.frontends.torch  # noqa: E402,F401  (registers backend="gradir")
from gradir.frontends.torch.backend import GradirFallbackWarning  # noqa: E402

torch.set_default_dtype(torch.float64)
TOL = 1e-10


class BNNet(nn.Module):
    """conv -> BatchNorm2d -> relu -> conv -> BatchNorm2d (no affine) ->
    pool -> linear -> BatchNorm1d -> linear; ``momentum`` for every layer
    but the second (0.3)."""

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


def train_side_by_side(model, data):
    """SGD steps through the backend and in eager PyTorch; after each, the
    parameters and every buffer are equal.  Returns the compiled module, the
    eager one, the grad_fn names of the compiled losses and the fallback
    warnings."""
    torch._dynamo.reset()
    ref = copy.deepcopy(model)
    compiled = torch.compile(model, backend="gradir")
    opts = [torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9) for net in (model, ref)]
    grad_fns = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step, (x, y) in enumerate(data):
            for net, opt in zip((compiled, ref), opts):
                opt.zero_grad()
                out = net(x)
                if net is compiled:
                    grad_fns.append(type(out.grad_fn).__name__)
                F.cross_entropy(out, y).backward()
                opt.step()
            assert max_diff(model.parameters(), ref.parameters()) <= TOL, step
            for (name, b), (_, rb) in zip(model.named_buffers(), ref.named_buffers()):
                assert b.dtype == rb.dtype and (b.double() - rb.double()).abs().max() <= TOL, \
                    (step, name, b, rb)
    fallbacks = [w for w in caught if issubclass(w.category, GradirFallbackWarning)]
    return compiled, ref, grad_fns, fallbacks


@run
def test_running_statistics_through_the_backend():
    model = BNNet()
    data = batches()
    compiled, ref, grad_fns, fallbacks = train_side_by_side(model, data)
    assert not fallbacks, [str(w.message) for w in fallbacks]
    assert all(name == "GradirFunctionBackward" for name in grad_fns), grad_fns
    assert int(model.bn1.num_batches_tracked) == 3 and int(model.bn2.num_batches_tracked) == 3
    assert model.bn1.running_mean.abs().max() > 0.01          # they moved
    assert (model.bn3.running_var - 1).abs().max() > 0.01
    # eval: the graph reads the trained statistics (inputs, not constants)
    model.eval()
    ref.eval()
    x = batches(1, 4)[0][0]
    with torch.no_grad():
        assert (compiled(x) - ref(x)).abs().max().item() <= TOL
        for net in (model, ref):
            net.bn1.running_mean.add_(0.5)
        tracked = [b.clone() for b in model.buffers()]
        assert (compiled(x) - ref(x)).abs().max().item() <= TOL
        assert max_diff(model.buffers(), tracked) == 0       # eval mutates nothing
    print("backend batchnorm ok:", int(model.bn3.num_batches_tracked), "steps")
# CHECK-LABEL: TEST: test_running_statistics_through_the_backend
# CHECK: backend batchnorm ok: 3 steps


@run
def test_no_grad_training_forward():
    # a training-mode forward under no_grad (@main only) updates them too
    model = BNNet()
    ref = copy.deepcopy(model)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="gradir")
    x = batches(1)[0][0]
    with torch.no_grad():
        for _ in range(2):
            assert (compiled(x) - ref(x)).abs().max().item() <= TOL
    assert max_diff(model.buffers(), ref.buffers()) <= TOL
    assert int(model.bn1.num_batches_tracked) == 2
    print("no_grad ok")
# CHECK-LABEL: TEST: test_no_grad_training_forward
# CHECK: no_grad ok


@run
def test_cumulative_average_through_the_backend():
    model = BNNet(momentum=None)
    compiled, ref, grad_fns, fallbacks = train_side_by_side(model, batches(4))
    assert not fallbacks
    # the graphs around the eager layers are gradir's
    assert all(name == "GradirFunctionBackward" for name in grad_fns), grad_fns
    assert int(model.bn1.num_batches_tracked) == 4
    print("cumulative average ok")
# CHECK-LABEL: TEST: test_cumulative_average_through_the_backend
# CHECK: cumulative average ok

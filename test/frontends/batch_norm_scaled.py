# RUN: %PYTHON %s | FileCheck %s
# BatchNorm imported as one elementwise pass per direction: the forward
# (x - mean) * s + beta with s = gamma * rsqrt(var + eps) computed per
# channel (no x-hat beside x - mean, no per-element rsqrt or gamma), and
# its gradient, after rlx-gradient's simplification, two per-channel sums
# over the batch (of dy and of dy * (x - mean)) and one per-element pass
# dy * s + c1 * (x - mean) + c0.  The imported model against torch.autograd
# (float64, and float32 around a mean of 1e4), the adjoint compiled and
# exported against the interpreter (gradir.testing.oracle, around a mean of
# 10: at 1e4 float32's own rounding of x, 1e-3, leaves the compiled
# statistics and numpy's further apart than the oracle's float32
# tolerance), bitwise the same from call to call at 1 and 2 threads.

import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import check, np_args, run  # noqa: E402

import gradir  # noqa: E402
from gradir.frontends.torch import import_module  # noqa: E402
from gradir.testing import oracle  # noqa: E402


class Net(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return (torch.relu(self.bn(x)) * torch.linspace(0.5, 1.5, x.shape[-1])).sum()


def ops(module, fn, shape):
    """(op name, operand shapes) of ``@fn``'s rlx ops with an operand of ``shape``."""
    out = []
    with module.context:
        for f in module.body.operations:
            if str(f.attributes["sym_name"]).strip('"') != fn:
                continue
            for o in f.regions[0].blocks[0].operations:
                shapes = [list(v.type.shape) for v in o.operands if hasattr(v.type, "shape")]
                if o.name.startswith("rlx.") and shape in shapes:
                    out.append((o.name, shapes))
    return out


@run
def test_forward_form():
    torch.manual_seed(0)
    module = import_module(Net().train(), (torch.randn(8, 4, 5, 5),))
    print(gradir.print_module(module))
# CHECK-LABEL: TEST: test_forward_form
# CHECK: %[[MEAN:.*]] = "rlx.mean"(%[[X:[a-z0-9]+]]) {axis = array<i64: 0, 2, 3>, keepdims = true}
# CHECK: %[[VAR:.*]] = "rlx.variance"(%[[X]])
# CHECK: %[[E:.*]] = "rlx.add"(%[[VAR]], {{.*}}) : (tensor<1x4x1x1xf32>, tensor<f32>)
# CHECK: %[[R:.*]] = "rlx.rsqrt"(%[[E]]) : (tensor<1x4x1x1xf32>)
# CHECK: %[[S:.*]] = "rlx.multiply"(%[[R]], {{.*}}) : (tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>)
# CHECK: %[[XC:.*]] = "rlx.subtract"(%[[X]], %[[MEAN]]) : (tensor<8x4x5x5xf32>, tensor<1x4x1x1xf32>)
# CHECK: %[[Y:.*]] = "rlx.multiply"(%[[XC]], %[[S]]) : (tensor<8x4x5x5xf32>, tensor<1x4x1x1xf32>)
# CHECK: "rlx.add"(%[[Y]], {{.*}}) : (tensor<8x4x5x5xf32>, tensor<1x4x1x1xf32>)
# CHECK: "rlx.relu"


@run
def test_gradient_form():
    torch.manual_seed(0)
    module = import_module(Net().train(), (torch.randn(8, 4, 5, 5),))
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main wrt=0,1,2})")
    full = ops(module, "main_adjoint", [8, 4, 5, 5])
    sums = [o for o in full if o[0] == "rlx.collapse_sum_to"]
    print("per-channel sums of full tensors in the gradient:", len(sums))
    print("variance and mean of x:", sorted(n for n, _ in full if n in ("rlx.mean", "rlx.variance")))
    print("full by full products:", sum(1 for n, s in full if n == "rlx.multiply"
                                        and s[0] == s[1]))
# CHECK-LABEL: TEST: test_gradient_form
# CHECK: per-channel sums of full tensors in the gradient: 2
# CHECK: variance and mean of x: ['rlx.mean', 'rlx.variance']
# CHECK: full by full products: 1


@run
def test_against_torch():
    torch.set_default_dtype(torch.float64)
    try:
        torch.manual_seed(1)
        x = torch.randn(6, 3, 4, 5)
        for bn in (nn.BatchNorm2d(3), nn.BatchNorm2d(3, affine=False),
                   nn.BatchNorm1d(3)):
            with torch.no_grad():
                if bn.affine:
                    bn.weight.uniform_(0.5, 1.5)
                    bn.bias.uniform_(-1, 1)
            args = (x,) if isinstance(bn, nn.BatchNorm2d) else (x[:, :, 0],)
            check(bn.train(), args)
            check(bn.eval(), args)
    finally:
        torch.set_default_dtype(torch.float32)
    print("batch norm float64 ok")
# CHECK-LABEL: TEST: test_against_torch
# CHECK: batch norm float64 ok


@run
def test_large_mean_f32():
    """float32 around 1e4 and 10: the compiled adjoint against
    torch.autograd in float64 and bitwise repeatable at 1 and 2 threads;
    around 10 also against the interpreter (oracle)."""
    for center in (1e4, 10.0):
        torch.manual_seed(2)
        model = Net(3).train()
        with torch.no_grad():
            model.bn.weight.uniform_(0.5, 1.5)
            model.bn.bias.uniform_(-1, 1)
        x = center + torch.randn(8, 3, 6, 6)
        module = import_module(model, (x,))
        gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main wrt=0,1,2})")
        args = np_args(model, (x,))
        if center < 100:
            oracle.record(module, "main_adjoint", args, name="batch_norm_mean_10")
        m64 = Net(3).double().train()
        m64.load_state_dict(model.state_dict())
        x64 = x.double().requires_grad_()
        want = torch.autograd.grad(m64(x64), [x64] + list(m64.parameters()))
        for threads in (1, 2):
            fn = gradir.compile(module, cache=False, threads=threads)["main_adjoint"]
            got, again = fn(*args), fn(*args)
            same = all(np.array_equal(a, b) for a, b in zip(got, again))
            close = all(np.allclose(g, w.numpy(), rtol=1e-3, atol=1e-3 * float(w.abs().max()))
                        for g, w in zip(got[1:], want))
            print(f"mean {center:g}, threads {threads}: repeatable {same}, "
                  f"gradients within 1e-3 of float64 {close}")
# CHECK-LABEL: TEST: test_large_mean_f32
# CHECK: mean 10000, threads 1: repeatable True, gradients within 1e-3 of float64 True
# CHECK: mean 10000, threads 2: repeatable True, gradients within 1e-3 of float64 True
# CHECK: mean 10, threads 1: repeatable True, gradients within 1e-3 of float64 True
# CHECK: mean 10, threads 2: repeatable True, gradients within 1e-3 of float64 True
# CHECK-NOT: FAIL

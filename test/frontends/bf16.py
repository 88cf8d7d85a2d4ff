# RUN: %PYTHON %s | FileCheck %s
# bf16 models whose import needs constants (numpy has no bf16: these were a
# bare "TypeError: Got unsupported ScalarType BFloat16"): a scalar operand
# (x * 2.0, x + 1), a norm's epsilon and missing affine parameters, a bf16
# buffer.  The interpreted @main (bf16 values passed as float32 arrays)
# equals PyTorch's bf16 forward within bf16 rounding, and so do
# rlx-gradient's gradients.

import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir  # noqa: E402
from gradir.frontends.torch import import_module  # noqa: E402

torch.manual_seed(0)
BF16 = torch.bfloat16


def f32(t):
    return t.detach().float().numpy()


def close(got, want, what, ulps=4):
    # ``ulps`` bf16 steps (2**-8 relative) of the values' scale; gradients
    # need more (torch accumulates its bf16 reductions in float32, the
    # interpreter rounds every op to bf16)
    tol = ulps * 2.0 ** -8 * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=what)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.norm = nn.LayerNorm(6, elementwise_affine=False)     # eps, no weight
        self.group = nn.GroupNorm(2, 6)
        self.bn = nn.BatchNorm1d(6)
        self.register_buffer("scale", torch.rand(6) + 0.5)         # a non-splat buffer
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        y = self.lin(x) * 2.0 + 1                                  # scalar constants
        y = self.norm(y) * self.scale
        return self.bn(self.group(torch.tanh(y)))


class Weighted(nn.Module):
    """sum(model(x) * r), in float32."""

    def __init__(self, model, r):
        super().__init__()
        self.model = model
        self.register_buffer("r", r)

    def forward(self, x):
        return (self.model(x).float() * self.r.float()).sum()


@run
def test_bf16_constants():
    model = Model().eval().to(BF16)
    x = torch.randn(4, 6, dtype=BF16)
    module = import_module(model, (x,))
    print(module)
    params = [f32(p) for p in model.parameters()]
    (got,) = gradir.interpret(module, "main", f32(x), *params)
    with torch.no_grad():
        want = f32(model(x))
    assert got.dtype == np.float32 and got.shape == want.shape
    close(got, want, "forward")

    # gradients of sum(out * r) w.r.t. the input and the parameters
    target = Weighted(model, torch.randn(4, 6, dtype=BF16))
    loss_module = import_module(target, (x,))
    gradir.run_pipeline(loss_module, "builtin.module(rlx-gradient{func=main})")
    outs = gradir.interpret(loss_module, "main_adjoint", f32(x), *params)
    xg = x.clone().requires_grad_()
    value = target(xg)
    want = torch.autograd.grad(value, [xg] + list(model.parameters()))
    close(outs[0], f32(value), "loss")
    for i, (g, w) in enumerate(zip(outs[1:], want)):
        close(g, f32(w), f"gradient {i}", ulps=16)
    print("bf16 ok")
# CHECK-LABEL: TEST: test_bf16_constants
# CHECK: func.func @main(%{{.*}}: tensor<4x6xbf16>
# CHECK-DAG: arith.constant dense<2.000000e+00> : tensor<bf16>
# CHECK-DAG: arith.constant dense<1.000000e+00> : tensor<bf16>
# CHECK-DAG: arith.constant dense<[{{.*}}]> : tensor<6xbf16>
# CHECK: bf16 ok

# RUN: %PYTHON %s | FileCheck %s
# Activations, losses, shape ops, arithmetic, reductions, selection,
# comparisons and casts, imported in float64: the interpreted @main
# equals PyTorch's forward, and rlx-gradient's gradients (of a weighted sum
# of the outputs) equal torch.autograd's, w.r.t. inputs and parameters.

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import (Fn, check, check_compiled, check_forward,  # noqa: E402,F401
                           check_gradients, randn, run)

torch.set_default_dtype(torch.float64)


@run
def test_activations():
    x = randn(3, 7) * 3
    x[0, :3] = torch.tensor([25.0, -25.0, 19.0])      # softplus thresholds
    for act in (nn.ReLU(), nn.GELU(), nn.GELU("tanh"), nn.SiLU(), nn.Tanh(), nn.Sigmoid(),
                nn.Softplus(), nn.Softplus(beta=2.0, threshold=5.0), nn.Hardswish(),
                nn.Hardsigmoid(), nn.ReLU6(), nn.Hardtanh(-0.5, 2.0), nn.LeakyReLU(0.1),
                nn.ELU(), nn.Softmax(-1), nn.LogSoftmax(0), nn.Dropout(0.0),
                nn.Dropout(0.5).eval(), nn.Identity()):
        # torch's hardsigmoid backward multiplies by a float32 1/6
        check(act, (x,), grad_rtol=1e-7 if isinstance(act, nn.Hardsigmoid) else 1e-8)
    print("activations ok")
# CHECK-LABEL: TEST: test_activations
# CHECK: activations ok


@run
def test_losses():
    logits, y = randn(5, 4), torch.tensor([0, 3, 1, 1, 2])
    w = torch.rand(4) + 0.5
    for red in ("mean", "sum", "none"):
        check(Fn(lambda s, x, y, red=red: F.cross_entropy(x, y, reduction=red)), (logits, y))
        check(Fn(lambda s, x, y, red=red: F.cross_entropy(x, y, weight=w, reduction=red)),
              (logits, y))
        check(Fn(lambda s, x, y, red=red: F.nll_loss(F.log_softmax(x, 1), y, weight=w,
                                                     reduction=red)), (logits, y))
    yi = y.clone()
    yi[1] = -100
    check(Fn(lambda s, x, y: F.cross_entropy(x, y)), (logits, yi))             # ignore_index
    check(Fn(lambda s, x, y: F.cross_entropy(x, y, label_smoothing=0.1)), (logits, yi))
    probs = torch.softmax(randn(5, 4), 1)
    check(Fn(lambda s, x, p: F.cross_entropy(x, p)), (logits, probs))
    img, yimg = randn(2, 4, 3, 3), torch.randint(0, 4, (2, 3, 3))
    check(Fn(lambda s, x, y: F.cross_entropy(x, y)), (img, yimg))
    check(nn.MSELoss(), (randn(4, 3), randn(4, 3)))
    check(nn.L1Loss(reduction="sum"), (randn(4, 3), randn(4, 3)))
    check(nn.BCEWithLogitsLoss(pos_weight=torch.rand(3) + 0.5), (randn(4, 3), torch.rand(4, 3)))
    print("losses ok")
# CHECK-LABEL: TEST: test_losses
# CHECK: losses ok


@run
def test_losses_every_target_ignored():
    # A batch whose labels are all ignore_index: torch's mean is 0/0 = NaN
    # and its gradients are 0 (gradir's were NaN for every parameter), also
    # with label smoothing and class weights; the compiled adjoint agrees.
    x, y = randn(4, 3), torch.full((4,), 1)
    w = torch.rand(3) + 0.5
    for kw in ({}, {"label_smoothing": 0.1}, {"weight": w}, {"reduction": "sum"}):
        model = Fn(lambda s, x, y, kw=kw: F.cross_entropy(x @ s.w, y, ignore_index=1, **kw),
                   w=randn(3, 3))
        module = check_gradients(model, (x, y), loss=model)
        check_compiled(module, model, (x, y), "main_adjoint")
    model = Fn(lambda s, x, y: F.nll_loss(F.log_softmax(x @ s.w, 1), y, weight=w), w=randn(3, 3))
    check_gradients(model, (x, torch.full((4,), -100)), loss=model)
    print("all ignored ok")
# CHECK-LABEL: TEST: test_losses_every_target_ignored
# CHECK: all ignored ok


@run
def test_shapes():
    x = randn(2, 3, 4)
    fns = [
        lambda s, x: x.view(6, 4), lambda s, x: x.reshape(-1), lambda s, x: x.flatten(1),
        lambda s, x: x.unflatten(2, (2, 2)), lambda s, x: x.permute(2, 0, 1),
        lambda s, x: x.transpose(0, 2).contiguous(), lambda s, x: x[0].t(),
        lambda s, x: x[:, :1].expand(2, 5, 4), lambda s, x: torch.cat([x, x * 2], 1),
        lambda s, x: torch.stack([x, x + 1], -1), lambda s, x: x.split(3, -1),
        lambda s, x: x.split([1, 3], -1), lambda s, x: x.chunk(2, 2),
        lambda s, x: x.unbind(1), lambda s, x: x.select(1, -1), lambda s, x: x[:, 1:3, ::2],
        lambda s, x: x[..., -2:], lambda s, x: x.unsqueeze(1).squeeze(1),
        lambda s, x: x[:, :1].squeeze(), lambda s, x: x.narrow(2, 1, 2),
        lambda s, x: x.repeat(2, 1, 3), lambda s, x: x[:, [2, 0, 0]],
        lambda s, x: x.index_select(2, torch.tensor([3, 1])), lambda s, x: x.tril(),
        lambda s, x: x.triu(1), lambda s, x: x.mT @ x, lambda s, x: x[0].T,
        lambda s, x: torch.cat([x] * 20, 0), lambda s, x: x.reshape(24).split(1),
    ]
    for fn in fns:
        check(Fn(fn), (x,))
    print("shapes ok")
# CHECK-LABEL: TEST: test_shapes
# CHECK: shapes ok


@run
def test_arithmetic_and_reductions():
    x, y = randn(3, 4), randn(3, 4).abs() + 0.5
    fns = [
        lambda s, x, y: 2.0 * x + 1 - x / 3, lambda s, x, y: 1 - x, lambda s, x, y: 2 / y,
        lambda s, x, y: x ** 2 + y ** 0.5 + y ** -1.5 + y ** x, lambda s, x, y: torch.add(x, y, alpha=2),
        lambda s, x, y: -x, lambda s, x, y: x.exp().log1p() + y.log() + y.sqrt() + y.rsqrt(),
        lambda s, x, y: x.sin() * x.cos() + x.abs() + x.erf() + x.expm1() + y.reciprocal(),
        lambda s, x, y: torch.maximum(x, y) - torch.minimum(x, y) + x.clamp(-0.5, 0.5),
        lambda s, x, y: x.clamp(min=0.1) + x.clamp(max=0.1) + x.square(),
        lambda s, x, y: (x.sum(), x.sum(1), x.sum((0, 1), keepdim=True), x.mean(0)),
        lambda s, x, y: (x.amax(1), x.amin(0, keepdim=True), x.max(), x.min()),
        lambda s, x, y: (x.max(1).values, x.min(1, keepdim=True)[0]),
        lambda s, x, y: (y.prod(), y.prod(1)), lambda s, x, y: (x.var(1), x.std(), x.var(0, correction=0)),
        lambda s, x, y: torch.logsumexp(x, 1), lambda s, x, y: x.norm(dim=1),
        lambda s, x, y: x.cumsum(1), lambda s, x, y: F.normalize(x, dim=1),
    ]
    for fn in fns:
        check(Fn(fn), (x, y))
    # sum/mean with a dtype (the keyword-only dtype was read as the dim: a
    # TypeError), and prod over groups holding one and two zeros (the
    # gradient was NaN): a review against torch.autograd
    z = y.clone()
    z[0, 1] = 0.0
    z[1, 0] = z[1, 2] = 0.0
    check(Fn(lambda s, x, y: (x.sum(dtype=torch.float64), x.mean(dtype=torch.float64))), (x, y))
    check(Fn(lambda s, x, y: (y.prod(), y.prod(1), y.prod(0))), (x, z))
    # log1p / expm1 of small values (log(1 + x) gave log1p(1e-20) = 0): the
    # forward equals torch's to 1e-10 relative (atol 1e-30), and so do the gradients
    small = torch.tensor([[1e-20, -1e-12, 1e-8, 3e-3], [-0.009, 0.011, -0.7, 2.0],
                          [0.05, -0.099, 0.12, 0.5]])
    check(Fn(lambda s, x, y: (x.log1p(), x.expm1())), (small, y), atol=1e-30)
    # the norm of a zero vector: gradient 0, as torch's (it was NaN)
    z2 = x.clone()
    z2[1] = 0.0
    check(Fn(lambda s, x, y: (x.norm(dim=1), torch.linalg.vector_norm(x, dim=0))), (z2, y))
    print("arithmetic and reductions ok")
# CHECK-LABEL: TEST: test_arithmetic_and_reductions
# CHECK: arithmetic and reductions ok


@run
def test_select_compare_cast():
    x, y = randn(3, 4), randn(3, 4)
    ids = torch.tensor([[1, 0, 2, 1], [0, 0, 1, 2], [2, 1, 1, 0]])
    fns = [
        lambda s, x, y, i: torch.where(x > y, x, y), lambda s, x, y, i: torch.where(x < 0, 0.0, x),
        lambda s, x, y, i: x.masked_fill(i == 1, -1.5), lambda s, x, y, i: x.masked_fill(x >= 0.2, 0.0),
        lambda s, x, y, i: (x == y, x != y, x <= 0.1, i > 0, i == 2),
        lambda s, x, y, i: x * (i != 0), lambda s, x, y, i: x * i.double(),
        lambda s, x, y, i: x * i.float().double(), lambda s, x, y, i: x + (x > 0).to(x.dtype),
        lambda s, x, y, i: torch.where((x > 0) & (y > 0) | ~(i == 1), x, y),
        lambda s, x, y, i: ((x * 3).long(), x), lambda s, x, y, i: x.float(),
        lambda s, x, y, i: torch.zeros_like(x) + torch.ones_like(y) * x + torch.full_like(x, 2.0),
        lambda s, x, y, i: x + torch.arange(4) * 0.5,
    ]
    for fn in fns:
        check(Fn(fn), (x, y, ids))
    print("select compare cast ok")
# CHECK-LABEL: TEST: test_select_compare_cast
# CHECK: select compare cast ok

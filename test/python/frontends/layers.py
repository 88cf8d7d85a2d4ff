# RUN: %PYTHON %s | FileCheck %s
# Every supported torch.nn layer, imported in float64: the interpreted @main
# equals PyTorch's forward, and rlx-gradient's gradients (of a weighted sum
# of the outputs) equal torch.autograd's, w.r.t. inputs and parameters.

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import check, check_forward, check_gradients, run  # noqa: E402

torch.set_default_dtype(torch.float64)


def randn(*shape):
    return torch.randn(*shape)


class Fn(nn.Module):
    """A module around a function of the inputs (and optional parameters)."""

    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        for k, v in params.items():
            setattr(self, k, nn.Parameter(v))

    def forward(self, *args):
        return self.fn(self, *args)


@run
def test_linear():
    check(nn.Linear(4, 3), (randn(2, 4),))
    check(nn.Linear(4, 3, bias=False), (randn(2, 5, 4),))
    print("linear ok")
# CHECK-LABEL: TEST: test_linear
# CHECK: linear ok


@run
def test_conv2d():
    x = randn(2, 4, 7, 6)
    for conv in (nn.Conv2d(4, 6, 3), nn.Conv2d(4, 6, 3, stride=2, padding=1),
                 nn.Conv2d(4, 6, (3, 2), padding=(2, 1), dilation=2, bias=False),
                 nn.Conv2d(4, 8, 3, groups=2, padding="same"),
                 nn.Conv2d(4, 4, 3, groups=4, padding="valid")):
        check(conv, (x,))
    check(nn.Conv1d(3, 4, 3, padding=1), (randn(2, 3, 8),))
    check(nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), (x,))
    print("conv2d ok")
# CHECK-LABEL: TEST: test_conv2d
# CHECK: conv2d ok


@run
def test_batch_norm():
    x = randn(4, 3, 5, 5)
    bn = nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
    check(bn.train(), (x,))      # batch statistics
    check(bn.eval(), (x,))       # running statistics (constants)
    check(nn.BatchNorm1d(3).train(), (randn(5, 3),))
    check(nn.BatchNorm2d(3, affine=False, track_running_stats=False), (x,))
    print("batch_norm ok")
# CHECK-LABEL: TEST: test_batch_norm
# CHECK: batch_norm ok


@run
def test_norms():
    x = randn(2, 3, 6)
    check(nn.LayerNorm(6), (x,))
    check(nn.LayerNorm([3, 6], elementwise_affine=False), (x,))
    check(nn.RMSNorm(6), (x,))
    check(nn.RMSNorm(6, eps=1e-3), (x,))
    check(nn.GroupNorm(2, 4), (randn(2, 4, 3, 3),))
    check(nn.GroupNorm(3, 6, affine=False), (randn(2, 6, 5),))
    print("norms ok")
# CHECK-LABEL: TEST: test_norms
# CHECK: norms ok


@run
def test_embedding():
    ids = torch.tensor([[1, 2, 0], [4, 3, 1]])
    check(nn.Embedding(6, 4), (ids,))
    check(nn.Embedding(6, 4, padding_idx=1), (ids,))   # no gradient to the padding row
    print("embedding ok")
# CHECK-LABEL: TEST: test_embedding
# CHECK: embedding ok


class MHA(nn.Module):
    def __init__(self, mha, causal=False):
        super().__init__()
        self.mha, self.causal = mha, causal

    def forward(self, x):
        mask = None
        if self.causal:
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        return self.mha(x, x, x, attn_mask=mask, need_weights=True)

@run
def test_attention():
    q, k, v = randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 8)
    check(Fn(lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v)), (q, k, v))
    qs = randn(2, 3, 5, 8)
    check(Fn(lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
          (qs, k, v))
    mask = torch.rand(4, 5) > 0.3
    mask[:, 0] = True
    check(Fn(lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                               scale=0.3)), (q, k, v))
    bias = randn(4, 5)
    check(Fn(lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bias)),
          (q, k, v))
    kv2 = randn(2, 1, 5, 8)
    check(Fn(lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
          (q, kv2, randn(2, 1, 5, 8)))
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = randn(2, 5, 8)
    check(MHA(mha), (x,))
    check(MHA(mha, causal=True), (x,))
    print("attention ok")


# CHECK-LABEL: TEST: test_attention
# CHECK: attention ok


@run
def test_rnn_cells():
    x, h, c = randn(3, 4), randn(3, 5), randn(3, 5)
    check(nn.GRUCell(4, 5), (x, h))
    check(nn.GRUCell(4, 5), (x,))          # h0 = zeros (a constant)
    check(nn.LSTMCell(4, 5), (x, (h, c)))
    check(nn.RNNCell(4, 5), (x, h))
    check(nn.RNNCell(4, 5, nonlinearity="relu", bias=False), (x, h))
    print("rnn cells ok")
# CHECK-LABEL: TEST: test_rnn_cells
# CHECK: rnn cells ok


@run
def test_pooling():
    x = randn(2, 3, 8, 7)
    for pool in (nn.MaxPool2d(2), nn.MaxPool2d(3, stride=2, padding=1),
                 nn.MaxPool2d(2, dilation=2), nn.AvgPool2d(2),
                 nn.AvgPool2d(3, stride=2, padding=1),
                 nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                 nn.AdaptiveAvgPool2d(1), nn.AdaptiveAvgPool2d((4, 7)),
                 nn.AdaptiveAvgPool2d((3, 5)), nn.MaxPool1d(2), nn.AvgPool1d(3, 2),
                 nn.AdaptiveAvgPool1d(1)):
        check(pool, (x if "1d" not in type(pool).__name__ else x[0],))
    print("pooling ok")
# CHECK-LABEL: TEST: test_pooling
# CHECK: pooling ok


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

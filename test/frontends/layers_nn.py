# RUN: %PYTHON %s | FileCheck %s
# The torch.nn layers (linear, convolutions, normalization, embedding,
# attention, recurrent cells, pooling), imported in float64: the interpreted @main
# equals PyTorch's forward, and rlx-gradient's gradients (of a weighted sum
# of the outputs) equal torch.autograd's, w.r.t. inputs and parameters.

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import Fn, check, check_forward, check_gradients, randn, run  # noqa: E402,F401

torch.set_default_dtype(torch.float64)


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
    def __init__(self, mha, causal=False, need_weights=True):
        super().__init__()
        self.mha, self.causal, self.need_weights = mha, causal, need_weights

    def forward(self, x):
        mask = None
        if self.causal:
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        return self.mha(x, x, x, attn_mask=mask, need_weights=self.need_weights)[0]

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
    check(MHA(mha, need_weights=False), (x,))       # through scaled_dot_product_attention
    print("attention ok")


# CHECK-LABEL: TEST: test_attention
# CHECK: attention ok


@run
def test_recurrent():
    x, h, c = randn(3, 4), randn(3, 5), randn(3, 5)
    check(nn.GRUCell(4, 5), (x, h))
    check(nn.GRUCell(4, 5), (x,))          # h0 = zeros (a constant)
    check(nn.LSTMCell(4, 5), (x, (h, c)))
    check(nn.RNNCell(4, 5), (x, h))
    check(nn.RNNCell(4, 5, nonlinearity="relu", bias=False), (x, h))
    seq = randn(2, 4, 3)
    check(nn.LSTM(3, 5, batch_first=True), (seq,))
    check(nn.LSTM(3, 4, num_layers=2, bidirectional=True), (seq, (randn(4, 4, 4), randn(4, 4, 4))))
    check(nn.GRU(3, 5, num_layers=2, batch_first=True), (seq,))
    check(nn.GRU(3, 5, bias=False), (seq[0],))               # unbatched (T, I)
    check(nn.RNN(3, 5, nonlinearity="relu", bidirectional=True, batch_first=True), (seq,))
    print("recurrent ok")
# CHECK-LABEL: TEST: test_recurrent
# CHECK: recurrent ok


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
    # ceil_mode: PyTorch drops a last window that would start in the right
    # padding or past it (here along W of 7 and, stride 3 past a window of
    # 1, along both), Relax's rule keeps it: the importer slices it off
    for pool in (nn.MaxPool2d(2, stride=2, padding=1, ceil_mode=True),
                 nn.MaxPool2d(1, stride=3, ceil_mode=True),
                 nn.MaxPool2d(3, stride=2, ceil_mode=True),
                 nn.AvgPool2d(2, stride=2, padding=1, ceil_mode=True),
                 nn.AvgPool2d(2, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                 nn.AvgPool2d(1, stride=3, ceil_mode=True),
                 nn.MaxPool1d(2, stride=2, padding=1, ceil_mode=True),
                 nn.AvgPool1d(2, stride=2, padding=1, ceil_mode=True)):
        check(pool, (x if "1d" not in type(pool).__name__ else x[0],))
    print("pooling ok")
# CHECK-LABEL: TEST: test_pooling
# CHECK: pooling ok

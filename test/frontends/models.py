# RUN: %PYTHON %s | FileCheck %s
# Whole models written in PyTorch, imported in float64: outputs equal
# PyTorch's, rlx-gradient's gradients equal torch.autograd's, and the
# compiled adjoint (gradir.compile, CPU) equals the interpreted one.

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import check_compiled, check_forward, check_gradients, run  # noqa: E402

torch.set_default_dtype(torch.float64)


def check_model(model, args, compiled=True, loss=None):
    check_forward(model, args)
    module = check_gradients(model, args, loss=loss)
    if compiled:
        check_compiled(module, model, args, "main_adjoint")   # same parameters as the loss
    return module


class TakeLoss(nn.Module):
    """The model's own loss (its first output) as the target."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args):
        return self.model(*args)[0]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                                 nn.Linear(16, 4))

    def forward(self, x, labels):
        logits = self.net(x)
        return F.cross_entropy(logits, labels), logits


@run
def test_mlp():
    model = MLP()
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    loss = TakeLoss(model)
    check_model(model, (x, y), loss=loss)
    print("mlp ok")
# CHECK-LABEL: TEST: test_mlp
# CHECK: mlp ok


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 5, padding=2)
        self.conv2 = nn.Conv2d(4, 8, 5)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.avg_pool2d(torch.sigmoid(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


@run
def test_lenet():
    check_model(LeNet(), (torch.randn(2, 1, 16, 16),))
    print("lenet ok")
# CHECK-LABEL: TEST: test_lenet
# CHECK: lenet ok


class BasicBlock(nn.Module):
    """ResNet's basic block with a projection shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                   nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.short(x)
        return F.relu(out)


@run
def test_resnet_block():
    x = torch.randn(3, 4, 6, 6)
    block = BasicBlock(4, 6, 2)
    check_model(block.train(), (x,))
    with torch.no_grad():
        for m in block.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    check_model(block.eval(), (x,), compiled=False)
    print("resnet block ok")
# CHECK-LABEL: TEST: test_resnet_block
# CHECK: resnet block ok


class CifarNet(nn.Module):
    """bench/cnn.py's model, smaller: a 3x3 stem with BatchNorm, a 3x3 max
    pool of stride 2 and padding 1 (overlapping windows), a residual block
    of 16-channel 3x3 convs (input gradients through the flipped conv2d,
    one image per im2col block), a strided conv, global average pooling."""

    def __init__(self, c=16):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.fc = nn.Linear(2 * c, 5)

    def forward(self, x):
        h = self.pool(F.relu(self.bn(self.stem(x))))
        h = F.relu(h + self.b2(self.c2(F.relu(self.b1(self.c1(h))))))
        h = F.adaptive_avg_pool2d(F.relu(self.down(h)), 1).flatten(1)
        return self.fc(h)


class MobileBlock(nn.Module):
    """Depthwise (groups = channels, stride 2) then pointwise convs, an
    overlapping 3x3 average pool of stride 1 counting its padding."""

    def __init__(self, c=8):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 3, stride=2, padding=1, groups=c, bias=False)
        self.pw = nn.Conv2d(c, 2 * c, 1)
        self.pool = nn.AvgPool2d(3, 1, 1)

    def forward(self, x):
        return self.pool(F.relu6(self.pw(F.relu6(self.dw(x))))).sum(dim=(2, 3))


class TinyUNet(nn.Module):
    """Down by a max pool, a dilated conv, up by a strided transposed conv,
    the skip connection concatenated."""

    def __init__(self, c=4):
        super().__init__()
        self.enc = nn.Conv2d(2, c, 3, padding=1)
        self.mid = nn.Conv2d(c, c, 3, padding=2, dilation=2)
        self.up = nn.ConvTranspose2d(c, c, 2, stride=2)
        self.dec = nn.Conv2d(2 * c, 1, 3, padding=1)

    def forward(self, x):
        e = F.relu(self.enc(x))
        m = F.relu(self.mid(F.max_pool2d(e, 2)))
        return self.dec(torch.cat([e, self.up(m)], dim=1))


@run
def test_cnn_zoo():
    torch.manual_seed(1)
    check_model(CifarNet().train(), (torch.randn(2, 3, 12, 12),))
    check_model(MobileBlock(), (torch.randn(2, 8, 9, 9),))
    check_model(TinyUNet(), (torch.randn(2, 2, 8, 8),))
    print("cnn zoo ok")
# CHECK-LABEL: TEST: test_cnn_zoo
# CHECK: cnn zoo ok


@run
def test_transformer_encoder():
    x = torch.randn(2, 5, 8)
    for norm_first in (False, True):
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                           norm_first=norm_first, activation="gelu")
        check_model(layer, (x,), compiled=norm_first)
    print("transformer encoder ok")
# CHECK-LABEL: TEST: test_transformer_encoder
# CHECK: transformer encoder ok


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU("tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """A tiny causal language model: token and position embeddings, two
    blocks, a head tied to the token embedding, the loss inside."""

    def __init__(self, vocab=11, d=8, t=6, heads=2, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(t, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, ids, targets):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
        return loss, logits


@run
def test_gpt():
    model = GPT()
    ids = torch.randint(0, 11, (2, 6))
    targets = torch.roll(ids, -1, 1)
    names = [n for n, _ in model.named_parameters()]
    assert "head.weight" not in names        # tied: one argument, its first name
    check_model(model, (ids, targets), loss=TakeLoss(model))
    print("gpt ok")
# CHECK-LABEL: TEST: test_gpt
# CHECK: gpt ok


class Recurrent(nn.Module):
    """GRU and LSTM cells unrolled over the time steps in Python."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.cell = nn.GRUCell(3, 5) if kind == "gru" else nn.LSTMCell(3, 5)
        self.out = nn.Linear(5, 2)

    def forward(self, xs):
        h = torch.zeros(xs.shape[1], 5)
        c = torch.zeros(xs.shape[1], 5)
        outs = []
        for x in xs.unbind(0):
            if self.kind == "gru":
                h = self.cell(x, h)
            else:
                h, c = self.cell(x, (h, c))
            outs.append(self.out(h))
        return torch.stack(outs)


@run
def test_recurrent():
    xs = torch.randn(4, 2, 3)
    check_model(Recurrent("gru"), (xs,))
    check_model(Recurrent("lstm"), (xs,), compiled=False)
    print("recurrent ok")
# CHECK-LABEL: TEST: test_recurrent
# CHECK: recurrent ok


@run
def test_float32():
    model = LeNet().float()
    x = torch.randn(2, 1, 16, 16, dtype=torch.float32)
    module = check_forward(model, (x,), rtol=1e-5, atol=1e-6)
    text = str(module)
    assert "f64" not in text, "float32 model imported with float64 ops"
    check_compiled(module, model, (x,), rtol=1e-5)
    print("float32 ok")
# CHECK-LABEL: TEST: test_float32
# CHECK: float32 ok

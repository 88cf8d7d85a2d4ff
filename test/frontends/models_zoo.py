# RUN: %PYTHON %s | FileCheck %s
# Blocks of published architectures (torchvision's MobileNetV2/V3,
# ShuffleNetV2, ConvNeXt, a UNet-style decoder, Hugging Face-style
# attention written with einsum), written here after their published
# structure (torchvision is not a dependency), imported in float64:
# outputs equal PyTorch's, rlx-gradient's gradients equal torch.autograd's,
# and, where marked, the compiled adjoint equals the interpreted one.  Each
# test failed before the importer change it names.

import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import (Fn, Weighted, check, check_compiled, check_forward,  # noqa: E402
                           check_gradients, np_args, run)

import gradir  # noqa: E402

from gradir.frontends.torch import UnsupportedOpError, import_module  # noqa: E402

torch.set_default_dtype(torch.float64)


def check_model(model, args, compiled=False, grad_rtol=1e-8, grad_atol=1e-10):
    check_forward(model, args)
    module = check_gradients(model, args, rtol=grad_rtol, atol=grad_atol)
    if compiled:
        check_compiled(module, model, args, "main_adjoint")
    return module


def conv_bn_act(cin, cout, k, stride=1, groups=1, act=nn.ReLU6):
    """torchvision's Conv2dNormActivation."""
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, act()) if act else nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expand, 3x3 depthwise, 1x1 project, ReLU6."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.conv = nn.Sequential(conv_bn_act(cin, hidden, 1),
                                  conv_bn_act(hidden, hidden, 3, stride, groups=hidden),
                                  conv_bn_act(hidden, cout, 1, act=None))

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


@run
def test_relu6_corners_mobilenet_v2():
    # In eval mode (running mean 0, variance 1, bias 0) a depthwise conv over
    # an all-zero patch gives exact zeros into ReLU6: torch's gradient there
    # is 0 (hardtanh's bounds are exclusive); imported as maximum/minimum it
    # was the inner slope (gradients of the BatchNorm biases off by 30%).
    torch.manual_seed(0)
    block = nn.Sequential(conv_bn_act(4, 8, 3), InvertedResidual(8, 8, 1, 2),
                          InvertedResidual(8, 12, 2, 2)).eval()
    x = torch.randn(2, 4, 10, 10)
    x[:, :, 3:, :] = 0.0
    check_model(block, (x,))
    x = torch.tensor([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 2.5, -7.0, 7.0, -0.0])
    # torch's f64 hardsigmoid backward scales by float32(1/6): 3e-8 relative
    for f in (F.relu6, F.hardtanh, F.hardsigmoid, F.hardswish, lambda v: F.hardtanh(v, -3, 3),
              lambda v: torch.clamp(v, -1, 1)):
        check(Fn(lambda s, v, f=f: f(v)), (x,), grad_rtol=1e-7)
    print("mobilenet_v2 eval ok")
# CHECK-LABEL: TEST: test_relu6_corners_mobilenet_v2
# CHECK: mobilenet_v2 eval ok


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation with MobileNetV3's hardsigmoid."""

    def __init__(self, c, squeeze):
        super().__init__()
        self.fc1 = nn.Conv2d(c, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))


class MobileV3Block(nn.Module):
    def __init__(self, c=8, hidden=16):
        super().__init__()
        self.expand = conv_bn_act(c, hidden, 1, act=nn.Hardswish)
        self.dw = conv_bn_act(hidden, hidden, 5, 2, groups=hidden, act=nn.Hardswish)
        self.se = SqueezeExcitation(hidden, 8)
        self.project = conv_bn_act(hidden, c, 1, act=None)

    def forward(self, x):
        return self.project(self.se(self.dw(self.expand(x))))


@run
def test_mobilenet_v3_block():
    torch.manual_seed(0)
    x = torch.randn(2, 8, 9, 9)
    x[:, :, :, 5:] = 0.0
    # torch's f64 hardsigmoid backward scales by float32(1/6): 3e-8 relative
    check_model(MobileV3Block().train(), (x,), grad_rtol=1e-6, grad_atol=1e-8)
    check_model(MobileV3Block().eval(), (x,), grad_rtol=1e-6, grad_atol=1e-8)
    print("mobilenet_v3 ok")
# CHECK-LABEL: TEST: test_mobilenet_v3_block
# CHECK: mobilenet_v3 ok


class StochasticDepth(nn.Module):
    """torchvision.ops.StochasticDepth, mode "row"."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = 1.0 - self.p
        noise = torch.empty([x.shape[0]] + [1] * (x.ndim - 1)).bernoulli_(keep)
        return x * noise.div_(keep)


class ConvNeXtBlock(nn.Module):
    """torchvision's CNBlock: depthwise 7x7, LayerNorm over channels in
    channels-last (permute), MLP with GELU, layer scale, stochastic depth."""

    def __init__(self, c=8, p=0.1):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.layer_scale = nn.Parameter(torch.full((c, 1, 1), 0.5))
        self.drop = StochasticDepth(p)

    def forward(self, x):
        h = self.dw(x).permute(0, 2, 3, 1)
        h = self.fc2(F.gelu(self.fc1(self.norm(h)))).permute(0, 3, 1, 2)
        return x + self.drop(self.layer_scale * h)


@run
def test_convnext_stochastic_depth():
    # Eval mode imports; training mode draws a random mask: the refusal says
    # so (it said "no rlx mapping" for aten.bernoulli.p).
    x = torch.randn(2, 8, 8, 8)
    check_model(ConvNeXtBlock().eval(), (x,))
    try:
        import_module(ConvNeXtBlock().train(), (x,))
    except UnsupportedOpError as err:
        print(err.op, "|", err.reason.split(":")[0])
        assert "model.eval()" in err.reason and err.module_path.startswith("drop")
    else:
        raise AssertionError("not refused")
    print("convnext ok")
# CHECK-LABEL: TEST: test_convnext_stochastic_depth
# CHECK-NEXT: aten.bernoulli.p | a random op (PyTorch draws new values at each call; an imported program is deterministic)
# CHECK-NEXT: convnext ok


class ShuffleUnit(nn.Module):
    """ShuffleNetV2's stride-1 unit: split, branch, concat, channel shuffle
    (view/transpose/view)."""

    def __init__(self, c=8):
        super().__init__()
        h = c // 2
        self.branch = nn.Sequential(conv_bn_act(h, h, 1, act=nn.ReLU),
                                    conv_bn_act(h, h, 3, groups=h, act=None),
                                    conv_bn_act(h, h, 1, act=nn.ReLU))

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        out = torch.cat((a, self.branch(b)), 1)
        n, c, hh, ww = out.shape
        return out.view(n, 2, c // 2, hh, ww).transpose(1, 2).contiguous().view(n, c, hh, ww)


@run
def test_shufflenet_unit():
    check_model(ShuffleUnit().train(), (torch.randn(2, 8, 6, 6),), compiled=True)
    print("shufflenet ok")
# CHECK-LABEL: TEST: test_shufflenet_unit
# CHECK: shufflenet ok


@run
def test_interpolate():
    # aten.upsample_* had no mapping: nearest, nearest-exact, (bi/tri)linear
    # with and without align_corners, bicubic; by size or scale factor.
    torch.manual_seed(0)
    cases = [dict(scale_factor=2, mode="nearest"), dict(size=(7, 9), mode="nearest"),
             dict(scale_factor=1.5, mode="nearest"), dict(size=(3, 4), mode="nearest"),
             dict(size=(7, 9), mode="nearest-exact"), dict(scale_factor=2, mode="bilinear"),
             dict(scale_factor=2, mode="bilinear", align_corners=True),
             dict(size=(7, 4), mode="bilinear"), dict(size=(1, 4), mode="bilinear",
                                                      align_corners=True),
             dict(scale_factor=1.7, mode="bilinear"), dict(scale_factor=0.5, mode="bilinear"),
             dict(scale_factor=2, mode="bicubic"),
             dict(size=(8, 3), mode="bicubic", align_corners=True)]
    for kw in cases:
        for dtype in (torch.float64, torch.float32):
            x = torch.randn(2, 3, 5, 6, dtype=dtype)
            check(Fn(lambda s, v, kw=kw: F.interpolate(v, **kw)), (x,))
    check(Fn(lambda s, v: F.interpolate(v, scale_factor=3, mode="linear")), (torch.randn(2, 3, 5),))
    check(Fn(lambda s, v: F.interpolate(v, scale_factor=2, mode="trilinear")),
          (torch.randn(1, 2, 3, 4, 5),))
    check(Fn(lambda s, v: nn.Upsample(scale_factor=2)(v)), (torch.randn(1, 2, 3, 4, 5),))
    print("interpolate ok")
# CHECK-LABEL: TEST: test_interpolate
# CHECK: interpolate ok


class Decoder(nn.Module):
    """A UNet/DCGAN-style decoder: ConvTranspose2d, InstanceNorm2d (affine),
    GroupNorm, nn.Upsample nearest and bilinear, a skip concatenation."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8 * 3 * 3)
        self.up1 = nn.ConvTranspose2d(8, 6, 4, stride=2, padding=1)
        self.n1 = nn.InstanceNorm2d(6, affine=True)
        self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.c2 = nn.Conv2d(6, 4, 3, padding=1)
        self.n2 = nn.GroupNorm(2, 4)
        self.up3 = nn.Upsample(scale_factor=2, mode="nearest")
        self.out = nn.Conv2d(4 + 6, 3, 3, padding=1)

    def forward(self, z):
        h = self.fc(z).view(-1, 8, 3, 3)
        h = F.leaky_relu(self.n1(self.up1(h)), 0.2)                     # 6x6
        skip = F.interpolate(h, size=(24, 24), mode="bilinear", align_corners=True)
        h = F.relu(self.n2(self.c2(self.up2(h))))                       # 12x12
        return torch.tanh(self.out(torch.cat([self.up3(h), skip], 1)))  # 24x24


class InstanceNorm(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.n = nn.InstanceNorm2d(4, **kw)

    def forward(self, x):
        return self.n(x)


@run
def test_decoder_instance_norm():
    # aten.instance_norm had no mapping.
    torch.manual_seed(0)
    check_model(Decoder(), (torch.randn(2, 6),), compiled=True)
    for kw in (dict(), dict(affine=True), dict(track_running_stats=True, affine=True)):
        for training in (True, False):
            m = InstanceNorm(**kw).train(training)
            with torch.no_grad():
                for p in m.parameters():
                    p.uniform_(0.5, 1.5)
                if kw.get("track_running_stats"):
                    m.n.running_mean.uniform_(-1, 1)
                    m.n.running_var.uniform_(0.5, 2)
            check(m, (torch.randn(2, 4, 3, 5),))
    check(Fn(lambda s, v: F.instance_norm(v)), (torch.randn(2, 3, 7),))
    print("decoder ok")
# CHECK-LABEL: TEST: test_decoder_instance_norm
# CHECK: decoder ok


@run
def test_einsum():
    # aten.einsum had no mapping: contractions, batch and broadcast axes,
    # ellipses, outer products, three operands, implicit outputs.
    torch.manual_seed(0)
    cases = [("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij,jk", [(3, 4), (4, 5)]),
             ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("i,i->", [(5,), (5,)]),
             ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("i,j->ij", [(3,), (4,)]),
             ("ij,ij->ij", [(3, 4), (3, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
             ("bi,bi->b", [(3, 4), (3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
             ("bij,bkj->bik", [(1, 3, 4), (2, 5, 4)]), ("nchw,oc->nohw", [(2, 3, 4, 4), (5, 3)]),
             ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)])]
    for eq, shapes in cases:
        args = tuple(torch.randn(*s) for s in shapes)
        check(Fn(lambda s, *a, eq=eq: torch.einsum(eq, *a)), args)
    try:
        import_module(Fn(lambda s, a: torch.einsum("ii->i", a)), (torch.randn(3, 3),))
    except UnsupportedOpError as err:
        print(err.reason)
    print("einsum ok")
# CHECK-LABEL: TEST: test_einsum
# CHECK-NEXT: einsum 'ii->i': a label repeated within one operand ('ii', a diagonal) has no rlx mapping
# CHECK-NEXT: einsum ok


class EinsumAttention(nn.Module):
    """Causal self-attention written as in Hugging Face-style code: einsum
    scores, masked_fill with a boolean triangle, softmax, einsum values."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.qkv, self.proj, self.heads = nn.Linear(d, 3 * d), nn.Linear(d, d), heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        att = torch.einsum("bqhd,bkhd->bhqk", q, k) / (d // self.heads) ** 0.5
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        return self.proj(torch.einsum("bhqk,bkhd->bqhd", att, v).reshape(b, t, d))


class GatherHead(nn.Module):
    """Losses picked with gather and advanced indexing (the last token of
    each sequence: logits[arange(B), lengths - 1])."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 5)

    def forward(self, h, lengths, labels):
        logp = F.log_softmax(self.lin(h), -1)                        # (B, T, 5)
        last = logp[torch.arange(h.shape[0]), lengths - 1]          # (B, 5)
        nll = -torch.gather(last, 1, labels.unsqueeze(1)).mean()
        return nll + torch.cumsum(logp, 1)[:, -1].sum() * 1e-2


@run
def test_gather_and_indexing():
    # aten.gather had no mapping; x[i, j] with several index tensors was refused.
    torch.manual_seed(0)
    x = torch.randn(3, 4, 5)
    for dim in (0, 1, 2, -1):
        shape = [3, 4, 5]
        shape[dim] = 6
        index = torch.randint(0, [3, 4, 5][dim], tuple(shape))
        check(Fn(lambda s, v, i, d=dim: torch.gather(v, d, i)), (x, index))
    check(Fn(lambda s, v, i: torch.gather(v, 1, i)), (x, torch.randint(0, 4, (2, 2, 3))))
    const = torch.tensor([[[0], [3]]]).expand(3, 2, 5)
    check(Fn(lambda s, v: torch.gather(v, 1, const)), (x,))
    a, b = torch.tensor([0, 2, -1]), torch.tensor([1, 3, 0])
    check(Fn(lambda s, v, i, j: v[i, j]), (x, a, b))
    check(Fn(lambda s, v, i, j: v[:, i, j]), (x, a, b))
    check(Fn(lambda s, v, i, j: v[i, :, j]), (x, a.view(3, 1), b))
    check(GatherHead(), (torch.randn(3, 4, 8), torch.tensor([4, 1, 2]), torch.tensor([0, 4, 2])))
    model = EinsumAttention()
    check_model(model, (torch.randn(2, 5, 8),), compiled=True)
    print("gather ok")
# CHECK-LABEL: TEST: test_gather_and_indexing
# CHECK: gather ok


class SuperResolution(nn.Module):
    """ESPCN-style: reflect padding, PReLU, Mish, pixel shuffle (x2)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 5)
        self.act = nn.PReLU(8)
        self.c2 = nn.Conv2d(8, 3 * 4, 3, padding=1, padding_mode="circular")

    def forward(self, x):
        h = self.act(self.c1(F.pad(x, (2, 2, 2, 2), mode="reflect")))
        return torch.sigmoid(F.pixel_shuffle(self.c2(F.mish(h)), 2))


@run
def test_padding_and_decomposed_ops():
    # F.pad, flip, PReLU, log_sigmoid, kl_div, cosine_similarity, outer,
    # log2/exp2 had no mapping; roll, pixel_shuffle, mish, glu, selu, celu,
    # smooth_l1/huber, binary_cross_entropy, adaptive_max_pool2d, std_mean
    # are now PyTorch's own decompositions into mapped ops.
    torch.manual_seed(0)
    x = torch.randn(2, 4, 6, 6)
    t = torch.rand(2, 4, 6, 6)
    w = nn.Parameter(torch.rand(4))
    for mode in ("constant", "reflect", "replicate", "circular"):
        check(Fn(lambda s, v, m=mode: F.pad(v, (1, 2, 2, 1), mode=m)), (x,))
    for f in (lambda v: F.pad(v, (1, -2, 0, 3), value=0.5), lambda v: nn.ZeroPad2d((1, 0, 1, 0))(v),
              lambda v: torch.flip(v, [1, 3]), lambda v: torch.roll(v, (1, -2), (2, 3)),
              lambda v: F.pixel_unshuffle(v, 2), F.mish, lambda v: F.glu(v, 1), F.selu, F.celu,
              F.logsigmoid, lambda v: F.adaptive_max_pool2d(v, 1),
              lambda v: torch.std_mean(v, 1)[0], lambda v: torch.log2(v.abs() + 1),
              lambda v: torch.log10(v.abs() + 1) + torch.exp2(v),
              lambda v: torch.outer(v[0, 0, 0], v[1, 1, 1]),
              lambda v: F.cosine_similarity(v, v[:1], dim=1),
              lambda v: F.cosine_similarity(v, v * 0, dim=-1)):
        check(Fn(lambda s, v, f=f: f(v)), (x,))
    check(Fn(lambda s, v: F.prelu(v, s.w), w=w.data), (x,))
    for f in (F.smooth_l1_loss, F.huber_loss, lambda a, b: F.binary_cross_entropy(a.sigmoid(), b),
              lambda a, b: F.kl_div(F.log_softmax(a, 1), b, reduction="batchmean"),
              lambda a, b: F.kl_div(a, b.log(), reduction="sum", log_target=True)):
        check(Fn(lambda s, a, b, f=f: f(a, b)), (x, t))
    check_model(SuperResolution(), (torch.randn(2, 3, 8, 8),), compiled=True)
    print("padding ok")
# CHECK-LABEL: TEST: test_padding_and_decomposed_ops
# CHECK: padding ok


class LastTokenClassifier(nn.Module):
    """Hugging Face's sequence classification head (GPT-2 style): position
    ids from the padding mask's cumsum, the last real token found with
    argmax of the padding mask, picked by advanced indexing."""

    def __init__(self):
        super().__init__()
        self.emb, self.pos = nn.Embedding(6, 4, padding_idx=0), nn.Embedding(5, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, ids):
        mask = (ids != 0).long()
        positions = mask.cumsum(-1) * mask
        h = torch.tanh(self.emb(ids) + self.pos(positions))
        last = torch.eq(ids, 0).int().argmax(-1) - 1
        return self.head(h[torch.arange(ids.shape[0]), last])


@run
def test_integer_positions():
    # integer cumsum, argmax, max(dim)'s indices and `- 1` on run-time tensors were refused
    torch.manual_seed(0)
    x = torch.randn(3, 4, 5)
    x[0, 1, 2] = x[0, 1, 4] = 9.0          # a tie: the first position, as torch
    for f in (lambda v: v.argmax(1), lambda v: v.argmin(-1, keepdim=True), lambda v: v.argmax(),
              lambda v: v * v.argmax(2, keepdim=True), lambda v: v.max(2)[1], lambda v: v.min(0),
              lambda v: v * v.max(-1, keepdim=True).indices):
        check(Fn(lambda s, v, f=f: f(v)), (x,))
    check(LastTokenClassifier(), (torch.tensor([[5, 3, 1, 0], [1, 2, 3, 0]]),))
    print("integer positions ok")
# CHECK-LABEL: TEST: test_integer_positions
# CHECK: integer positions ok


def check_float32(model, args):
    """The compiled float32 adjoint against torch.autograd in float32: the
    loss to 1e-5, the gradients to 1e-4 relative or 1e-4 of the largest
    gradient (the two sum in different orders)."""
    loss = Weighted(model, args)
    module = import_module(loss, args)
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
    outs = gradir.compile(module, target="cpu")["main_adjoint"](*np_args(loss, args))
    leaves = [a.detach().clone().requires_grad_(a.is_floating_point()) for a in args]
    value = loss(*leaves)
    wrt = [a for a in leaves if a.is_floating_point()] + list(loss.parameters())
    grads = torch.autograd.grad(value, wrt)
    np.testing.assert_allclose(outs[0], value.item(), rtol=1e-5)
    # a gradient that is 0 in exact arithmetic (a bias before a norm) is
    # rounding noise in both: compared at the scale of all gradients
    scale = max(float(w.abs().max()) for w in grads)
    for i, (g, w) in enumerate(zip(outs[1:], grads)):
        assert g.dtype == np.float32
        w = w.numpy()
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, err_msg=f"gradient {i}")


@run
def test_float32():
    # The same blocks in float32, compiled, against PyTorch's float32.
    torch.manual_seed(0)
    for model, args in ((Decoder(), (torch.randn(2, 6),)),
                        (InvertedResidual(4, 4, 1, 2).eval(), (torch.randn(2, 4, 6, 6),)),
                        (EinsumAttention(), (torch.randn(2, 5, 8),))):
        model = model.float()
        args = tuple(a.float() for a in args)
        check_forward(model, args)
        check_float32(model, args)
    print("float32 ok")
# CHECK-LABEL: TEST: test_float32
# CHECK: float32 ok

# RUN: %PYTHON %s | FileCheck %s
# gradir.frontends.torch.compile runs rlx-fuse-attention before rlx-gradient
# (the fuse_attention option, on by default): a model whose attention's score
# matrix of one (batch, head) is over the budget trains with its attention
# per block of query rows, and its loss and gradients equal PyTorch's;
# fuse_attention=False leaves it whole; a bad value is refused when the
# module is made.

import torch
import torch.nn as nn
import torch.nn.functional as F

import gradir.frontends.torch as gt

torch.set_default_dtype(torch.float64)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.qkv = nn.Linear(16, 48)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 2, 8).permute(2, 0, 3, 1, 4)
        h = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(h.transpose(1, 2).reshape(b, s, 16)).mean((1, 2)).sum()


x = torch.randn(2, 96, 16)
for fuse in (4096, False):
    model = Attention()
    ref = Attention()
    compiled = gt.compile(model, (x,), fuse_attention=fuse)
    loss = compiled(x)
    loss.backward()
    want = ref(x)
    want.backward()
    variant = next(iter(compiled.variants.values()))
    text = str(variant.module)
    fused = "scf.for" in text
    err = max(float((p.grad - r.grad).abs().max()) for p, r in zip(model.parameters(),
                                                                   ref.parameters()))
    print(f"fuse_attention={fuse}: fused {fused}, loss {abs(float(loss.detach() - want.detach())) < 1e-12}, "
          f"gradients {err < 1e-12}")
# CHECK: fuse_attention=4096: fused True, loss True, gradients True
# CHECK: fuse_attention=False: fused False, loss True, gradients True

for bad in (-1, "512KiB", 1.5):
    try:
        gt.compile(Attention(), (x,), fuse_attention=bad)
    except ValueError as err:
        print("refused:", str(err).split(",")[0])
# CHECK-COUNT-3: refused: fuse_attention must be True

"""Model factories for the gradir-import tests."""

import torch
import torch.nn as nn


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp()

    def forward(self, x, labels):
        return nn.functional.cross_entropy(self.net(x), labels)


def classifier_with_args():
    return Classifier(), (torch.randn(3, 4), torch.tensor([0, 1, 1]))


class Cumprod(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 1)


def cumprod():
    return Cumprod()


class ScaledNorm(nn.Module):
    """bf16 constants: scalar operands, a norm's epsilon, a buffer."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4, elementwise_affine=False)
        self.register_buffer("scale", torch.arange(4.0) + 1)

    def forward(self, x):
        return self.norm(self.lin(x) * 2.0 + 1) * self.scale


def bf16_scaled():
    torch.manual_seed(0)
    return ScaledNorm().to(torch.bfloat16), (torch.randn(3, 4, dtype=torch.bfloat16),)


class Repeat(nn.Module):
    """A forward with a Python int argument (torch.export specializes it)."""

    def __init__(self):
        super().__init__()
        self.net = mlp()

    def forward(self, x, times: int):
        return (self.net(x) * times).sum()


def repeat_with_int():
    return Repeat(), (torch.randn(3, 4), 2)

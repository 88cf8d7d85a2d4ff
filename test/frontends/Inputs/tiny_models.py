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

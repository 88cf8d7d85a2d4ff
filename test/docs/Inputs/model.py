"""The PyTorch model the examples of README.md and docs/ import: a small MLP
classifier with its loss inside (gradir-import model.py:make ...)."""
import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x, labels):
        logits = self.fc2(torch.relu(self.fc1(x)))
        return F.cross_entropy(logits, labels), logits


def make():
    torch.manual_seed(0)
    return Net()

# RUN: %PYTHON %s | FileCheck %s
# Kernel launches per call of three training steps at their real sizes,
# counted on the kernels stage of the NVVM pipeline (gradir.conversion.gpu.
# launches: exact here, no branches), against what a step may launch: the
# MLP step (784-512-512-10, batch 256) at most 25, the CIFAR ResNet step of
# bench/cnn.py (batch 128) at most 150, a Transformer encoder step
# (nn.TransformerEncoderLayer(256, 4, 1024), pre-norm, batch 32, sequence
# 128) at most 60.  Before whole-batch convolutions and kernel fusion they
# launched 34, 7,343 and 120.  No loop launches kernels (one launch per
# convolution, not per image).

import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import gradir  # noqa: E402
from gradir.conversion.gpu.launches import count_lowered  # noqa: E402
from gradir.frontends.torch import import_module  # noqa: E402
from mlp import build_mlp, differentiate  # noqa: E402
from cnn import build_model  # noqa: E402

TARGETS = {"mlp": 25, "resnet": 150, "transformer": 60}


def report(name, module):
    b = count_lowered(module, ["main_adjoint"])["main_adjoint"]
    ok = b["launches"] <= TARGETS[name] and b["exact"]
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(b["kinds"].items()))
    print(f"{name}: {b['launches']} launches (at most {TARGETS[name]}): "
          f"{'ok' if ok else 'OVER'}; {kinds}")


torch.manual_seed(0)
mlp = build_mlp(256, [784, 512, 512, 10])
differentiate(mlp)
report("mlp", mlp)

model = build_model(torch)
x, y = torch.randn(128, 3, 32, 32), torch.randint(0, 10, (128,))
resnet = import_module(model, (x, y))
wrt = ",".join(str(i) for i in range(2, 2 + len(list(model.parameters()))))
gradir.run_pipeline(resnet, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
report("resnet", resnet)


class EncoderStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True,
                                                  norm_first=True)
        self.head = nn.Linear(256, 10)

    def forward(self, x, labels):
        return F.cross_entropy(self.head(self.encoder(x).mean(dim=1)), labels)


step = EncoderStep()
x, labels = torch.randn(32, 128, 256), torch.randint(0, 10, (32,))
transformer = import_module(step, (x, labels))
gradir.run_pipeline(transformer, "builtin.module(rlx-gradient{func=main})")
report("transformer", transformer)

# CHECK: mlp: {{[0-9]+}} launches (at most 25): ok
# CHECK: resnet: {{[0-9]+}} launches (at most 150): ok
# CHECK: transformer: {{[0-9]+}} launches (at most 60): ok

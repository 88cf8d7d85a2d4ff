# RUN: %PYTHON %s | FileCheck %s
# A Transformer encoder training step (nn.TransformerEncoderLayer, pre-norm,
# mean over the sequence, a linear head, cross_entropy) imported from
# PyTorch, differentiated with respect to every parameter, compiled for the
# GPU (target="cuda" to PTX; up to the kernels stage for the SIMT emulator)
# and run by the emulator against the reference interpreter: the loss and
# every gradient.  Its adjoint sums broadcasts along reduced dimensions and
# reads 0-d scalars in kernels (see emulate_broadcasts.py).

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import gradir
from gradir.frontends.torch import import_module
from gradir.testing.gpu_emulator import Emulated

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
torch.manual_seed(0)
D_MODEL, HEADS, FF, BATCH, SEQ, CLASSES = 32, 2, 64, 2, 8, 10


class EncoderStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.0,
                                                  batch_first=True, norm_first=True)
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, x, labels):
        return F.cross_entropy(self.head(self.encoder(x).mean(dim=1)), labels)


model = EncoderStep()
x = torch.randn(BATCH, SEQ, D_MODEL)
labels = torch.randint(0, CLASSES, (BATCH,))
module = import_module(model, (x, labels))
gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
args = [x.numpy(), labels.numpy()] + [p.detach().numpy() for _, p in model.named_parameters()]

exe = gradir.compile(module, target="cuda")
print("compiled for cuda:", sorted(exe.functions))
# CHECK: compiled for cuda: ['main', 'main_adjoint']

want = gradir.interpret(module, "main_adjoint", *args)
got = Emulated(module)["main_adjoint"](*args)
assert len(got) == len(want) == 2 + len(list(model.parameters()))
for i, (g, w) in enumerate(zip(got, want)):
    np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"result {i}")
print(f"loss and {len(got) - 1} gradients match the interpreter")
# CHECK: loss and 15 gradients match the interpreter

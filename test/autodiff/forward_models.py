# RUN: %PYTHON %s | FileCheck %s
# Forward mode on whole models imported from PyTorch (the models of
# test/frontends/models.py: MLP, LeNet, a ResNet basic block in training
# mode, CifarNet, a depthwise MobileNet block, a tiny UNet, Transformer
# encoder layers (torch's own, post- and pre-norm), the causal GPT with its
# tied head, GRU and LSTM cells), float64: @main_jvp along a random tangent of
# every float input and parameter against central differences of @main, and
# @main_hvp (forward over reverse) against central differences of
# @main_adjoint's gradients.  check_jvp also compiles each JVP and compares
# it with the interpreter (gradir.testing.oracle).

import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "frontends", "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "frontends"))

import torch_helpers  # noqa: E402

torch_helpers.run = lambda f: f        # models.py's definitions, not its tests
import models  # noqa: E402

import gradir  # noqa: E402
from gradir.frontends.torch import import_module  # noqa: E402
from gradir.testing import check_jvp, directional_difference, gradient_module  # noqa: E402

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(5)


def check(name, make, args, own_loss=False, hvp=True):
    torch.manual_seed(0)
    model = make()
    loss = models.TakeLoss(model) if own_loss else torch_helpers.Weighted(model, args)
    module = import_module(loss, args)
    text = str(module)
    arrays = torch_helpers.np_args(loss, args)
    wrt = [i for i, a in enumerate(arrays) if np.issubdtype(a.dtype, np.floating)]
    check_jvp(text, arrays, wrt=wrt, rtol=1e-5, atol=1e-8)
    line = f"{name}: jvp of {len(wrt)} arguments matches"
    if hvp:
        m = gradient_module(text, mode="hvp", wrt=wrt)
        n = len(gradir.interpret(m, "main", *arrays))
        vs = [rng.uniform(-1, 1, size=arrays[i].shape) for i in wrt]
        got = gradir.interpret(m, "main_hvp", *arrays, *vs)[n:]
        adj = gradient_module(text, wrt=wrt)
        want = directional_difference(adj, "main_adjoint", arrays, wrt, vs)[n:]
        for g, w in zip(got, want):
            scale = max(float(np.max(np.abs(w))), 1e-6)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * scale)
        line += ", hvp matches"
    print(line)


def encoder(norm_first):
    return lambda: torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                    norm_first=norm_first, activation="gelu")


ids = torch.randint(0, 11, (2, 6))
check("mlp", models.MLP, (torch.randn(8, 10), torch.randint(0, 4, (8,))), own_loss=True)
# CHECK: mlp: jvp of 7 arguments matches, hvp matches
check("lenet", models.LeNet, (torch.randn(2, 1, 16, 16),))
# CHECK-NEXT: lenet: jvp of 9 arguments matches, hvp matches
check("resnet block", lambda: models.BasicBlock(4, 6, 2).train(), (torch.randn(3, 4, 6, 6),))
# CHECK-NEXT: resnet block: jvp of 10 arguments matches, hvp matches
check("cifarnet", lambda: models.CifarNet().train(), (torch.randn(2, 3, 12, 12),))
# CHECK-NEXT: cifarnet: jvp of 14 arguments matches, hvp matches
check("depthwise block", models.MobileBlock, (torch.randn(2, 8, 9, 9),))
# CHECK-NEXT: depthwise block: jvp of 4 arguments matches, hvp matches
check("unet", models.TinyUNet, (torch.randn(2, 2, 8, 8),))
# CHECK-NEXT: unet: jvp of 9 arguments matches, hvp matches
check("transformer post-norm", encoder(False), (torch.randn(2, 5, 8),))
# CHECK-NEXT: transformer post-norm: jvp of 13 arguments matches, hvp matches
check("transformer pre-norm", encoder(True), (torch.randn(2, 5, 8),))
# CHECK-NEXT: transformer pre-norm: jvp of 13 arguments matches, hvp matches
check("gpt", models.GPT, (ids, torch.roll(ids, -1, 1)), own_loss=True)
# CHECK-NEXT: gpt: jvp of 28 arguments matches, hvp matches
check("gru", lambda: models.Recurrent("gru"), (torch.randn(4, 2, 3),))
# CHECK-NEXT: gru: jvp of 7 arguments matches, hvp matches
check("lstm", lambda: models.Recurrent("lstm"), (torch.randn(4, 2, 3),))
# CHECK-NEXT: lstm: jvp of 7 arguments matches, hvp matches

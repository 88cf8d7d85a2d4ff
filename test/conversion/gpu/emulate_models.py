# RUN: %PYTHON %s | FileCheck %s
# RUN: %PYTHON %s tf32 | FileCheck %s --check-prefix=TF32
# Every whole model of test/frontends/models.py (MLP, LeNet, a ResNet basic
# block in training and in eval mode, the CNN zoo: CifarNet, a depthwise
# MobileNet block, a tiny UNet; Transformer encoder layers post- and
# pre-norm, the causal GPT with its tied head, GRU and LSTM cells unrolled)
# imported from PyTorch, differentiated w.r.t. every float input and every
# parameter (rlx-gradient{func=main}: the model's own loss, or a fixed
# random weighting of its outputs as in models.py), compiled for the GPU:
# gradir.compile(target="cuda") lowers it to kernels (PTX/cubin, no GPU
# needed), and the SIMT emulator (gradir.testing.gpu_emulator: lockstep
# threads, race, barrier, bounds and use-after-free checks) runs the forward
# and the adjoint against the reference interpreter, in float64 (to
# rounding) and float32.  Each line gives the number of kernels one call
# launched (Emulator.last_launches).  With argument tf32: float32 only,
# compiled with precision="tf32" (every GEMM and convolution a tensor-core
# kernel), emulated with exact_tf32 (MMAs on whole f32 operands), so the
# tensor-core kernels' data flow is checked to fp32 tolerance (their TF32
# rounding is emulate_tensor_cores.py's).

import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "frontends", "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "frontends"))

import torch_helpers  # noqa: E402

torch_helpers.run = lambda f: f        # models.py's definitions, not its tests
import models  # noqa: E402

import gradir  # noqa: E402
from gradir.frontends.torch import import_module  # noqa: E402
from gradir.testing.gpu_emulator import Emulated  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
torch.set_default_dtype(torch.float64)

# dtype -> (rtol, atol relative to the largest magnitude of the result)
TOLERANCES = {torch.float64: (1e-10, 1e-12), torch.float32: (2e-4, 2e-5)}


def mismatch(got, want, dtype, fn):
    rtol, atol = TOLERANCES[dtype]
    if len(got) != len(want):
        return f"@{fn}: {len(got)} results, want {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"@{fn} result {i}: {g.dtype}{list(g.shape)}, want {w.dtype}{list(w.shape)}"
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        if not np.allclose(g, w, rtol=rtol, atol=atol * max(scale, 1e-30)):
            err = float(np.max(np.abs(g.astype(np.float64) - w)))
            return f"@{fn} result {i}: max abs error {err:.3g} (largest value {scale:.3g})"
    return None


TF32 = sys.argv[1:] == ["tf32"]
OPTIONS = {"precision": "tf32"} if TF32 else {}


def check(name, make, args, own_loss=False):
    """``make()`` builds the model (in the default dtype); ``own_loss``: its first output
    is the loss (models.TakeLoss), else Weighted's random weighting."""
    for dtype in (torch.float32,) if TF32 else (torch.float64, torch.float32):
        torch.set_default_dtype(dtype)      # also the models' own tensors (Recurrent's zeros)
        torch.manual_seed(0)
        model = make()
        inputs = tuple(a.to(dtype) if a.is_floating_point() else a for a in args)
        loss = models.TakeLoss(model) if own_loss else torch_helpers.Weighted(model, inputs)
        module = import_module(loss, inputs)
        gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
        arrays = torch_helpers.np_args(loss, inputs)
        launches, problem = [], None
        try:
            gradir.compile(module, target="cuda", **OPTIONS)   # the kernels compile (PTX)
            exe = Emulated(module, **OPTIONS)
            exe.emulator.exact_tf32 = TF32
            lowered = str(exe.lowered)    # mma.sync (sm_80) or wgmma (sm_90, the default)
            mma = "nvvm.mma.sync" in lowered or "nvvm.wgmma.mma_async" in lowered
            for fn in ("main", "main_adjoint"):
                want = gradir.interpret(module, fn, *arrays)
                got = exe[fn](*arrays)
                got = got if isinstance(got, tuple) else (got,)
                problem = problem or mismatch(got, want, dtype, fn)
                launches.append(exe.emulator.last_launches)
        except Exception as err:     # the next models still run
            problem = f"{type(err).__name__}: {str(err).splitlines()[0]}"
        torch.set_default_dtype(torch.float64)
        print(f"{name} {str(dtype)[6:]}: " + (problem or
              f"loss and {len(want) - 1} gradients match the interpreter; launches: "
              f"forward {launches[0]}, adjoint {launches[1]}")
              + (f"; tensor cores: {mma}" if TF32 else ""))


def resnet_block_eval():
    block = models.BasicBlock(4, 6, 2)
    with torch.no_grad():
        for m in block.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    return block.eval()


def encoder(norm_first):
    return lambda: torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                    norm_first=norm_first, activation="gelu")


torch.manual_seed(0)
ids = torch.randint(0, 11, (2, 6))
check("mlp", models.MLP, (torch.randn(8, 10), torch.randint(0, 4, (8,))), own_loss=True)
# CHECK: mlp float64: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: mlp float32: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32: mlp float32: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("lenet", models.LeNet, (torch.randn(2, 1, 16, 16),))
# CHECK-NEXT: lenet float64: loss and 9 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: lenet float32: loss and 9 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: lenet float32: loss and 9 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("resnet block train", lambda: models.BasicBlock(4, 6, 2).train(), (torch.randn(3, 4, 6, 6),))
# CHECK-NEXT: resnet block train float64: loss and 10 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: resnet block train float32: loss and 10 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: resnet block train float32: loss and 10 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: False
check("resnet block eval", resnet_block_eval, (torch.randn(3, 4, 6, 6),))
# CHECK-NEXT: resnet block eval float64: loss and 10 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: resnet block eval float32: loss and 10 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: resnet block eval float32: loss and 10 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: False
check("cifarnet", lambda: models.CifarNet().train(), (torch.randn(2, 3, 12, 12),))
# CHECK-NEXT: cifarnet float64: loss and 14 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: cifarnet float32: loss and 14 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: cifarnet float32: loss and 14 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("depthwise block", models.MobileBlock, (torch.randn(2, 8, 9, 9),))
# CHECK-NEXT: depthwise block float64: loss and 4 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: depthwise block float32: loss and 4 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: depthwise block float32: loss and 4 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("unet", models.TinyUNet, (torch.randn(2, 2, 8, 8),))
# CHECK-NEXT: unet float64: loss and 9 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: unet float32: loss and 9 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: unet float32: loss and 9 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("transformer post-norm", encoder(False), (torch.randn(2, 5, 8),))
# CHECK-NEXT: transformer post-norm float64: loss and 13 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: transformer post-norm float32: loss and 13 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: transformer post-norm float32: loss and 13 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("transformer pre-norm", encoder(True), (torch.randn(2, 5, 8),))
# CHECK-NEXT: transformer pre-norm float64: loss and 13 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: transformer pre-norm float32: loss and 13 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: transformer pre-norm float32: loss and 13 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("gpt", models.GPT, (ids, torch.roll(ids, -1, 1)), own_loss=True)
# CHECK-NEXT: gpt float64: loss and 28 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: gpt float32: loss and 28 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: gpt float32: loss and 28 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: True
check("gru", lambda: models.Recurrent("gru"), (torch.randn(4, 2, 3),))
# CHECK-NEXT: gru float64: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: gru float32: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: gru float32: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: False
check("lstm", lambda: models.Recurrent("lstm"), (torch.randn(4, 2, 3),))
# CHECK-NEXT: lstm float64: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# CHECK-NEXT: lstm float32: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}
# TF32-NEXT: lstm float32: loss and 7 gradients match the interpreter; launches: forward {{[1-9][0-9]*}}, adjoint {{[1-9][0-9]*}}; tensor cores: False

# RUN: %PYTHON %s | FileCheck %s
# gpu-fuse-rows on the emulator: softmax, log-softmax with cross entropy,
# layer norm and batch-norm statistics (training mode), each with its
# gradient (rlx-gradient), lowered to the kernels stage and run by the SIMT
# emulator (races, divergent barriers, uninitialised reads) against the
# reference interpreter.  Each line: the row kernels (gpu-fuse-rows) and all
# kernels one call of the adjoint launches.

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import gradir
import gradir._compat
from gradir.conversion.gpu.launches import launch_breakdown
from gradir.frontends.torch import import_module
from gradir.testing.gpu_emulator import Emulated

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
torch.manual_seed(0)


class Softmax(nn.Module):
    def forward(self, x, t):
        return (F.softmax(x * 1.5, dim=-1) * t).sum()


class LogSoftmax(nn.Module):
    def forward(self, x, t):
        return (F.log_softmax(x, dim=-1) * t).sum()


class Attention(nn.Module):
    def forward(self, q, k, v, t):
        p = F.softmax(q @ k.transpose(-1, -2) * 0.3, dim=-1)
        return ((p @ v) * t).sum()


class SoftmaxMiddle(nn.Module):
    def forward(self, x, t):
        return (F.softmax(x, dim=1) * t).sum()


class CrossEntropy(nn.Module):
    def __init__(self, d, classes):
        super().__init__()
        self.head = nn.Linear(d, classes)

    def forward(self, x, labels):
        return F.cross_entropy(self.head(x), labels)


class LayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        with torch.no_grad():
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x, t):
        return (self.norm(x) * t).sum()


class BatchNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.BatchNorm2d(c)
        with torch.no_grad():
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x, t):
        return (self.norm(x) * t).sum()


def check(name, model, *inputs):
    model.train()
    module = import_module(model, inputs)
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
    args = [i.numpy() for i in inputs] + [p.detach().numpy() for p in model.parameters()]
    exe = Emulated(module)
    for fn in ("main", "main_adjoint"):
        want = gradir.interpret(module, fn, *args)
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        got = exe[fn](*args)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        assert len(got) == len(want), (name, fn)
        for i, (g, w) in enumerate(zip(got, want)):
            if np.issubdtype(np.asarray(w).dtype, np.floating):
                np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5,
                                           err_msg=f"{name} {fn} result {i}")
    counts = {fn: launch_breakdown(exe.lowered.operation, fn) for fn in ("main", "main_adjoint")}
    exe["main_adjoint"](*args)
    assert exe.emulator.last_launches == counts["main_adjoint"]["launches"]
    print(f"{name}: forward rows {counts['main']['kinds'].get('rows', 0)} of "
          f"{counts['main']['launches']}, adjoint rows "
          f"{counts['main_adjoint']['kinds'].get('rows', 0)} of "
          f"{counts['main_adjoint']['launches']}")


# Short rows (10 per row, 8 rows per block, 37 rows: the last block partial).
check("softmax-short", Softmax(), torch.randn(37, 10), torch.randn(37, 10))
# CHECK: softmax-short: forward rows 1 of {{[0-9]+}}, adjoint rows {{[1-9]}}
# Long rows (700: each thread of 256 strides over three points).
check("softmax-long", Softmax(), torch.randn(3, 700), torch.randn(3, 700))
# CHECK: softmax-long: forward rows 1 of {{[0-9]+}}, adjoint rows {{[1-9]}}
check("log-softmax", LogSoftmax(), torch.randn(2, 5, 33), torch.randn(2, 5, 33))
# CHECK: log-softmax: forward rows 1 of {{[0-9]+}}, adjoint rows {{[1-9]}}
check("cross-entropy", CrossEntropy(24, 37), torch.randn(20, 24), torch.randint(0, 37, (20,)))
# CHECK: cross-entropy: forward rows 1 of {{[0-9]+}}, adjoint rows {{[1-9]}}
check("layer-norm", LayerNorm(48), torch.randn(3, 5, 48), torch.randn(3, 5, 48))
# CHECK: layer-norm: forward rows 1 of {{[0-9]+}}, adjoint rows {{[1-9]}}
check("batch-norm", BatchNorm(6), torch.randn(4, 6, 5, 7), torch.randn(4, 6, 5, 7))
# CHECK: batch-norm: forward rows 1 of {{[0-9]+}}, adjoint rows {{[1-9]}}
# Few channels, long rows (8 x 16 x 16 = 2048 per channel): 1024 threads per row.
check("batch-norm-long", BatchNorm(3), torch.randn(8, 3, 16, 16), torch.randn(8, 3, 16, 16))
# CHECK: batch-norm-long: forward rows 1 of {{[0-9]+}}, adjoint rows {{[1-9]}}
# Attention scores (batch, heads, queries, keys): the scaling and the softmax
# one row kernel; the product with v (5 keys: no GEMM tiles) reads the
# softmax's sums, a reduction over the keys per output, and is a second one
# with the product by t.
q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
check("attention", Attention(), q, k, v, torch.randn(2, 3, 5, 8))
# CHECK: attention: forward rows 2 of {{[0-9]+}}, adjoint rows {{[1-9]}}
# A softmax along a middle dim: rows that are not along the innermost dim
# are left to gpu-linalg-to-kernels; only the loss (a short total and the
# elementwise op before it) is a row kernel.
check("softmax-middle", SoftmaxMiddle(), torch.randn(3, 6, 4), torch.randn(3, 6, 4))
# CHECK: softmax-middle: forward rows 1 of {{[0-9]+}}, adjoint rows {{[0-9]+}}

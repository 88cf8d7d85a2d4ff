# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# gradir.frontends.torch.compile(model, example_args, target="cuda"): the
# options reach gradir.compile (a CudaExecutable per variant, for the chip
# asked, its kernels a cubin or PTX), and the module's calls run that
# executable, which copies the CPU tensors' data to the device and back
# itself.  Without a GPU: a fake libcuda.so.1 (test/conversion/gpu/Inputs/
# fake_cuda.c) takes the executable's module loads, copies and launches, and
# gradir's SIMT emulator runs each launched kernel (as the same pipeline
# outlines it).  Three Adam steps of an MLP (float32) through the compiled
# forward and backward on the "GPU" equal eager PyTorch's to 1e-5, and so
# does the torch.compile backend with options={"target": "cuda"}.
# keep_resident is refused (the parameters change at every step).  CUDA
# tensors (the results put back on their device) need a torch with CUDA.

import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "conversion", "gpu", "Inputs"))
from fake_driver import FakeDriver, build  # noqa: E402
from torch_helpers import run  # noqa: E402

import gradir  # noqa: E402
import gradir.frontends.torch as gt  # noqa: E402
from gradir.conversion.gpu.nvvm import lower_to_nvvm, run_pipeline  # noqa: E402
from gradir.frontends.torch import training  # noqa: E402
from gradir.ir import print_module  # noqa: E402
from gradir.runtime.cuda import CudaExecutable  # noqa: E402

driver = FakeDriver(build(sys.argv[1]))   # loaded first: it is the process's libcuda.so.1
_build = training._build_variant


def build_and_emulate(module_like, args, wrt, options, buffers=False):
    """training._build_variant, then the variant's executable started (its
    constructor loads its kernel images into the fake driver) and its
    kernels, lowered and outlined as the executable's pipeline does, handed
    to the emulator for those images."""
    v = _build(module_like, args, wrt, options, buffers)
    if isinstance(v.exe, CudaExecutable):
        kernels = gradir.parse(print_module(v.module))
        with kernels.context:
            lower_to_nvvm(kernels.operation, stop_after="kernels",
                          chip=options.get("chip", "sm_90"))
            run_pipeline("builtin.module(gpu-launch-sink-index-computations,"
                         "gpu-kernel-outlining,gpu-kernel-attributes)", kernels.operation)
        first = driver.stat("module load")
        v.exe._ensure_engine()
        v.images = driver.stat("module load") - first
        driver.emulate(kernels.operation, first_image=first)
    return v


training._build_variant = build_and_emulate


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def data(steps=3, batch=6):
    torch.manual_seed(1)
    return [(torch.randn(batch, 12), torch.randint(0, 4, (batch,))) for _ in range(steps)]


def train_side_by_side(model, net, ref):
    """3 Adam steps of ``net`` (on ``model``'s parameters) and eager ``ref``;
    the largest parameter and loss differences."""
    opts = [torch.optim.Adam(m.parameters(), lr=0.01) for m in (model, ref)]
    worst = 0.0
    for x, y in data():
        losses = []
        for m, opt in zip((net, ref), opts):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        worst = max(worst, abs(losses[0] - losses[1]))
    diff = max((p - q).abs().max().item() for p, q in zip(model.parameters(), ref.parameters()))
    return max(worst, diff)


@run
def test_drop_in_module_on_cuda():
    model = MLP()
    ref = copy.deepcopy(model)
    compiled = gt.compile(model, (data()[0][0],), target="cuda", chip="sm_80")
    (v,) = compiled.variants.values()
    print(type(v.exe).__name__, v.exe.options.target, v.exe.options.chip,
          "kernels:", v.exe.format in ("bin", "isa"), sorted(v.exe.functions),
          "images:", v.images)
    err = train_side_by_side(model, compiled, ref)
    print("3 Adam steps on the emulated GPU equal eager:", err <= 1e-5,
          "| driver errors:", driver.errors, "| launches:", driver.stat("launch") > 0)
    # no_grad (eval) at the same shapes: the training variant's @main
    with torch.no_grad():
        x = data()[0][0]
        same = (compiled(x) - ref(x)).abs().max().item() <= 1e-5
    print("no_grad call:", same, "variants:", len(compiled.variants))
# CHECK-LABEL: TEST: test_drop_in_module_on_cuda
# CHECK-NEXT: CudaExecutable cuda sm_80 kernels: True ['main', 'main_bwd', 'main_fwd'] images: 3
# CHECK-NEXT: 3 Adam steps on the emulated GPU equal eager: True | driver errors: [] | launches: True
# CHECK-NEXT: no_grad call: True variants: 1


@run
def test_backend_on_cuda():
    model = MLP()
    ref = copy.deepcopy(model)
    fast = torch.compile(model, backend="gradir", options={"target": "cuda"})
    err = train_side_by_side(model, fast, ref)
    print("torch.compile backend on the emulated GPU equals eager:", err <= 1e-5,
          "| driver errors:", driver.errors)
# CHECK-LABEL: TEST: test_backend_on_cuda
# CHECK-NEXT: torch.compile backend on the emulated GPU equals eager: True | driver errors: []


@run
def test_keep_resident_refused():
    try:
        gt.compile(MLP(), (data()[0][0],), target="cuda", keep_resident=(1, 2))
    except ValueError as err:
        print(err)
# CHECK-LABEL: TEST: test_keep_resident_refused
# CHECK-NEXT: gradir: keep_resident does not apply to a trained module: its parameters change at every optimizer step, so every call uploads them


@run
def test_cuda_tensors():
    if not torch.cuda.is_available():
        print("cuda tensors: skipped (torch without CUDA)")
        return
    model = MLP().cuda()
    compiled = gt.compile(model, (data()[0][0].cuda(),), target="cuda")
    x, y = data()[0]
    out = compiled(x.cuda())
    F.cross_entropy(out, y.cuda()).backward()
    ok = out.device.type == "cuda" and all(p.grad.device.type == "cuda"
                                          for p in model.parameters())
    print("cuda tensors:", "ok" if ok else "wrong device")
# CHECK-LABEL: TEST: test_cuda_tensors
# CHECK-NEXT: cuda tensors: {{ok|skipped \(torch without CUDA\)}}

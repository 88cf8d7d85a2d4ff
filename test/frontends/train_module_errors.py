# RUN: %PYTHON %s 2>/dev/null | FileCheck %s
# Bad input to gradir.frontends.torch.compile's module is an error naming the
# argument (the forward's parameter name): a tensor of a dtype numpy lacks
# (bfloat16), a tensor on a device the target cannot take, a Python number,
# a float input of another dtype than it was compiled for and than the
# model's parameters (PyTorch's matmul refuses the mix, torch.export's trace
# does not), and inputs the model cannot be compiled for (a shape or dtype
# torch.export refuses: the inputs that differ from the first variant's are
# named).  An op without a mapping stays an UnsupportedOpError.  Nothing is
# compiled for a refused call.

import torch
import torch.nn as nn
import torch.nn.functional as F

import gradir.frontends.torch as gt
from gradir.frontends.torch import TorchImportError, UnsupportedOpError


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 3)

    def forward(self, x, labels):
        return F.cross_entropy(self.fc(x), labels)


def attempt(call):
    try:
        call()
    except (TypeError, TorchImportError) as err:
        print(f"{type(err).__name__}: {err}")
    else:
        print("no error")


x, labels = torch.randn(4, 8), torch.tensor([0, 1, 2, 0])
compiled = gt.compile(Net(), (x, labels), cache=False)

attempt(lambda: compiled(x.bfloat16(), labels))
# CHECK: TypeError: gradir: input 'x' is a torch.bfloat16 tensor; the compiled module takes tensors of numpy's dtypes (float16/32/64, integers, bool)
attempt(lambda: compiled(x.to("meta"), labels))
# CHECK-NEXT: TypeError: gradir: input 'x' is on meta; the compiled module runs on CPU tensors (compile with target='cuda' for CUDA tensors)
attempt(lambda: compiled(x, 3))
# CHECK-NEXT: TypeError: gradir: input 'labels' is a int; the compiled module takes tensors only
attempt(lambda: compiled(x.double(), labels))
# CHECK-NEXT: TypeError: gradir: input 'x' is a float64 tensor; the module was compiled for float32 and the model's parameters are float32 (convert the input, or the model)
attempt(lambda: compiled(torch.randn(4, 7), labels))
# CHECK-NEXT: TorchImportError: gradir: cannot compile the model for input 'x' float32[4, 7] (compiled before for float32[4, 8]): a and b must have same reduction dim, but got [4, 7] X [8, 3].
attempt(lambda: compiled(x, labels.float()))
# CHECK-NEXT: TorchImportError: gradir: cannot compile the model for input 'labels' float32[4] (compiled before for int64[4]): gather(): Expected dtype int32/int64 for index, but got torch.float32
print("variants:", len(compiled.variants))
# CHECK-NEXT: variants: 1

# the example arguments themselves: every input is named
attempt(lambda: gt.compile(Net(), (torch.randn(4, 7), labels)))
# CHECK-NEXT: TorchImportError: gradir: cannot compile the model for input 'x' float32[4, 7], input 'labels' int64[4]: a and b must have same reduction dim
attempt(lambda: gt.compile(Net(), (x, [0, 1, 2, 0])))
# CHECK-NEXT: TypeError: gradir: input 'labels' is a list; the compiled module takes tensors only

# a parameter on another device is named too
net = Net()
net.fc.bias = nn.Parameter(torch.zeros(3, device="meta"))
attempt(lambda: gt.compile(net, (x, labels)))
# CHECK-NEXT: TypeError: gradir: parameter 'fc.bias' is on meta; the compiled module runs on CPU tensors


class Scan(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 1).sum()


try:
    gt.compile(Scan(), (x,))
except UnsupportedOpError as err:
    print("UnsupportedOpError:", err.op)
# CHECK-NEXT: UnsupportedOpError: aten.cumprod.default

# RUN: %PYTHON %s | FileCheck %s
# torch.compile(model, backend="gradir") with no import of gradir: TorchDynamo
# finds the backend through the torch_dynamo_backends entry point
# (pyproject.toml -> gradir.frontends.torch_dynamo), and the gradients are
# gradir's, equal to eager PyTorch's.  Importing gradir.frontends.torch as
# well registers nothing twice.

import subprocess
import sys

CHILD = r"""
import sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
x = torch.randn(5, 3, dtype=torch.float64)
m(x).pow(2).sum().backward()
want = [p.grad.clone() for p in m.parameters()]
m.zero_grad()
if sys.argv[1] == "imported":
    import gradir.frontends.torch  # noqa: F401
f = torch.compile(m, backend="gradir")
f(x).pow(2).sum().backward()
same = all(torch.allclose(p.grad, w, rtol=1e-12, atol=1e-12) for p, w in zip(m.parameters(), want))
print(sys.argv[1], "gradir backend ran:", "gradir.frontends.torch.backend" in sys.modules,
      "gradients equal eager:", same)
"""
for mode in ("no-import", "imported"):
    p = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True)
    print(p.stdout.strip() or p.stderr[-2000:])
# CHECK: no-import gradir backend ran: True gradients equal eager: True
# CHECK: imported gradir backend ran: True gradients equal eager: True

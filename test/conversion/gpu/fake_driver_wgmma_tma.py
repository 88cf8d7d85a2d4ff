# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# TMA end to end on the fake driver (fake_driver.py): an exported CUDA
# library compiled for chip="sm_90" with precision="tf32" and wgmma.TMA on
# encodes a tensor map per TMA operand through gradir's runtime
# (mgpuGradirTensorMap -> cuTensorMapEncodeTiled, whose fake checks the
# driver's alignment and box rules and records the map), passes its device
# address to the wgmma kernels, and the emulator runs them from the
# launches (the map decoded from device memory).  An MLP training step
# against numpy in float64, within TF32's error; a second call encodes no
# map again (one device copy per distinct map, reused), and bf16 programs
# (compute_dtype=bf16 converts its operands: cooperative loads) use none.

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))

from fake_driver import FakeDriver, build  # noqa: E402
from emulate_helpers import mlp_step, outlined_kernels  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.gpu.kernels import wgmma as wgmma_kernels  # noqa: E402

wgmma_kernels.TMA = True
out = sys.argv[1]
step = mlp_step()
module, x, labels, params, want = step.module, step.x, step.labels, step.params, step.want
driver = FakeDriver(build(out))

for name, opts, tol in (("tf32", {"precision": "tf32"}, 1e-2),
                        ("bf16", {"compute_dtype": "bf16"}, 3e-2)):
    exe = gradir.compile(module, target="cuda", chip="sm_90", **opts)
    path = str(exe.export_library(os.path.join(out, name, "mlp.so")))
    kernels, text = outlined_kernels(module, chip="sm_90", **opts)
    driver.emulate(kernels.operation)
    lib = gradir.runtime.load(path)
    before = driver.stat("tensor map")
    got = lib["main_adjoint"](x, labels, *params)
    first = driver.stat("tensor map") - before
    again = lib["main_adjoint"](x, labels, *params)
    errs = [float(np.abs(g - w).max() / np.abs(w).max()) for g, w in zip(got, want)]
    same = all(np.array_equal(a, b) for a, b in zip(got, again))
    print(name, "bulk copies:", "nvvm.cp.async.bulk.tensor" in text,
          "maps encoded:", first, "then:", driver.stat("tensor map") - before - first,
          "within tolerance:", max(errs) < tol, "repeatable:", same,
          "launch errors:", driver.errors)
# CHECK: tf32 bulk copies: True maps encoded: 4 then: 0 within tolerance: True repeatable: True launch errors: []
# CHECK-NEXT: bf16 bulk copies: False maps encoded: 0 then: 0 within tolerance: True repeatable: True launch errors: []

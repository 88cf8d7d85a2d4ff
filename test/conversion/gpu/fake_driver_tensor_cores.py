# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# An exported CUDA library compiled with precision="tf32" (and one with
# compute_dtype="bf16") run end to end on the fake libcuda.so.1
# (fake_driver.py): its GEMMs are tensor-core kernels (mma.sync; under TF32
# their f32 tiles copied with cp.async from the driver's buffers, at their
# real addresses), which the emulator runs from the launches the library
# makes.  An MLP training step
# against numpy in float64, within TF32's (bf16's) error.

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))

from fake_driver import FakeDriver, build  # noqa: E402
from emulate_helpers import mlp_step, outlined_kernels  # noqa: E402

import gradir  # noqa: E402

out = sys.argv[1]
step = mlp_step()
module, x, labels, params, want = step.module, step.x, step.labels, step.params, step.want
driver = FakeDriver(build(out))

for name, opts, tol in (("tf32", {"precision": "tf32"}, 1e-2),
                        ("bf16", {"compute_dtype": "bf16"}, 3e-2)):
    exe = gradir.compile(module, target="cuda", chip="sm_80", **opts)
    path = str(exe.export_library(os.path.join(out, name, "mlp.so")))
    # the kernels as the library's pipeline outlined them
    kernels, text = outlined_kernels(module, chip="sm_80", **opts)
    driver.emulate(kernels.operation)
    lib = gradir.runtime.load(path)
    got = lib["main_adjoint"](x, labels, *params)
    errs = [float(np.abs(g - w).max() / np.abs(w).max()) for g, w in zip(got, want)]
    print(name, "mma kernels:", text.count("nvvm.mma.sync") > 0, "cp.async:",
          text.count("nvvm.cp.async.shared.global") > 0, "within tolerance:",
          max(errs) < tol, "launch errors:", driver.errors)
# CHECK: tf32 mma kernels: True cp.async: True within tolerance: True launch errors: []
# CHECK-NEXT: bf16 mma kernels: True cp.async: False within tolerance: True launch errors: []

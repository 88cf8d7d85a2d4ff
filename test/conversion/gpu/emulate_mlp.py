# RUN: %PYTHON %s | FileCheck %s
# An MLP gradient step (loss, logits, every parameter gradient) compiled for
# the GPU and run by the SIMT emulator, against the hand-written numpy
# backward of examples/mlp.py: tiled GEMM and reduction kernels (sizes that
# are not multiples of the tiles), the serial kernels of opt_level 0,
# several GEMM tile sizes (sm_count), and parameters kept resident on the
# device (keep_resident) with their upload function.

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))

from mlp import build_mlp, differentiate, init_params, numpy_step  # noqa: E402

from gradir.testing.gpu_emulator import Emulated  # noqa: E402


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def inputs(batch, sizes, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    return x, labels


def max_error(got, want):
    return max(float(np.max(np.abs(np.asarray(g, np.float64) - w))) for g, w in zip(got, want))


@run
def test_mlp_step():
    for batch, sizes, opt, sm in ((37, [50, 33, 20, 7], 3, 132), (64, [100, 70, 10], 3, 1),
                                  (20, [30, 17, 5], 0, 132)):
        module = build_mlp(batch, sizes)
        differentiate(module)
        exe = Emulated(module, opt_level=opt, sm_count=sm)
        x, labels = inputs(batch, sizes)
        params = init_params(sizes)
        err = max_error(exe["main_adjoint"](x, labels, *params), numpy_step(x, labels, *params))
        print(f"batch {batch} sizes {sizes} opt {opt}: ok" if err < 1e-4 else
              f"batch {batch} sizes {sizes} opt {opt}: max error {err}")
# CHECK-LABEL: TEST: test_mlp_step
# CHECK-NEXT: batch 37 sizes [50, 33, 20, 7] opt 3: ok
# CHECK-NEXT: batch 64 sizes [100, 70, 10] opt 3: ok
# CHECK-NEXT: batch 20 sizes [30, 17, 5] opt 0: ok


@run
def test_keep_resident():
    batch, sizes = 16, [20, 12, 6]
    module = build_mlp(batch, sizes)
    differentiate(module)
    exe = Emulated(module, keep_resident=(2, 3, 4, 5))
    print("functions:", sorted(exe.functions))
    x, labels = inputs(batch, sizes)
    p1, p2 = init_params(sizes, seed=1), init_params(sizes, seed=2)
    step = exe["main_adjoint"]
    print("first call uploads:", max_error(step(x, labels, *p1), numpy_step(x, labels, *p1)) < 1e-5)
    print("later calls keep the device copy:",
          max_error(step(x, labels, *p2), numpy_step(x, labels, *p1)) < 1e-5)
    exe["main_adjoint_upload_resident"](*p2)
    print("after the upload function:",
          max_error(step(x, labels, *p1), numpy_step(x, labels, *p2)) < 1e-5)
# CHECK-LABEL: TEST: test_keep_resident
# CHECK-NEXT: functions: ['main', 'main_adjoint', 'main_adjoint_upload_resident', 'main_upload_resident']
# CHECK-NEXT: first call uploads: True
# CHECK-NEXT: later calls keep the device copy: True
# CHECK-NEXT: after the upload function: True

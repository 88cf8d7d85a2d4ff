# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# Dynamic shared memory end to end on the fake driver (fake_driver.py):
#
# * the fake's rules (fake_cuda.c): a launch may have 48 KiB of dynamic
#   shared memory as is; more only after
#   cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) up to
#   that size, never over 227 KiB (nor may the attribute be set over it);
# * an exported CUDA library whose wgmma stages use dynamic shared memory
#   (wgmma.DYNAMIC_SMEM on, 128x128 tiles: 132096 bytes for TF32, 66560 for
#   f16 with MN-major operands) runs: gradir's runtime sets the attribute
#   before the first launch (none refused) and the emulator runs the
#   kernels from the launches (the dynamic size passed on), against the
#   interpreter in float64.

import ctypes
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))

from emulate_helpers import inputs, matmul, outlined_kernels, rel  # noqa: E402
from fake_driver import FakeDriver, build  # noqa: E402

import gradir  # noqa: E402
from gradir.conversion.gpu.kernels import wgmma as wgmma_kernels  # noqa: E402

out = sys.argv[1]
driver = FakeDriver(build(out))

# The fake's rules, straight through its entry points (no kernel runs).
lib = driver.lib
fn = ctypes.c_void_p()
lib.cuModuleGetFunction(ctypes.byref(fn), ctypes.c_void_p(0x10), b"probe")


def launch(smem: int) -> int:
    return lib.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, ctypes.c_uint(smem), None, None, None)


ATTR = 8      # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
print("48 KiB:", launch(48 * 1024), "more:", launch(48 * 1024 + 16),
      "attribute 100000:", lib.cuFuncSetAttribute(fn, ATTR, 100000),
      "then 100000:", launch(100000), "100016:", launch(100016),
      "attribute over 227 KiB:", lib.cuFuncSetAttribute(fn, ATTR, 227 * 1024 + 1),
      "attribute 227 KiB:", lib.cuFuncSetAttribute(fn, ATTR, 227 * 1024),
      "over 227 KiB:", launch(227 * 1024 + 16), "refused:", driver.stat("refused launch"))
# CHECK: 48 KiB: 0 more: 1 attribute 100000: 0 then 100000: 0 100016: 1 attribute over 227 KiB: 1 attribute 227 KiB: 0 over 227 KiB: 1 refused: 3

# An exported library with dynamic shared memory (sm_count=1: 128x128 tiles).
wgmma_kernels.DYNAMIC_SMEM = True
sizes = []
on_launch = driver._on_launch


def recording(module, name, gx, gy, gz, bx, by, bz, smem, params):
    sizes.append(smem)
    return on_launch(module, name, gx, gy, gz, bx, by, bz, smem, params)


driver._on_launch = recording
rng = np.random.default_rng(0)
for name, text, opts, tol in (
        ("tf32", matmul(136, 200, 140, tb=True), {"precision": "tf32"}, 2e-3),
        ("f16", matmul(136, 200, 144, ta=True, t="f16"), {}, 2e-3)):
    module = gradir.parse(text)
    refused = driver.stat("refused launch")
    exe = gradir.compile(module, target="cuda", chip="sm_90", sm_count=1, **opts)
    path = str(exe.export_library(os.path.join(out, name, "gemm.so")))
    kernels, _ = outlined_kernels(module, chip="sm_90", sm_count=1, **opts)
    driver.emulate(kernels.operation)
    loaded = gradir.runtime.load(path)
    args = inputs(gradir.parse(text), rng)
    want = gradir.interpret(gradir.parse(text.replace("xf32>", "xf64>").replace(
        "xf16>", "xf64>")), "main", *[a.astype(np.float64) for a in args])
    got = loaded["main"](*args)
    got = got[0] if isinstance(got, tuple) else got
    print(name, "dynamic sizes:", sorted(set(s for s in sizes if s)),
          "within tolerance:", rel(got, np.asarray(want).reshape(got.shape)) < tol,
          "refused:", driver.stat("refused launch") - refused, "launch errors:", driver.errors)
    sizes.clear()
# CHECK-NEXT: tf32 dynamic sizes: [132096] within tolerance: True refused: 0 launch errors: []
# CHECK-NEXT: f16 dynamic sizes: [66560] within tolerance: True refused: 0 launch errors: []

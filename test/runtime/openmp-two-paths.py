# RUN: %PYTHON %s | FileCheck %s
# One process, multi-threaded code from both LLVM paths: a library the
# tools path built (its build directory holds a copy of libomp.so, removed
# with the executable) and then ExecutionEngine code.  One libomp only: the
# tools path loads the process's libomp before its library, so the JIT finds
# it loaded (without that, the second libomp aborted the process: "OMP:
# Error #15: Initializing libomp.so, but found libomp.so already
# initialized").

import gc
import os

import numpy as np

import gradir
from gradir.conversion.cpu import rlx_parallel_loops
from gradir.runtime.toolchain import uses_openmp

rlx_parallel_loops.PIPELINE_MIN_WORK = rlx_parallel_loops.MIN_WORK   # small: threaded anyway


def module():
    return gradir.parse("""
func.func @main(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %m = "rlx.matmul"(%a, %b) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %t = "rlx.tanh"(%m) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  return %t : tensor<256x256xf32>
}""")


rng = np.random.default_rng(0)
a = rng.standard_normal((256, 256)).astype(np.float32)
b = rng.standard_normal((256, 256)).astype(np.float32)
want = np.tanh(a.astype(np.float64) @ b)

os.environ["GRADIR_LLVM_TOOLS"] = "1"
exe = gradir.compile(module(), threads=2, cache=False)
print(type(exe).__name__, "parallel:", uses_openmp(exe.llvm_ir),
      np.allclose(exe["main"](a, b), want, rtol=1e-3, atol=1e-3))
# CHECK: ToolchainExecutable parallel: True True
del exe
gc.collect()                        # its build directory (and libomp copy) go

os.environ["GRADIR_LLVM_TOOLS"] = "0"
exe = gradir.compile(module(), threads=2, cache=False)
print(type(exe).__name__, np.allclose(exe["main"](a, b), want, rtol=1e-3, atol=1e-3))
# CHECK-NEXT: Executable True
libs = [line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith("libomp.so")
        or "libomp.so (deleted)" in line]
print("libomp files mapped:", len(set(libs)))
# CHECK-NEXT: libomp files mapped: 1

# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# A function whose only parallel code is the kernels' batched OpenMP driver
# (a batched matmul at threads=2) loads the kernels' OpenMP library: it
# compiled before only when some other loop of the module was parallel
# ("Symbols not found: _mlir_ciface_gradir_kernel_<v>_batch_f32").  Through
# the JIT and an exported library, against numpy.

import os
import sys

import numpy as np

import gradir

out = sys.argv[1]
module = gradir.parse("""
func.func @main(%a: tensor<4x256x256xf32>, %b: tensor<4x256x256xf32>) -> tensor<4x256x256xf32> {
  %m = "rlx.matmul"(%a, %b) : (tensor<4x256x256xf32>, tensor<4x256x256xf32>) -> tensor<4x256x256xf32>
  return %m : tensor<4x256x256xf32>
}""")
rng = np.random.default_rng(1)
a, b = (rng.standard_normal((4, 256, 256)).astype(np.float32) for _ in range(2))
want = np.matmul(a.astype(np.float64), b.astype(np.float64))
exe = gradir.compile(module, threads=2)
jit = exe["main"](a, b)
path = exe.export_library(os.path.join(out, "bmm.so"))
lib = gradir.runtime.load(path)["main"](a, b)
print("jit", np.allclose(jit, want, rtol=1e-4, atol=1e-3), "library", np.array_equal(jit, lib))
# CHECK: jit True library True

# RUN: %PYTHON %s | FileCheck %s
# Split kernels (reductions and GEMM K loops spread over more blocks, partial
# results combined with atomics) in the SIMT emulator against numpy: sums,
# maxima and minima over long columns, and a matmul with a long K whose
# zero-initialised result is cleared by a kernel first.

import numpy as np

import gradir
from gradir.conversion.gpu.common import walk
from gradir.testing.gpu_emulator import Emulated

module = gradir.parse("""
func.func @columns(%x: tensor<6000x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = "rlx.sum"(%x) {axis = array<i64: 0>} : (tensor<6000x8xf32>) -> tensor<8xf32>
  %a = "rlx.max"(%x) {axis = array<i64: 0>} : (tensor<6000x8xf32>) -> tensor<8xf32>
  %b = "rlx.min"(%x) {axis = array<i64: 0>} : (tensor<6000x8xf32>) -> tensor<8xf32>
  return %s, %a, %b : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
func.func @long_k(%a: tensor<20x3000xf32>, %b: tensor<3000x12xf32>) -> tensor<20x12xf32> {
  %m = "rlx.matmul"(%a, %b) : (tensor<20x3000xf32>, tensor<3000x12xf32>) -> tensor<20x12xf32>
  return %m : tensor<20x12xf32>
}""")
exe = Emulated(module)
kernels = sorted(str(op.attributes["function"]) for op in walk(exe.lowered.operation)
                 if op.name == "gpu.launch")
print("kernels:", [k for k in kernels if "split" in k or "zero" in k])
# (the three column sums are one split reduction with three outputs, its zero
# fill and the GEMM's merged into them by gpu-fuse-generics)
# CHECK: kernels: ['@columns_reduce_split_1', '@long_k_gemm_splitk_1']

rng = np.random.default_rng(0)
x = rng.standard_normal((6000, 8)).astype(np.float32)
s, hi, lo = exe["columns"](x)
print("sum:", np.allclose(s, x.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3),
      "max:", np.array_equal(hi, x.max(0)), "min:", np.array_equal(lo, x.min(0)))
# CHECK-NEXT: sum: True max: True min: True

a = rng.standard_normal((20, 3000)).astype(np.float32)
b = rng.standard_normal((3000, 12)).astype(np.float32)
print("matmul:", np.allclose(exe["long_k"](a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3))
# CHECK-NEXT: matmul: True

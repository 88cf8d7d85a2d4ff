// RUN: not gradir-run %s --random-inputs 0 2>&1 | FileCheck %s
// RUN: not %PYTHON -c "import gradir, numpy as np; exe = gradir.compile(gradir.parse(open('%s').read()), opt_level=0); exe['main'](np.float32(1))" 2>&1 | FileCheck %s --check-prefix=API
// A 900 GB intermediate (under the 1 TiB limit of one buffer) on a machine
// with less memory: compiled code cannot report a failed malloc, so the call
// is refused before it starts (MemoryError; a located error in gradir-run).

// CHECK: out-of-memory.mlir:[[@LINE+2]]:1: error: not enough memory to run @main: @main needs a buffer of 838.2 GiB; this machine has {{.*}} GiB of memory and swap
// API: MemoryError: @main needs a buffer of 838.2 GiB
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = "rlx.broadcast_to"(%x) : (tensor<f32>) -> tensor<225000000000xf32>
  %1 = "rlx.exp"(%0) : (tensor<225000000000xf32>) -> tensor<225000000000xf32>
  %2 = "rlx.sum"(%1) : (tensor<225000000000xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

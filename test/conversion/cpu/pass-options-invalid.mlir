// Out-of-range options of the lowering passes are pipeline errors at the
// option, never internal errors inside the pass.
// RUN: not gradir-opt %s --rlx-lower-to-llvm=opt-level=99 2>&1 | FileCheck %s --check-prefix=LLVM
// RUN: not gradir-opt %s --rlx-lower-to-llvm=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS0
// RUN: not gradir-opt %s --rlx-lower-to-llvm=threads=-2 2>&1 | FileCheck %s --check-prefix=THREADSNEG
// RUN: not gradir-opt %s --rlx-lower-to-llvm=threads=two 2>&1 | FileCheck %s --check-prefix=THREADSTEXT
// RUN: env GRADIR_NUM_THREADS=0 not gradir-opt %s --rlx-lower-to-llvm 2>&1 | FileCheck %s --check-prefix=THREADSENV
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm=opt-level=-1 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm=sm-count=0 2>&1 | FileCheck %s --check-prefix=SM
// RUN: not gradir-opt %s --gpu-linalg-to-kernels=block-size=0 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not gradir-opt %s --gpu-linalg-to-kernels=block-size=48 2>&1 | FileCheck %s --check-prefix=BLOCK48
// RUN: not gradir-opt %s --gpu-persistent-buffers=alignment=3 2>&1 | FileCheck %s --check-prefix=ALIGN
// LLVM: <pass-pipeline>:1:16: error: option 'opt-level' of pass 'rlx-lower-to-llvm' must be from 0 to 3, got 99
// THREADS0: <pass-pipeline>:1:16: error: option 'threads' of pass 'rlx-lower-to-llvm' must be a positive integer, got 0
// THREADSNEG: <pass-pipeline>:1:16: error: option 'threads' of pass 'rlx-lower-to-llvm' must be a positive integer, got -2
// THREADSTEXT: <pass-pipeline>:1:16: error: option 'threads' of pass 'rlx-lower-to-llvm'
// THREADSENV: pass-options-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: rlx-lower-to-llvm: GRADIR_NUM_THREADS='0' is not a positive thread count
// NVVM: <pass-pipeline>:1:16: error: option 'opt-level' of pass 'gpu-rlx-to-nvvm' must be from 0 to 3, got -1
// SM: <pass-pipeline>:1:16: error: option 'sm-count' of pass 'gpu-rlx-to-nvvm' must be at least 1, got 0
// BLOCK: <pass-pipeline>:1:16: error: option 'block-size' of pass 'gpu-linalg-to-kernels' must be a multiple of 32 from 32 to 1024, got 0
// BLOCK48: error: option 'block-size' of pass 'gpu-linalg-to-kernels' must be a multiple of 32 from 32 to 1024, got 48
// ALIGN: error: option 'alignment' of pass 'gpu-persistent-buffers' must be a power of two of at least 16, got 3
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

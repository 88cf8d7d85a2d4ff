// RUN: gradir-opt %s --gpu-rlx-to-nvvm | FileCheck %s
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='opt-level=0 stage=bufferize' | FileCheck %s --check-prefix=BUFFERS
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='stage=binary' 2>&1 | FileCheck %s --check-prefix=STAGE
// An empty or short chip name ended the process (an assertion in NVVM's target attribute):
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=' 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=5' 2>&1 | FileCheck %s --check-prefix=CHIP5
// RUN: %PYTHON -c "import gradir; from gradir.runtime.signature import CompileError as E; m = gradir.parse(open('%s').read());\
// RUN: exec('try:\n gradir.compile(m, target=\'cuda\', chip=\'\')\nexcept E as e: print(e)')" | FileCheck %s --check-prefix=CHIPAPI
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80' | FileCheck %s --check-prefix=PTX
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(func.func(gpu-rlx-to-nvvm{stage=nvvm}))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm format=elf' 2>&1 | FileCheck %s --check-prefix=FORMAT

// stage=nvvm expands into the whole pipeline: host LLVM and PTX for the chip.
// PTX: llvm.func @main(
// PTX: gpu.binary @main_kernels {{.*}}chip = "sm_80"{{.*}}.target sm_80{{.*}}.visible .entry main_
// PTX-NOT: gpu.launch
// NESTED: error: 'gpu-rlx-to-nvvm' with these options expands into a module-level pipeline; put it at the top level
// FORMAT: error: option 'format' of pass 'gpu-rlx-to-nvvm' must be one of isa, bin, fatbin, got 'elf'

// The NVVM pipeline up to its kernels, as one pass.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<8x4xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK:      gpu.memcpy %{{.*}}, %[[X]]
// tanh and the row sums are one row kernel (gpu-fuse-rows):
// CHECK:      gpu.launch {{.*}} function(@main_rows_0) workgroup(
// CHECK:        math.tanh
// CHECK-NOT:  gpu.launch
// CHECK:      gpu.memcpy %[[OUT]]

// BUFFERS-LABEL: func.func @main(
// BUFFERS-SAME: %{{.*}}: memref<8x4xf32>, %{{.*}}: memref<8xf32>)
// BUFFERS:      linalg.generic
// BUFFERS-NOT:  gpu.

// STAGE: <pass-pipeline>:1:{{[0-9]+}}: error: option 'stage' of pass 'gpu-rlx-to-nvvm' must be one of rlx-to-linalg, bufferize, kernels, nvvm, got 'binary'

func.func @main(%x: tensor<8x4xf32>) -> tensor<8xf32> {
  %t = "rlx.tanh"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = "rlx.sum"(%t) {axis = array<i64: 1>} : (tensor<8x4xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// CHIP: <pass-pipeline>:1:16: error: option 'chip' of pass 'gpu-rlx-to-nvvm': chip must name an NVIDIA GPU architecture like sm_90, not ''
// CHIP5: error: option 'chip' of pass 'gpu-rlx-to-nvvm': chip must name an NVIDIA GPU architecture like sm_90, not '5'
// CHIPAPI: chip must name an NVIDIA GPU architecture like sm_90, not ''

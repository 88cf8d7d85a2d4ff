// RUN: gradir-opt %s --gpu-rlx-to-nvvm | FileCheck %s
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='opt-level=0 stage=bufferize' | FileCheck %s --check-prefix=BUFFERS
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='stage=binary' 2>&1 | FileCheck %s --check-prefix=STAGE

// The NVVM pipeline up to its kernels, as one pass.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<8x4xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK:      gpu.memcpy %{{.*}}, %[[X]]
// CHECK:      gpu.launch {{.*}} function(@main_map_0) {
// CHECK:        math.tanh
// CHECK:      gpu.launch {{.*}} function(@main_reduce_1) workgroup(
// CHECK:      gpu.memcpy %[[OUT]]

// BUFFERS-LABEL: func.func @main(
// BUFFERS-SAME: %{{.*}}: memref<8x4xf32>, %{{.*}}: memref<8xf32>)
// BUFFERS:      linalg.generic
// BUFFERS-NOT:  gpu.

// STAGE: error: unknown stage 'binary' (one of rlx-to-linalg, bufferize, kernels; for the binary use --pass-pipeline with gradir.conversion.nvvm.nvvm_pipeline())

func.func @main(%x: tensor<8x4xf32>) -> tensor<8xf32> {
  %t = "rlx.tanh"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = "rlx.sum"(%t) {axis = array<i64: 1>} : (tensor<8x4xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

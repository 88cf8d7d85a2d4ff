// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='cpu=x86-64-v4 stage=bufferized' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='cpu=x86-64-v3 stage=bufferized' | FileCheck %s --check-prefix=AVX2

// The CPU pipeline on convolutions: the im2col GEMM is tiled and vectorized
// by the matmul schedule (vector.fma on the register tile), no conv op or
// scalar contraction is left; the packed columns (32 multiples) need no
// padding copy on either instance.

// CHECK-LABEL: func.func @conv(
// CHECK-NOT: linalg.conv
// CHECK: vector.transfer_read {{.*}} vector<8x32xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.conv
// CHECK: return
// AVX2-LABEL: func.func @conv(
// AVX2: vector.transfer_read {{.*}} vector<6x16xf32>
// AVX2: vector.fma {{.*}} : vector<16xf32>
func.func @conv(%x: tensor<8x6x12x12xf32>, %w: tensor<16x6x5x5xf32>) -> tensor<8x16x8x8xf32> {
  %0 = "rlx.conv2d"(%x, %w) : (tensor<8x6x12x12xf32>, tensor<16x6x5x5xf32>) -> tensor<8x16x8x8xf32>
  return %0 : tensor<8x16x8x8xf32>
}

// -----

// The data gradient (conv2d_transpose) and the weight-gradient form, f64.

// CHECK-LABEL: func.func @conv_grads(
// CHECK: vector.fma {{.*}} : vector<16xf64>
// CHECK: vector.fma {{.*}} : vector<16xf64>
// CHECK-NOT: linalg.conv
// CHECK: return
func.func @conv_grads(%g: tensor<4x16x8x8xf64>, %w: tensor<16x6x5x5xf64>, %xt: tensor<6x4x12x12xf64>, %gt: tensor<16x4x8x8xf64>) -> (tensor<4x6x12x12xf64>, tensor<6x16x5x5xf64>) {
  %0 = "rlx.conv2d_transpose"(%g, %w) : (tensor<4x16x8x8xf64>, tensor<16x6x5x5xf64>) -> tensor<4x6x12x12xf64>
  %1 = "rlx.conv2d"(%xt, %gt) : (tensor<6x4x12x12xf64>, tensor<16x4x8x8xf64>) -> tensor<6x16x5x5xf64>
  return %0, %1 : tensor<4x6x12x12xf64>, tensor<6x16x5x5xf64>
}

// -----

// A matmul whose result is reshaped (LeNet's first dense layer's data
// gradient, back to NCHW): the schedule runs before elementwise fusion, whose
// reshape propagation would otherwise fold the reshape into the matmul (a
// generic contraction left to scalar loops).

// CHECK-LABEL: func.func @matmul_reshaped(
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: "reduction"
// CHECK: return
func.func @matmul_reshaped(%a: tensor<64x120xf32>, %b: tensor<120x256xf32>) -> tensor<64x16x4x4xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<64x120xf32>, tensor<120x256xf32>) -> tensor<64x256xf32>
  %1 = "rlx.reshape"(%0) : (tensor<64x256xf32>) -> tensor<64x16x4x4xf32>
  %2 = "rlx.relu"(%1) : (tensor<64x16x4x4xf32>) -> tensor<64x16x4x4xf32>
  return %2 : tensor<64x16x4x4xf32>
}

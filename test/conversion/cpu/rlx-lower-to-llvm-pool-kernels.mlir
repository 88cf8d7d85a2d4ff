// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=1' | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=1 cpu=x86-64-v3' | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='threads=1' | FileCheck %s --check-prefix=OFF

// rlx-lower-to-llvm{kernels=true} (gradir.compile's kernels=True): a 2x2 max
// pool of stride 2 and its backward are calls of the kernel library's
// pooling kernels (rlx-pool-kernels), and so is the convolution (the
// implicit-GEMM kernel, rlx-conv-kernels); the pool's -inf fill
// and the gradient's copy are gone.  In @main the forward and the backward
// read one input: the forward saves its windows' arg-max indices, which the
// backward reads; in @backward the backward alone reads the input.  Without
// kernels everything is compiled in place.
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_indices_f32(
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_indices_f32(
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_conv_f32(
// CHECK-LABEL: llvm.func @main(
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_indices_f32(
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_indices_f32(
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @backward(
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
// CHECK: llvm.return
// OFF-NOT: gradir_kernel
// OFF: llvm.func @main(
func.func @main(%x: tensor<4x3x10x10xf32>, %w: tensor<8x3x3x3xf32>, %g: tensor<4x8x4x4xf32>)
    -> (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>) {
  %c = "rlx.conv2d"(%x, %w) : (tensor<4x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x8x8xf32>
  %r = "rlx.relu"(%c) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %p = "rlx.max_pool2d"(%r) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<4x8x8x8xf32>) -> tensor<4x8x4x4xf32>
  %gs = "rlx.sigmoid"(%g) : (tensor<4x8x4x4xf32>) -> tensor<4x8x4x4xf32>
  %d = "rlx.max_pool2d_backward"(%gs, %r) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %e = "rlx.exp"(%d) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  return %p, %e : tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>
}
func.func @backward(%r: tensor<4x8x8x8xf32>, %g: tensor<4x8x4x4xf32>) -> tensor<4x8x8x8xf32> {
  %gs = "rlx.sigmoid"(%g) : (tensor<4x8x4x4xf32>) -> tensor<4x8x4x4xf32>
  %d = "rlx.max_pool2d_backward"(%gs, %r) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %e = "rlx.exp"(%d) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  return %e : tensor<4x8x8x8xf32>
}

// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=1' | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=1 cpu=x86-64-v3' | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='threads=1' | FileCheck %s --check-prefix=OFF

// rlx-lower-to-llvm{kernels=true}: a 3x3 max pool of stride 2 and padding 1
// (ResNet's stem) and its backward are calls of the kernel library's 3x3
// pooling kernels (rlx-pool-kernels).  In @main both read the one -inf
// padded input: the forward saves its windows' arg-max indices in a buffer
// of its own, which the backward reads instead of the input.  In @plain the
// backward reads another input than the forward's: it reads the padded
// input, as the forward does its own.  Without kernels everything is
// compiled in place.
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_f32(
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_backward_f32(
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_indices_f32(
// CHECK-DAG: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_backward_indices_f32(
// CHECK-LABEL: llvm.func @main(
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_indices_f32({{.*}}, %[[IP:[0-9]+]], %[[IA:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_backward_indices_f32(%{{[0-9]+}}, %{{[0-9]+}}, {{.*}}, %[[IP]], %[[IA]],
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @plain(
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_f32(
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_backward_f32(
// CHECK: llvm.return
// OFF-NOT: gradir_kernel
// OFF: llvm.func @main(
func.func @main(%x: tensor<4x8x8x8xf32>, %g: tensor<4x8x4x4xf32>)
    -> (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>) {
  %r = "rlx.relu"(%x) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %p = "rlx.max_pool2d"(%r) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x8x8x8xf32>) -> tensor<4x8x4x4xf32>
  %gs = "rlx.sigmoid"(%g) : (tensor<4x8x4x4xf32>) -> tensor<4x8x4x4xf32>
  %d = "rlx.max_pool2d_backward"(%gs, %r) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %e = "rlx.exp"(%d) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  return %p, %e : tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>
}
func.func @plain(%x: tensor<4x8x8x8xf32>, %g: tensor<4x8x4x4xf32>)
    -> (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>) {
  %r = "rlx.relu"(%x) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %p = "rlx.max_pool2d"(%r) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x8x8x8xf32>) -> tensor<4x8x4x4xf32>
  %t = "rlx.tanh"(%x) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %gs = "rlx.sigmoid"(%g) : (tensor<4x8x4x4xf32>) -> tensor<4x8x4x4xf32>
  %d = "rlx.max_pool2d_backward"(%gs, %t) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %e = "rlx.exp"(%d) : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  return %p, %e : tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>
}

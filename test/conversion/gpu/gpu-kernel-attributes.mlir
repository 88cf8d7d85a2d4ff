// RUN: gradir-opt %s --gpu-kernel-attributes | FileCheck %s

// Attributes recorded by gpu-linalg-to-kernels land on the outlined kernels.

// CHECK: module attributes {gpu.container_module} {
// CHECK-LABEL: gpu.module @f_kernels
// CHECK:      gpu.func @f_gemm_0() kernel attributes {nvvm.minctasm = 2 : i32}
// CHECK:      gpu.func @f_map_1() kernel {
module attributes {gpu.container_module,
                   gradir.kernel_attributes = {f_gemm_0 = {nvvm.minctasm = 2 : i32}}} {
  gpu.module @f_kernels {
    gpu.func @f_gemm_0() kernel {
      gpu.return
    }
    gpu.func @f_map_1() kernel {
      gpu.return
    }
  }
}

// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=1' | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=2' | FileCheck %s --check-prefix=PAR

// A flatten before a kernel matmul and an unflatten after one (LeNet's
// dense layers): both matmuls still call the kernel library; elementwise
// fusion's reshape propagation, which would fold the reshapes into them as
// generic contractions compiled into scalar loops, cannot reach them.
// CHECK-LABEL: llvm.func @main(
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_matmul_f32(
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_matmul_f32(
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: llvm.return
// At 2 threads each matmul (2^22 units of work or more) calls the kernel's
// multi-threaded driver (two strips, on the threads even while libomp's
// workers sleep): no OpenMP region in the program itself.
// PAR-LABEL: llvm.func @main(
// PAR-NOT: omp.parallel
// PAR: llvm.call @gradir_kernel_{{[0-9a-f]+}}_strips_f32(
// PAR-NOT: omp.parallel
// PAR: llvm.call @gradir_kernel_{{[0-9a-f]+}}_strips_f32(
// PAR-NOT: omp.parallel
// PAR: llvm.return
func.func @main(%x: tensor<512x16x4x4xf32>, %w: tensor<256x512xf32>, %v: tensor<512x256xf32>)
    -> tensor<512x16x4x4xf32> {
  %f = "rlx.reshape"(%x) : (tensor<512x16x4x4xf32>) -> tensor<512x256xf32>
  %h = "rlx.matmul"(%f, %w) : (tensor<512x256xf32>, tensor<256x512xf32>) -> tensor<512x512xf32>
  %g = "rlx.matmul"(%h, %v) : (tensor<512x512xf32>, tensor<512x256xf32>) -> tensor<512x256xf32>
  %r = "rlx.reshape"(%g) : (tensor<512x256xf32>) -> tensor<512x16x4x4xf32>
  return %r : tensor<512x16x4x4xf32>
}

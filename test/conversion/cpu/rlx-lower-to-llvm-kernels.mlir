// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=1' | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='threads=1' | FileCheck %s --check-prefix=OFF
// RUN: gradir-opt %s --rlx-lower-to-llvm='kernels=true threads=1 opt-level=0' | FileCheck %s --check-prefix=OFF

// rlx-lower-to-llvm{kernels=true} (gradir.compile's kernels=True): the
// matmul is a call of the kernel library's C interface, with no
// register-tiled loop nest of its own; without it (and at opt level 0,
// which runs no schedule) the matmul is compiled in place.
// CHECK: llvm.func private @gradir_kernel_{{[0-9a-f]+}}_matmul_f32(
// CHECK: llvm.call @_mlir_ciface_gradir_kernel_{{[0-9a-f]+}}_matmul_f32(
// CHECK: llvm.func @_mlir_ciface_gradir_kernel_{{[0-9a-f]+}}_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i1)
// CHECK-LABEL: llvm.func @main(
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: llvm.call @gradir_kernel_{{[0-9a-f]+}}_matmul_f32(
// CHECK-NOT: llvm.intr.fmuladd
// OFF-NOT: gradir_kernel
// OFF: llvm.func @main(
func.func @main(%a: tensor<64x100xf32>, %w: tensor<48x100xf32>) -> tensor<64x48xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<48x100xf32>) -> tensor<100x48xf32>
  %r = "rlx.matmul"(%a, %wt) : (tensor<64x100xf32>, tensor<100x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2

// A marked contraction on buffers becomes a call of the kernel of its
// element type; transposed operands are passed as transposed views, every
// operand cast to the kernels' fully strided type; the kernel is declared
// once.  The symbol names the kernels' variant (the target's tiles and
// LLVM CPU): the host's and x86-64-v3's differ.
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_matmul_f32]](memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[A:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3x5xf32>, %[[C:.*]]: memref<4x5xf32>)
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<4x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]]
// CHECK-NEXT: call @[[$K]](%[[CA]], %[[CB]], %[[CC]])
// CHECK-NEXT: return
// AVX2: func.func private @[[$K2:gradir_kernel_[0-9a-f]+_matmul_f32]](
// AVX2: call @[[$K2]](
#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @plain(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}
// CHECK-LABEL: func.func @transposed(
// CHECK-SAME: %[[A:.*]]: memref<3x4xf32>, %[[W:.*]]: memref<5x3xf32>, %[[C:.*]]: memref<4x5xf32>)
// CHECK-NEXT: %[[AT:.*]] = memref.transpose %[[A]] (d0, d1) -> (d1, d0) : memref<3x4xf32> to memref<4x3xf32, strided<[1, 4]>>
// CHECK-NEXT: %[[WT:.*]] = memref.transpose %[[W]] (d0, d1) -> (d1, d0) : memref<5x3xf32> to memref<3x5xf32, strided<[1, 3]>>
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[AT]]
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[WT]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]]
// CHECK-NEXT: call @[[$K]](%[[CA]], %[[CB]], %[[CC]])
func.func @transposed(%a: memref<3x4xf32>, %w: memref<5x3xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#km, #nk, #mn] {gradir.kernel} ins(%a, %w : memref<3x4xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  return
}
// Unmarked contractions and matmuls are left alone.
// CHECK-LABEL: func.func @unmarked(
// CHECK: linalg.contract
// CHECK-NOT: call
func.func @unmarked(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}

// -----

// f64 (a view of a larger buffer: its strides go with it), one kernel per element type.
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_matmul_f64]](memref<?x?xf64, strided<[?, ?], offset: ?>>,
// CHECK-LABEL: func.func @view(
// CHECK: %[[S:.*]] = memref.subview
// CHECK: memref.cast %[[S]] : memref<4x3xf64, strided<[8, 1], offset: 2>> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK: call @[[$K]](
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @view(%big: memref<4x8xf64>, %b: memref<3x5xf64>, %c: memref<4x5xf64>) {
  %a = memref.subview %big[0, 2] [4, 3] [1, 1] : memref<4x8xf64> to memref<4x3xf64, strided<[8, 1], offset: 2>>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf64, strided<[8, 1], offset: 2>>, memref<3x5xf64>) outs(%c : memref<4x5xf64>)
  return
}

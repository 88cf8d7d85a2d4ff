// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-matmul-kernels
// RUN: not gradir-opt %s --split-input-file --rlx-matmul-kernels=cpu=pentium 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: rlx-matmul-kernels: unknown cpu 'pentium'
// RUN: not gradir-opt %s --split-input-file --rlx-matmul-kernels=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: option 'threads' of pass 'rlx-matmul-kernels' must be at least 1, got 0

// A marked contraction that is no 2-D matmul (or batched matmul) of f32 or f64 is
// refused at the op.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @ints(%a: memref<4x3xi32>, %b: memref<3x5xi32>, %c: memref<4x5xi32>) {
  // expected-error @below {{a gradir.kernel contraction must have one element type, one of f32, f64}}
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xi32>, memref<3x5xi32>) outs(%c : memref<4x5xi32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nm = affine_map<(m, n, k) -> (n, m)>
func.func @transposed_result(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<5x4xf32>) {
  // expected-error @below {{a gradir.kernel contraction must be a matmul (indexing map (d0, d1, d2) -> (d1, d0))}}
  linalg.contract indexing_maps = [#mk, #kn, #nm] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<5x4xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @on_tensors(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @below {{a gradir.kernel contraction must have two inputs and one output, on buffers}}
  %0 = linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Two batch dims: rlx-to-linalg collapses them to one.
#a = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#b = affine_map<(b, h, m, n, k) -> (b, h, k, n)>
#c = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
func.func @rank_4(%a: memref<2x2x4x3xf32>, %b: memref<2x2x3x5xf32>, %c: memref<2x2x4x5xf32>) {
  // expected-error @below {{a gradir.kernel contraction must read and write 2-D memrefs, or write a 3-D one from 2-D or 3-D ones (a batched matmul)}}
  linalg.contract indexing_maps = [#a, #b, #c] {gradir.kernel} ins(%a, %b : memref<2x2x4x3xf32>, memref<2x2x3x5xf32>) outs(%c : memref<2x2x4x5xf32>)
  return
}

// -----

#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
#bad = affine_map<(b, m, n, k) -> (b, n, k)>
func.func @not_batched_matmul(%a: memref<2x4x3xf32>, %b: memref<3x5xf32>, %c: memref<2x4x5xf32>,
                              %d: memref<2x5x3xf32>) {
  // expected-error @below {{a gradir.kernel contraction with a 3-D output must be a batched matmul: (d0, d1, d2, d3) = (batch, M, N, K), A's dims of (batch, M, K) and B's of (batch, K, N) in any order (indexing map (d0, d1, d2, d3) -> (d0, d2, d3))}}
  linalg.contract indexing_maps = [#bad, #b, #c] {gradir.kernel} ins(%d, %b : memref<2x5x3xf32>, memref<3x5xf32>) outs(%c : memref<2x4x5xf32>)
  return
}

// -----

// The kernels write C's rows as vectors: N must be its unit-stride dim.
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#bnm = affine_map<(b, m, n, k) -> (b, n, m)>
func.func @columns_strided(%a: memref<2x4x3xf32>, %b: memref<2x3x5xf32>, %c: memref<2x5x4xf32>) {
  // expected-error @below {{a gradir.kernel contraction must write its output with unit stride along N (indexing map (d0, d1, d2, d3) -> (d0, d2, d1), type memref<2x5x4xf32>)}}
  linalg.contract indexing_maps = [#a, #b, #bnm] {gradir.kernel} ins(%a, %b : memref<2x4x3xf32>, memref<2x3x5xf32>) outs(%c : memref<2x5x4xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @columns_strided_2d(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %big: memref<5x4xf32>) {
  %c = memref.transpose %big (d0, d1) -> (d1, d0) : memref<5x4xf32> to memref<4x5xf32, strided<[1, 4]>>
  // expected-error @below {{a gradir.kernel contraction must write its output with unit stride along N (indexing map (d0, d1, d2) -> (d0, d1), type memref<4x5xf32, strided<[1, 4]>>)}}
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32, strided<[1, 4]>>)
  return
}

// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-matmul-kernels
// RUN: not gradir-opt %s --split-input-file --rlx-matmul-kernels=cpu=pentium 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: rlx-matmul-kernels: unknown cpu 'pentium'
// RUN: not gradir-opt %s --split-input-file --rlx-matmul-kernels=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: option 'threads' of pass 'rlx-matmul-kernels' must be at least 1, got 0

// A marked contraction that is no 2-D matmul of f32 or f64 is refused at the op.
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

// RUN: gradir-opt %s --split-input-file --gpu-fold-zero-init | FileCheck %s

// A matmul accumulating into a zero fill starts from zero in its kernel: the
// fill is no longer its init.

// CHECK-LABEL: func.func @matmul(
// CHECK:      linalg.fill
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x5xf32>
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E]] : tensor<4x5xf32>) attrs = {gradir.zero_init}
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %m = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %m : tensor<4x5xf32>
}

// -----

// Not folded: the init is not zero, or the combiner's identity is not zero.

// CHECK-LABEL: func.func @one_init(
// CHECK-NOT:  gradir.zero_init
// CHECK-LABEL: func.func @max_into_zero(
// CHECK-NOT:  gradir.zero_init
func.func @one_init(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x3xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @max_into_zero(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x3xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// The kernels of a zero_init reduction never read the output first.

// RUN: gradir-opt %s --split-input-file --linalg-generalize-named-ops --gpu-fold-zero-init --canonicalize --one-shot-bufferize='bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map' --gpu-linalg-to-kernels --canonicalize | FileCheck %s --check-prefix=KERNEL
// CHECK-LABEL: func.func @sum_rows(
// CHECK:       attrs = {gradir.zero_init}
// KERNEL-LABEL: func.func @sum_rows(
// KERNEL-SAME: %[[A:.*]]: memref<4x300xf32>) -> memref<4xf32>
// KERNEL:      %[[OUT:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// KERNEL-NOT:  linalg.fill
// KERNEL:      gpu.launch
// KERNEL-NOT:  memref.load %[[OUT]]
// KERNEL:      memref.store %{{.*}}, %[[OUT]]
func.func @sum_rows(%a: tensor<4x300xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x300xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

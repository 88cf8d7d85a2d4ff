// RUN: gradir-opt %s --split-input-file --gpu-linalg-to-kernels --canonicalize --cse | FileCheck %s

// A convolution as rlx-to-linalg{direct-convolutions=true} leaves it (one
// generic over the whole batch, the padded input read at y*s + ky*d) is an
// implicit GEMM: M = the output channels (the weights' rows), N = the
// batch's pixels (n, y, x) linearized, K = (c, ky, kx) linearized; the tile
// loads delinearize their coordinates and read the input in place (no
// im2col buffer, no loop over images).  The weights' tile is loaded along K
// (their innermost dim is kx), the input's along the pixels (x), padded
// against bank conflicts only for the K-inner one.  Here M = 32, N =
// 2*8*8 = 128, K = 16*3*3 = 144: 16x16 tiles (2x8 blocks), 9 K steps.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[W:.*]]: memref<32x16x3x3xf32>, %[[X:.*]]: memref<2x16x10x10xf32>, %[[OUT:.*]]: memref<2x32x8x8xf32>)
// CHECK-NOT:  memref.alloc
// CHECK-NOT:  scf.for
// CHECK:      gpu.launch blocks({{.*}}) in ({{.*}} = %c8, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c16, {{.*}} = %c16, {{.*}} = %c1) module(@conv_kernels) function(@conv_gemm_0) workgroup(%[[AS:.*]] : memref<16x18xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>) {
// CHECK:        scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args(%{{.*}} = %cst) -> (f32) {
// CHECK:          %[[VA:.*]] = memref.load %[[W]]
// CHECK-NEXT:     memref.store %[[VA]], %[[AS]]
// CHECK:          %[[VB:.*]] = memref.load %[[X]]
// CHECK-NEXT:     memref.store %[[VB]], %[[BS]]
// CHECK-NEXT:     gpu.barrier
// CHECK-COUNT-16: math.fma
// CHECK:          gpu.barrier
// CHECK-NEXT:     scf.yield
// CHECK:        memref.store %{{.*}}, %[[OUT]]
// CHECK-NEXT:   gpu.terminator
// CHECK-NOT:  gpu.launch
// CHECK:      return
#w = affine_map<(n, o, y, x, c, ky, kx) -> (o, c, ky, kx)>
#x = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y + ky, x + kx)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
func.func @conv(%w: memref<32x16x3x3xf32>, %x: memref<2x16x10x10xf32>, %out: memref<2x32x8x8xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<32x16x3x3xf32>, memref<2x16x10x10xf32>) outs(%out : memref<2x32x8x8xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// GEMM epilogue fusion: the elementwise generic right after the GEMM reads
// its result at the same element (plus a per-channel bias) and nothing
// reads C afterwards, so the GEMM's stores apply it (bias, relu) and write
// its output; C is never written and the generic gets no kernel.
// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-SAME: %[[W:.*]]: memref<32x16x3x3xf32>, %[[X:.*]]: memref<2x16x10x10xf32>, %[[B:.*]]: memref<32xf32>, %[[OUT:.*]]: memref<2x32x8x8xf32>)
// CHECK:      gpu.launch {{.*}} function(@conv_bias_relu_gemm_0)
// CHECK:        scf.for
// CHECK:        scf.yield
// CHECK:        %[[BIAS:.*]] = memref.load %[[B]][
// CHECK-NEXT:   %[[S:.*]] = arith.addf %{{.*}}, %[[BIAS]] : f32
// CHECK-NEXT:   %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK-NEXT:   memref.store %[[R]], %[[OUT]][
// CHECK-NEXT:   gpu.terminator
// CHECK-NOT:  gpu.launch
// CHECK:      return
#w = affine_map<(n, o, y, x, c, ky, kx) -> (o, c, ky, kx)>
#x = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y + ky, x + kx)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
#id = affine_map<(n, o, y, x) -> (n, o, y, x)>
#ch = affine_map<(n, o, y, x) -> (o)>
func.func @conv_bias_relu(%w: memref<32x16x3x3xf32>, %x: memref<2x16x10x10xf32>, %b: memref<32xf32>,
                          %out: memref<2x32x8x8xf32>) {
  %c = memref.alloc() : memref<2x32x8x8xf32>
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<32x16x3x3xf32>, memref<2x16x10x10xf32>) outs(%c : memref<2x32x8x8xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %b : memref<2x32x8x8xf32>, memref<32xf32>) outs(%out : memref<2x32x8x8xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<2x32x8x8xf32>
  return
}

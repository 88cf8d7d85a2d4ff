// RUN: gradir-opt %s --split-input-file --pass-pipeline='builtin.module(gpu-fuse-generics)' | FileCheck %s

// Function arguments marked llvm.noalias are buffers of their own (unmarked
// arguments may alias each other, which blocks most merges); in the GPU
// pipeline the generics work on gpu.alloc device buffers.

// Vertical fusion: relu(x + b) where x + b is read again later (a
// multi-use producer): one generic writing both buffers; the consumer uses
// the producer's yielded value, not a load of its buffer.

// CHECK-LABEL: func.func @bias_relu(
// CHECK:      linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8xf32>) outs(%[[S:[a-z0-9_]+]], %{{[a-z0-9_]+}} : memref<4x8xf32>, memref<4x8xf32>)
// CHECK:      %[[ADD:.*]] = arith.addf
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[ADD]]
// CHECK-NEXT: linalg.yield %[[ADD]], %[[MAX]]
// CHECK-NOT:  linalg.generic
// CHECK:      memref.copy %[[S]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @bias_relu(%x: memref<4x8xf32> {llvm.noalias}, %b: memref<8xf32> {llvm.noalias}, %r: memref<4x8xf32> {llvm.noalias}, %keep: memref<4x8xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x8xf32>, memref<8xf32>) outs(%s : memref<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %v = arith.addf %a, %c : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<4x8xf32>) outs(%r : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %zero : f32
    linalg.yield %v : f32
  }
  memref.copy %s, %keep : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %s : memref<4x8xf32>
  return
}

// -----

// The producer's buffer has no other reader: it leaves the outputs, and its
// allocation and deallocation go.  The consumer reads it transposed, the
// loop dims are matched (d0 <-> d1).

// CHECK-LABEL: func.func @dead_intermediate(
// CHECK-NOT:  memref.alloc
// CHECK:      linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<8x4xf32>)
// CHECK:      math.exp
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NOT:  linalg.generic
// CHECK-NOT:  memref.dealloc
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @dead_intermediate(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<8x4xf32> {llvm.noalias}) {
  %two = arith.constant 2.0 : f32
  %e = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%e : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e : memref<4x8xf32>) outs(%y : memref<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %two : f32
    linalg.yield %v : f32
  }
  memref.dealloc %e : memref<4x8xf32>
  return
}

// -----

// Horizontal fusion: independent gradients of the same shape, with a
// reduction that neither touches in between; the shared input is read once.

// CHECK-LABEL: func.func @independent(
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:      linalg.generic {{.*}} ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<4x8xf32>)
// CHECK:      arith.mulf
// CHECK:      arith.addf
// CHECK-NOT:  linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @independent(%x: memref<4x8xf32> {llvm.noalias}, %a: memref<4x8xf32> {llvm.noalias}, %b: memref<4x8xf32> {llvm.noalias}, %s: memref<4xf32> {llvm.noalias}) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.mulf %i, %i : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %i : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// Two column sums with the same reduction dims (batch norm's sum(dy) and
// sum(dy * xhat)): one reduction with two outputs, still zero-initialized.

// CHECK-LABEL: func.func @two_sums(
// CHECK:      linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : memref<16x8xf32>, memref<16x8xf32>) outs(%{{.*}}, %{{.*}} : memref<8xf32>, memref<8xf32>) attrs = {gradir.zero_init}
// CHECK:      %[[A:.*]] = arith.addf
// CHECK:      %[[M:.*]] = arith.mulf
// CHECK-NEXT: %[[B:.*]] = arith.addf
// CHECK-NEXT: linalg.yield %[[A]], %[[B]]
// CHECK-NOT:  linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
func.func @two_sums(%dy: memref<16x8xf32> {llvm.noalias}, %xh: memref<16x8xf32> {llvm.noalias}, %s1: memref<8xf32> {llvm.noalias}, %s2: memref<8xf32> {llvm.noalias}) {
  linalg.generic {indexing_maps = [#id, #c], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<16x8xf32>) outs(%s1 : memref<8xf32>) attrs = {gradir.zero_init} {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #c], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %xh : memref<16x8xf32>, memref<16x8xf32>) outs(%s2 : memref<8xf32>) attrs = {gradir.zero_init} {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %v = arith.addf %m, %o : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// A producer whose buffer only a reduction reads (at the same point) moves
// into the reduction; its buffer goes.

// CHECK-LABEL: func.func @into_reduction(
// CHECK-NOT:  memref.alloc
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<4x8xf32>) outs(%{{.*}} : memref<4xf32>) attrs = {gradir.zero_init}
// CHECK:      arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NOT:  linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @into_reduction(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4x8xf32> {llvm.noalias}, %s: memref<4xf32> {llvm.noalias}) {
  %p = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : memref<4x8xf32>, memref<4x8xf32>) outs(%p : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #r], iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<4x8xf32>) outs(%s : memref<4xf32>) attrs = {gradir.zero_init} {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  }
  memref.dealloc %p : memref<4x8xf32>
  return
}

// -----

// Disjoint static subviews of one buffer are independent: the two copies
// into the halves become one generic.

// CHECK-LABEL: func.func @halves(
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT:  linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @halves(%x: memref<2x8xf32> {llvm.noalias}, %y: memref<2x8xf32> {llvm.noalias}, %out: memref<4x8xf32> {llvm.noalias}) {
  %lo = memref.subview %out[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x8xf32>) outs(%lo : memref<2x8xf32, strided<[8, 1]>>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %hi = memref.subview %out[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<2x8xf32>) outs(%hi : memref<2x8xf32, strided<[8, 1], offset: 16>>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Not fused: the consumer reads the producer's buffer at another point
// (a shifted row: other threads' elements); a reduction's buffer read by a
// later elementwise generic; two generics on overlapping subviews; a GEMM.

// CHECK-LABEL: func.func @shifted(
// CHECK-COUNT-2: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#rev = affine_map<(d0, d1) -> (d0, -d1 + 7)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @shifted(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4x8xf32> {llvm.noalias}) {
  %e = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%e : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %e : memref<4x8xf32>
  return
}

// CHECK-LABEL: func.func @overlapping(
// CHECK-COUNT-2: linalg.generic
func.func @overlapping(%x: memref<2x8xf32> {llvm.noalias}, %out: memref<4x8xf32> {llvm.noalias}) {
  %a = memref.subview %out[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  %b = memref.subview %out[1, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 8>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x8xf32>) outs(%a : memref<2x8xf32, strided<[8, 1]>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<2x8xf32, strided<[8, 1], offset: 8>>) outs(%b : memref<2x8xf32, strided<[8, 1], offset: 8>>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %i : f32
    linalg.yield %v : f32
  }
  return
}

// CHECK-LABEL: func.func @gemms(
// CHECK-COUNT-2: linalg.generic
func.func @gemms(%a: memref<4x3xf32> {llvm.noalias}, %b: memref<3x5xf32> {llvm.noalias}, %c: memref<4x5xf32> {llvm.noalias}, %d: memref<4x5xf32> {llvm.noalias}) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%d : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not moved across a conflict: the generic in between overwrites the first
// one's input and reads the second one's output, so neither can move.

// CHECK-LABEL: func.func @blocked(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:  linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @blocked(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4x8xf32> {llvm.noalias}, %z: memref<4x8xf32> {llvm.noalias}) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  }
  memref.copy %z, %x : memref<4x8xf32> to memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.log %a : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// The elementwise generic that reads a GEMM's result moves up next to the
// GEMM (past a GEMM it does not depend on), where gpu-linalg-to-kernels
// applies it in the GEMM's stores (an epilogue).

// CHECK-LABEL: func.func @epilogue_next_to_gemm(
// CHECK:      linalg.generic {{.*}} outs(%[[C:.*]] : memref<8x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[C]], %{{.*}} : memref<8x8xf32>, memref<8xf32>)
// CHECK:      arith.addf
// CHECK:      linalg.generic {{.*}} outs(%{{.*}} : memref<8x8xf32>)
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @epilogue_next_to_gemm(%a: memref<8x8xf32> {llvm.noalias}, %b: memref<8x8xf32> {llvm.noalias}, %bias: memref<8xf32> {llvm.noalias}, %c: memref<8x8xf32> {llvm.noalias}, %d: memref<8x8xf32> {llvm.noalias}, %y: memref<8x8xf32> {llvm.noalias}) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%b, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%d : memref<8x8xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<8x8xf32>, memref<8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%x: f32, %v: f32, %o: f32):
    %s = arith.addf %x, %v : f32
    linalg.yield %s : f32
  }
  return
}

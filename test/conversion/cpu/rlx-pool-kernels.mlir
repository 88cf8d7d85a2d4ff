// RUN: gradir-opt %s --split-input-file --rlx-pool-kernels | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-pool-kernels=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2
// RUN: gradir-opt %s --split-input-file --rlx-pool-kernels=threads=2 | FileCheck %s --check-prefix=THREADS

// The marked forward pool on buffers becomes a call of the kernel of its
// element type, every operand cast to the kernels' type (NCHW, unit
// innermost stride); the -inf fill of the output and the window buffer are
// left out (the kernel writes every element without reading it).  The
// symbol names the kernels' variant: the host's and x86-64-v3's differ.  A
// pool too small for threads stays one call at threads=2.
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_max_pool2x2_f32]](memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>)
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: memref<2x3x8x7xf32>, %[[Y:.*]]: memref<2x3x4x3xf32>)
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[CX:.*]] = memref.cast %[[X]] : memref<2x3x8x7xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-NEXT: %[[CY:.*]] = memref.cast %[[Y]]
// CHECK-NEXT: call @[[$K]](%[[CX]], %[[CY]]) {gradir.work = 168 : i64}
// CHECK-NEXT: return
// AVX2: func.func private @[[$K2:gradir_kernel_[0-9a-f]+_max_pool2x2_f32]](
// AVX2: call @[[$K2]](
// THREADS-LABEL: func.func @forward(
// THREADS-NOT: scf.parallel
// THREADS: call @gradir_kernel_{{.*}}_max_pool2x2_f32(
// A marked pool reading a view with a non-unit innermost stride (a strided
// slice's) keeps its loops, and its fill.
// CHECK-LABEL: func.func @strided_view(
// CHECK: linalg.fill
// CHECK: linalg.pooling_nchw_max {{.*}}gradir.kernel
// CHECK-NOT: call
// Unmarked pools are left alone.
// CHECK-LABEL: func.func @unmarked(
// CHECK: linalg.pooling_nchw_max
// CHECK-NOT: call
func.func @forward(%x: memref<2x3x8x7xf32>, %y: memref<2x3x4x3xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%y : memref<2x3x4x3xf32>)
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x7xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  memref.dealloc %w : memref<2x2xf32>
  return
}
func.func @strided_view(%big: memref<1x1x8x16xf32>, %y: memref<1x1x4x4xf32>) {
  %x = memref.subview %big[0, 0, 0, 0] [1, 1, 8, 8] [1, 1, 1, 2] : memref<1x1x8x16xf32> to memref<1x1x8x8xf32, strided<[128, 128, 16, 2]>>
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%y : memref<1x1x4x4xf32>)
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x1x8x8xf32, strided<[128, 128, 16, 2]>>, memref<2x2xf32>) outs(%y : memref<1x1x4x4xf32>)
  memref.dealloc %w : memref<2x2xf32>
  return
}
func.func @unmarked(%x: memref<2x3x8x7xf32>, %y: memref<2x3x4x3xf32>) {
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x7xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  memref.dealloc %w : memref<2x2xf32>
  return
}

// -----

// The marked backward reads the output gradient from the buffer its
// linalg.copy read (the copy and its buffer are left out), then the input
// and the input gradient; f64 has a kernel of its own.
// CHECK: func.func private @[[$B:gradir_kernel_[0-9a-f]+_max_pool2x2_backward_f64]](memref<?x?x?x?xf64, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x?xf64, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x?xf64, strided<[?, ?, ?, 1], offset: ?>>)
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[DY:.*]]: memref<2x3x4x3xf64>, %[[X:.*]]: memref<2x3x8x6xf64>, %[[DX:.*]]: memref<2x3x8x6xf64>)
// CHECK-NEXT: %[[CG:.*]] = memref.cast %[[DY]]
// CHECK-NEXT: %[[CX:.*]] = memref.cast %[[X]]
// CHECK-NEXT: %[[CD:.*]] = memref.cast %[[DX]]
// CHECK-NEXT: call @[[$B]](%[[CG]], %[[CX]], %[[CD]]) {gradir.work = 288 : i64}
// CHECK-NEXT: return
// The average pool's backward: the gradient and the input gradient.
// CHECK-LABEL: func.func @average(
// CHECK-SAME: %[[DY:.*]]: memref<2x3x4x3xf64>, %[[DX:.*]]: memref<2x3x8x6xf64>)
// CHECK-NEXT: %[[CG:.*]] = memref.cast %[[DY]]
// CHECK-NEXT: %[[CD:.*]] = memref.cast %[[DX]]
// CHECK-NEXT: call @gradir_kernel_{{[0-9a-f]+}}_avg_pool2x2_backward_f64(%[[CG]], %[[CD]])
// CHECK-NEXT: return
// A view of a larger buffer keeps its strides (a unit innermost one).
// CHECK-LABEL: func.func @view(
// CHECK: %[[S:.*]] = memref.subview
// CHECK: memref.cast %[[S]] : memref<2x3x8x6xf64, strided<[288, 96, 12, 1]>> to memref<?x?x?x?xf64, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: call @[[$B]](
#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @backward(%dy: memref<2x3x4x3xf64>, %x: memref<2x3x8x6xf64>, %dx: memref<2x3x8x6xf64>) {
  %c = memref.alloc() : memref<2x3x4x3xf64>
  linalg.copy ins(%dy : memref<2x3x4x3xf64>) outs(%c : memref<2x3x4x3xf64>)
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %x, %x, %x, %x : memref<2x3x4x3xf64>, memref<2x3x8x6xf64>, memref<2x3x8x6xf64>, memref<2x3x8x6xf64>, memref<2x3x8x6xf64>) outs(%dx : memref<2x3x8x6xf64>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f64, %b: f64, %b1: f64, %b2: f64, %b3: f64, %o: f64):
    linalg.yield %a : f64
  }
  memref.dealloc %c : memref<2x3x4x3xf64>
  return
}
func.func @average(%dy: memref<2x3x4x3xf64>, %dx: memref<2x3x8x6xf64>) {
  %c = memref.alloc() : memref<2x3x4x3xf64>
  linalg.copy ins(%dy : memref<2x3x4x3xf64>) outs(%c : memref<2x3x4x3xf64>)
  linalg.generic {indexing_maps = [#g, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : memref<2x3x4x3xf64>) outs(%dx : memref<2x3x8x6xf64>) attrs = {gradir.kernel = "avg_pool2x2_backward"} {
  ^bb0(%a: f64, %o: f64):
    linalg.yield %a : f64
  }
  memref.dealloc %c : memref<2x3x4x3xf64>
  return
}
func.func @view(%dy: memref<2x3x4x3xf64>, %big: memref<2x3x8x12xf64>, %dx: memref<2x3x8x6xf64>) {
  %x = memref.subview %big[0, 0, 0, 0] [2, 3, 8, 6] [1, 1, 1, 1] : memref<2x3x8x12xf64> to memref<2x3x8x6xf64, strided<[288, 96, 12, 1]>>
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<2x3x4x3xf64>, memref<2x3x8x6xf64, strided<[288, 96, 12, 1]>>, memref<2x3x8x6xf64, strided<[288, 96, 12, 1]>>, memref<2x3x8x6xf64, strided<[288, 96, 12, 1]>>, memref<2x3x8x6xf64, strided<[288, 96, 12, 1]>>) outs(%dx : memref<2x3x8x6xf64>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f64, %b: f64, %b1: f64, %b2: f64, %b3: f64, %o: f64):
    linalg.yield %a : f64
  }
  return
}

// -----

// threads=2: a pool of enough work runs as an scf.parallel over blocks of
// images (5 images: blocks of 3 and 2), each block one call on views.
// THREADS-LABEL: func.func @big(
// THREADS-SAME: %[[X:.*]]: memref<5x8x128x128xf32>, %[[Y:.*]]: memref<5x8x64x64xf32>)
// THREADS: %[[CX:.*]] = memref.cast %[[X]]
// THREADS: %[[CY:.*]] = memref.cast %[[Y]]
// THREADS: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step
// THREADS: %[[START:.*]] = arith.muli %[[I]], %{{.*}} : index
// THREADS: %[[LEFT:.*]] = arith.subi %{{.*}}, %[[START]] : index
// THREADS: %[[N:.*]] = arith.minsi %[[LEFT]], %{{.*}} : index
// THREADS: %[[VX:.*]] = memref.subview %[[CX]][%[[START]], 0, 0, 0] [%[[N]],
// THREADS: %[[VY:.*]] = memref.subview %[[CY]][%[[START]], 0, 0, 0] [%[[N]],
// THREADS: func.call @gradir_kernel_{{.*}}_max_pool2x2_f32(%[[VX]], %[[VY]]) {gradir.work = 163840 : i64}
// THREADS: scf.reduce
func.func @big(%x: memref<5x8x128x128xf32>, %y: memref<5x8x64x64xf32>) {
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<5x8x128x128xf32>, memref<2x2xf32>) outs(%y : memref<5x8x64x64xf32>)
  memref.dealloc %w : memref<2x2xf32>
  return
}

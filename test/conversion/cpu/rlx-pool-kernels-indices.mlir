// RUN: gradir-opt %s --split-input-file --rlx-pool-kernels | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-pool-kernels=threads=2 | FileCheck %s --check-prefix=THREADS

// A max pool's forward and backward (the backward in an scf.execute_region,
// as the lowering emits it) reading one input buffer with the same window
// and output: the forward saves the position of each window's first
// maximum in an i8 buffer (one a window) it is given, the backward reads
// them instead of the input; the buffer is freed after the backward.
// CHECK-DAG: func.func private @[[$F:gradir_kernel_[0-9a-f]+_max_pool2x2_indices_f32]](memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x?xi8, strided<[?, ?, ?, 1], offset: ?>>)
// CHECK-DAG: func.func private @[[$B:gradir_kernel_[0-9a-f]+_max_pool2x2_backward_indices_f32]](memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x?xi8, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>)
// CHECK-LABEL: func.func @paired(
// CHECK-SAME: %[[X:.*]]: memref<2x3x8x6xf32>, %[[Y:.*]]: memref<2x3x4x3xf32>, %[[DY:.*]]: memref<2x3x4x3xf32>, %[[DX:.*]]: memref<2x3x8x6xf32>)
// CHECK: %[[I:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x4x3xi8>
// CHECK-NEXT: %[[CX:.*]] = memref.cast %[[X]]
// CHECK-NEXT: %[[CY:.*]] = memref.cast %[[Y]]
// CHECK-NEXT: %[[CI:.*]] = memref.cast %[[I]] : memref<2x3x4x3xi8> to memref<?x?x?x?xi8, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-NEXT: call @[[$F]](%[[CX]], %[[CY]], %[[CI]])
// CHECK: linalg.generic
// CHECK: scf.execute_region
// CHECK-NEXT: %[[CG:.*]] = memref.cast %[[DY]]
// CHECK-NEXT: %[[CI2:.*]] = memref.cast %[[I]]
// CHECK-NEXT: %[[CD:.*]] = memref.cast %[[DX]]
// CHECK-NEXT: func.call @[[$B]](%[[CG]], %[[CI2]], %[[CD]])
// CHECK-NEXT: memref.dealloc %[[I]] : memref<2x3x4x3xi8>
// CHECK-NEXT: scf.yield
#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @paired(%x: memref<2x3x8x6xf32>, %y: memref<2x3x4x3xf32>, %dy: memref<2x3x4x3xf32>, %dx: memref<2x3x8x6xf32>) {
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x6xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  memref.dealloc %w : memref<2x2xf32>
  // (reads of the input between them do not matter)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x8x6xf32>) outs(%dx : memref<2x3x8x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  scf.execute_region no_inline {
    linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<2x3x4x3xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>) outs(%dx : memref<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
    ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
      linalg.yield %a : f32
    }
    scf.yield
  }
  return
}

// -----

// Left as they are (the kernels reading the input): a backward of another
// input, a backward with an op writing the input (or a view of it) since
// the forward, a backward before the forward, a backward in a loop (run
// more than once after the forward), a forward of another window.
// CHECK-LABEL: func.func @other_input(
// CHECK-NOT: i8
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_f32(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
// CHECK-LABEL: func.func @written_between(
// CHECK-NOT: i8
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_f32(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
// CHECK-LABEL: func.func @backward_first(
// CHECK-NOT: i8
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_f32(
// CHECK-LABEL: func.func @in_loop(
// CHECK-NOT: i8
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_f32(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
// CHECK-LABEL: func.func @other_window(
// CHECK-NOT: i8
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool3x3s2_f32(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @other_input(%x: memref<2x3x8x6xf32>, %x2: memref<2x3x8x6xf32>, %y: memref<2x3x4x3xf32>, %dy: memref<2x3x4x3xf32>, %dx: memref<2x3x8x6xf32>) {
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x6xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x2, %x2, %x2, %x2 : memref<2x3x4x3xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>) outs(%dx : memref<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @written_between(%x: memref<2x3x8x6xf32>, %y: memref<2x3x4x3xf32>, %dy: memref<2x3x4x3xf32>, %dx: memref<2x3x8x6xf32>) {
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x6xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  %v = memref.subview %x[0, 0, 0, 0] [1, 3, 8, 6] [1, 1, 1, 1] : memref<2x3x8x6xf32> to memref<1x3x8x6xf32, strided<[144, 48, 6, 1]>>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%v : memref<1x3x8x6xf32, strided<[144, 48, 6, 1]>>)
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<2x3x4x3xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>) outs(%dx : memref<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @backward_first(%x: memref<2x3x8x6xf32>, %y: memref<2x3x4x3xf32>, %dy: memref<2x3x4x3xf32>, %dx: memref<2x3x8x6xf32>) {
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<2x3x4x3xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>) outs(%dx : memref<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x6xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  return
}
func.func @in_loop(%x: memref<2x3x8x6xf32>, %y: memref<2x3x4x3xf32>, %dy: memref<2x3x4x3xf32>, %dx: memref<2x3x8x6xf32>) {
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x6xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %k = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<2x3x4x3xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>) outs(%dx : memref<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
    ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
      linalg.yield %a : f32
    }
  }
  return
}
func.func @other_window(%x: memref<1x1x10x10xf32>, %y: memref<1x1x4x4xf32>, %dy: memref<1x1x5x5xf32>, %dx: memref<1x1x10x10xf32>) {
  %w = memref.alloc() : memref<3x3xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x1x10x10xf32>, memref<3x3xf32>) outs(%y : memref<1x1x4x4xf32>)
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<1x1x5x5xf32>, memref<1x1x10x10xf32>, memref<1x1x10x10xf32>, memref<1x1x10x10xf32>, memref<1x1x10x10xf32>) outs(%dx : memref<1x1x10x10xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// threads=2: the forward and the backward of enough work each run as an
// scf.parallel over blocks of images, every block's call on views of its
// images, the index buffer's among them (the same images in both).
// THREADS-LABEL: func.func @big(
// THREADS-SAME: %[[X:.*]]: memref<5x8x128x128xf64>
// THREADS: %[[I:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5x8x64x64xi8>
// THREADS: %[[CI:.*]] = memref.cast %[[I]]
// THREADS: scf.parallel (%[[P:.*]]) =
// THREADS: %[[START:.*]] = arith.muli %[[P]], %{{.*}} : index
// THREADS: %[[VI:.*]] = memref.subview %[[CI]][%[[START]], 0, 0, 0] [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : memref<?x?x?x?xi8, strided<[?, ?, ?, 1], offset: ?>> to memref<?x?x?x?xi8, strided<[?, ?, ?, 1], offset: ?>>
// THREADS: func.call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_indices_f64(%{{.*}}, %{{.*}}, %[[VI]])
// THREADS: %[[CI2:.*]] = memref.cast %[[I]]
// THREADS: scf.parallel (%[[Q:.*]]) =
// THREADS: %[[START2:.*]] = arith.muli %[[Q]], %{{.*}} : index
// THREADS: %[[VI2:.*]] = memref.subview %[[CI2]][%[[START2]], 0, 0, 0]
// THREADS: func.call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_indices_f64(%{{.*}}, %[[VI2]], %{{.*}})
// THREADS: memref.dealloc %[[I]]
#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @big(%x: memref<5x8x128x128xf64>, %y: memref<5x8x64x64xf64>, %dy: memref<5x8x64x64xf64>, %dx: memref<5x8x128x128xf64>) {
  %w = memref.alloc() : memref<2x2xf64>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<5x8x128x128xf64>, memref<2x2xf64>) outs(%y : memref<5x8x64x64xf64>)
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<5x8x64x64xf64>, memref<5x8x128x128xf64>, memref<5x8x128x128xf64>, memref<5x8x128x128xf64>, memref<5x8x128x128xf64>) outs(%dx : memref<5x8x128x128xf64>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f64, %b: f64, %b1: f64, %b2: f64, %b3: f64, %o: f64):
    linalg.yield %a : f64
  }
  return
}

// -----

// The input a global's buffer (which another function could write between
// the two): left as they are.  A view of an allocation pairs.
// CHECK: memref.global "private" @g
// CHECK-LABEL: func.func @global_input(
// CHECK-NOT: i8
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_f32(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_f32(
// CHECK-LABEL: func.func @view_input(
// CHECK: %[[I:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x4x3xi8>
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_indices_f32(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_max_pool2x2_backward_indices_f32(
// CHECK-NEXT: memref.dealloc %[[I]]
#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
memref.global "private" @g : memref<2x3x8x6xf32> = uninitialized
func.func @global_input(%y: memref<2x3x4x3xf32>, %dy: memref<2x3x4x3xf32>, %dx: memref<2x3x8x6xf32>) {
  %x = memref.get_global @g : memref<2x3x8x6xf32>
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x6xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<2x3x4x3xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>, memref<2x3x8x6xf32>) outs(%dx : memref<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @view_input(%y: memref<2x3x4x3xf32>, %dy: memref<2x3x4x3xf32>, %dx: memref<2x3x8x6xf32>) {
  %big = memref.alloc() : memref<2x3x8x8xf32>
  %x = memref.subview %big[0, 0, 0, 0] [2, 3, 8, 6] [1, 1, 1, 1] : memref<2x3x8x8xf32> to memref<2x3x8x6xf32, strided<[192, 64, 8, 1]>>
  %w = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x6xf32, strided<[192, 64, 8, 1]>>, memref<2x2xf32>) outs(%y : memref<2x3x4x3xf32>)
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<2x3x4x3xf32>, memref<2x3x8x6xf32, strided<[192, 64, 8, 1]>>, memref<2x3x8x6xf32, strided<[192, 64, 8, 1]>>, memref<2x3x8x6xf32, strided<[192, 64, 8, 1]>>, memref<2x3x8x6xf32, strided<[192, 64, 8, 1]>>) outs(%dx : memref<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %big : memref<2x3x8x8xf32>
  return
}

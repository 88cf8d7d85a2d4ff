// RUN: gradir-opt %s --split-input-file --rlx-conv-kernels | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-conv-kernels=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2

// A marked convolution on buffers becomes a call of the implicit-GEMM
// kernel of its element type: the weights cast to the matmul kernels' 2-D
// type, the padded images and the output to 4-D strided ones, the zero
// fill of the output left out (zero flag true), then kh, kw, sh, sw, dh, dw;
// the shape operand's buffer is freed of its last use and left out.  The
// symbol names the kernels' variant.
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_conv_f32]](memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, i1, index, index, index, index, index, index)
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[W:.*]]: memref<8x27xf32>, %[[X:.*]]: memref<2x3x17x15xf32>)
// CHECK: %[[Y:.*]] = memref.alloc() : memref<2x8x13x13xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[CW:.*]] = memref.cast %[[W]] : memref<8x27xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CX:.*]] = memref.cast %[[X]]
// CHECK-NEXT: %[[CY:.*]] = memref.cast %[[Y]]
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK: call @[[$K]](%[[CW]], %[[CX]], %[[CY]], %[[TRUE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {gradir.work = 9126 : i64}
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc
// CHECK: return %[[Y]]
// AVX2: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5 * 2, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @forward(%w: memref<8x27xf32>, %x: memref<2x3x17x15xf32>) -> memref<2x8x13x13xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x8x13x13xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x13x13xf32>)
  %s = memref.alloc() : memref<3x3x3xf32>
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<2x3x17x15xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x13x13xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 2, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<3x3x3xf32>
  return %y : memref<2x8x13x13xf32>
}

// -----

// An output not contiguous per image (a view of every other row) keeps its
// loops and its fill; an output read (no zero fill) calls with the flag false.
// CHECK-LABEL: func.func @strided_output(
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}gradir.conv_kernel
// CHECK-LABEL: func.func @accumulate(
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_conv_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[FALSE]],
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @strided_output(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32>, %y: memref<2x8x8x8xf32, strided<[1024, 128, 16, 1]>>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32, strided<[1024, 128, 16, 1]>>)
  %s = memref.alloc() : memref<3x3x3xf32>
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32, strided<[1024, 128, 16, 1]>>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<3x3x3xf32>
  return
}
func.func @accumulate(%w: memref<8x27xf64>, %x: memref<2x3x10x10xf64>, %y: memref<2x8x8x8xf64>) {
  %s = memref.alloc() : memref<3x3x3xf64>
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf64>, memref<2x3x10x10xf64>, memref<3x3x3xf64>) outs(%y : memref<2x8x8x8xf64>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f64, %b: f64, %c: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    %r = arith.addf %o, %m : f64
    linalg.yield %r : f64
  }
  memref.dealloc %s : memref<3x3x3xf64>
  return
}

// -----

// threads=2 and enough work: an scf.parallel over two blocks of images, each
// calling the kernel on the weights and its images' views (rlx-parallel-loops
// makes it an OpenMP loop); each image is computed by one call, so the bits
// do not depend on the thread count.  Little work: one call, as at 1 thread.
// RUN: gradir-opt %s --split-input-file --rlx-conv-kernels=threads=2 | FileCheck %s --check-prefix=THREADS
// THREADS-LABEL: func.func @forward(
// THREADS-NOT: scf.parallel
// THREADS: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(
// THREADS-LABEL: func.func @wide(
// THREADS: %[[CW:.*]] = memref.cast %arg0
// THREADS: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step
// THREADS: %[[START:.*]] = arith.muli %[[I]]
// THREADS: %[[VX:.*]] = memref.subview %{{.*}}[%[[START]], 0, 0, 0]
// THREADS: %[[VY:.*]] = memref.subview %{{.*}}[%[[START]], 0, 0, 0]
// THREADS: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(%[[CW]], %[[VX]], %[[VY]], %{{.*}}) {gradir.work = 589824 : i64}
// THREADS: scf.reduce
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @wide(%w: memref<32x288xf32>, %x: memref<4x32x18x18xf32>) -> memref<4x32x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<4x32x16x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<4x32x16x16xf32>)
  %s = memref.alloc() : memref<32x3x3xf32>
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<32x288xf32>, memref<4x32x18x18xf32>, memref<32x3x3xf32>) outs(%y : memref<4x32x16x16xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<32x3x3xf32>
  return %y : memref<4x32x16x16xf32>
}

// -----

// gradir.wgrad_conv_kernel: the same generic writing the output channels
// first, (O, N, OH, OW), a call of the weight gradient's kernel (one GEMM
// over the columns (n, oy, ox) of every image, then the range of them it
// computes: all 18 here), the fill left out; at threads=2 a range of the
// columns each (9 and 9; one image's 25 as 13 and 12), every call on the
// whole operands.  An output whose (N, OH, OW) are not contiguous keeps its
// loops.
// CHECK-LABEL: func.func @wgrad(
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C18:.*]] = arith.constant 18 : index
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_wgrad_conv_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C0]], %[[C18]]) {gradir.work = 147456 : i64} : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, i1, index, index, index, index, index, index, index, index) -> ()
// CHECK-LABEL: func.func @wgrad_one_image(
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_wgrad_conv_f64(
// CHECK-LABEL: func.func @wgrad_strided_output(
// CHECK: linalg.generic {{.*}}gradir.wgrad_conv_kernel
// THREADS-LABEL: func.func @wgrad(
// THREADS: %[[CW:.*]] = memref.cast %arg0
// THREADS: %[[CX:.*]] = memref.cast %arg1
// THREADS: %[[CY:.*]] = memref.cast %alloc
// THREADS: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step
// THREADS: %[[START:.*]] = arith.muli %[[I]], %{{.*}} : index
// THREADS: %[[END0:.*]] = arith.addi %[[START]], %{{.*}} : index
// THREADS: %[[END:.*]] = arith.minsi %[[END0]], %{{.*}} : index
// THREADS: call @gradir_kernel_{{[0-9a-f]+}}_wgrad_conv_f32(%[[CW]], %[[CX]], %[[CY]], %{{.*}}, %[[START]], %[[END]]) {gradir.work = 73728 : i64}
// THREADS: scf.reduce
// THREADS-LABEL: func.func @wgrad_one_image(
// THREADS: scf.parallel
// THREADS: %[[START:.*]] = arith.muli %{{.*}}, %c13 : index
// THREADS: call @gradir_kernel_{{[0-9a-f]+}}_wgrad_conv_f64(%{{.*}}, %[[START]], %{{.*}}) {gradir.work = 102400 : i64}
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 16 + d5) * 16 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#x2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2, d3)>
func.func @wgrad(%w: memref<32x2048xf32>, %x: memref<2x8x18x18xf32>) -> memref<32x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<32x2x3x3xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<32x2x3x3xf32>)
  %s = memref.alloc() : memref<8x16x16xf32>
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<32x2048xf32>, memref<2x8x18x18xf32>, memref<8x16x16xf32>) outs(%y : memref<32x2x3x3xf32>) attrs = {gradir.wgrad_conv_kernel = array<i64: 16, 16, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<8x16x16xf32>
  return %y : memref<32x2x3x3xf32>
}
func.func @wgrad_one_image(%w: memref<32x2048xf64>, %x: memref<1x8x24x24xf64>) -> memref<32x1x5x5xf64> {
  %zero = arith.constant 0.0 : f64
  %y = memref.alloc() : memref<32x1x5x5xf64>
  linalg.fill ins(%zero : f64) outs(%y : memref<32x1x5x5xf64>)
  %s = memref.alloc() : memref<8x16x16xf64>
  linalg.generic {indexing_maps = [#w, #x2, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<32x2048xf64>, memref<1x8x24x24xf64>, memref<8x16x16xf64>) outs(%y : memref<32x1x5x5xf64>) attrs = {gradir.wgrad_conv_kernel = array<i64: 16, 16, 2, 2, 1, 1>} {
  ^bb0(%a: f64, %b: f64, %c: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    %r = arith.addf %o, %m : f64
    linalg.yield %r : f64
  }
  memref.dealloc %s : memref<8x16x16xf64>
  return %y : memref<32x1x5x5xf64>
}
func.func @wgrad_strided_output(%w: memref<32x2048xf32>, %x: memref<2x8x18x18xf32>, %y: memref<32x2x3x3xf32, strided<[36, 12, 3, 1]>>) {
  %s = memref.alloc() : memref<8x16x16xf32>
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<32x2048xf32>, memref<2x8x18x18xf32>, memref<8x16x16xf32>) outs(%y : memref<32x2x3x3xf32, strided<[36, 12, 3, 1]>>) attrs = {gradir.wgrad_conv_kernel = array<i64: 16, 16, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<8x16x16xf32>
  return
}

// -----

// Images read through a linalg.copy (rlx-to-linalg's shield against
// elementwise fusion): the kernel reads the copy's source in place and the
// copy and its buffer go; a source the kernel cannot take (every other
// column) keeps the copy, whose buffer the kernel reads.
// CHECK-LABEL: func.func @copied_images(
// CHECK-SAME: %{{.*}}: memref<8x27xf32>, %[[X:.*]]: memref<2x3x10x10xf32>)
// CHECK-NOT: linalg.copy
// CHECK: %[[CX:.*]] = memref.cast %[[X]]
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(%{{.*}}, %[[CX]],
// CHECK-NOT: memref.alloc() : memref<2x3x10x10xf32>
// CHECK: return
// CHECK-LABEL: func.func @copied_strided_images(
// CHECK: %[[B:.*]] = memref.alloc() : memref<2x3x10x10xf32>
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<2x3x10x10xf32, strided<[600, 200, 20, 2]>>) outs(%[[B]] : memref<2x3x10x10xf32>)
// CHECK: %[[CB:.*]] = memref.cast %[[B]]
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(%{{.*}}, %[[CB]],
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @copied_images(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32>) -> memref<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32>)
  %s = memref.alloc() : memref<3x3x3xf32>
  %xc = memref.alloc() : memref<2x3x10x10xf32>
  linalg.copy ins(%x : memref<2x3x10x10xf32>) outs(%xc : memref<2x3x10x10xf32>)
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %xc, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %xc : memref<2x3x10x10xf32>
  memref.dealloc %s : memref<3x3x3xf32>
  return %y : memref<2x8x8x8xf32>
}
func.func @copied_strided_images(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32, strided<[600, 200, 20, 2]>>) -> memref<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32>)
  %s = memref.alloc() : memref<3x3x3xf32>
  %xc = memref.alloc() : memref<2x3x10x10xf32>
  linalg.copy ins(%x : memref<2x3x10x10xf32, strided<[600, 200, 20, 2]>>) outs(%xc : memref<2x3x10x10xf32>)
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %xc, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %xc : memref<2x3x10x10xf32>
  memref.dealloc %s : memref<3x3x3xf32>
  return %y : memref<2x8x8x8xf32>
}

// -----

// Images read with their first two dims swapped (the images map (d4, d0,
// ...): the weight gradient's data, conv.py's SWAPPED_IMAGES): the kernel
// gets a memref.transpose view of them, here of the copy's source (read in
// place: the copy goes).  The layout checks see the view: a source whose
// view's rows overlap its channels (channels 32 apart, rows of 18 x 18)
// keeps its loops.
// CHECK-LABEL: func.func @wgrad_swapped(
// CHECK-SAME: %{{.*}}: memref<32x2048xf32>, %[[X:.*]]: memref<8x2x18x18xf32>)
// CHECK-NOT: linalg.copy
// CHECK: %[[T:.*]] = memref.transpose %[[X]] (d0, d1, d2, d3) -> (d1, d0, d2, d3) : memref<8x2x18x18xf32> to memref<2x8x18x18xf32, strided<[324, 648, 18, 1]>>
// CHECK: %[[CX:.*]] = memref.cast %[[T]] : memref<2x8x18x18xf32, strided<[324, 648, 18, 1]>> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_wgrad_conv_f32(%{{.*}}, %[[CX]],
// CHECK-LABEL: func.func @forward_swapped(
// CHECK-SAME: %{{.*}}: memref<8x27xf32>, %[[X:.*]]: memref<3x2x10x10xf32>)
// CHECK: %[[T:.*]] = memref.transpose %[[X]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK: %[[CX:.*]] = memref.cast %[[T]]
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(%{{.*}}, %[[CX]],
// CHECK-LABEL: func.func @wgrad_swapped_overlapping(
// CHECK-NOT: memref.transpose
// CHECK: linalg.generic {{.*}}gradir.wgrad_conv_kernel
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 16 + d5) * 16 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2, d3)>
#w3 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#y3 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @wgrad_swapped(%w: memref<32x2048xf32>, %x: memref<8x2x18x18xf32>) -> memref<32x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<32x2x3x3xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<32x2x3x3xf32>)
  %s = memref.alloc() : memref<8x16x16xf32>
  %xc = memref.alloc() : memref<8x2x18x18xf32>
  linalg.copy ins(%x : memref<8x2x18x18xf32>) outs(%xc : memref<8x2x18x18xf32>)
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %xc, %s : memref<32x2048xf32>, memref<8x2x18x18xf32>, memref<8x16x16xf32>) outs(%y : memref<32x2x3x3xf32>) attrs = {gradir.wgrad_conv_kernel = array<i64: 16, 16, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %xc : memref<8x2x18x18xf32>
  memref.dealloc %s : memref<8x16x16xf32>
  return %y : memref<32x2x3x3xf32>
}
func.func @forward_swapped(%w: memref<8x27xf32>, %x: memref<3x2x10x10xf32>) -> memref<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32>)
  %s = memref.alloc() : memref<3x3x3xf32>
  linalg.generic {indexing_maps = [#w3, #x, #s, #y3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<3x2x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<3x3x3xf32>
  return %y : memref<2x8x8x8xf32>
}
func.func @wgrad_swapped_overlapping(%w: memref<32x2048xf32>, %x: memref<8x2x18x18xf32, strided<[32, 324, 18, 1]>>, %y: memref<32x2x3x3xf32>) {
  %s = memref.alloc() : memref<8x16x16xf32>
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<32x2048xf32>, memref<8x2x18x18xf32, strided<[32, 324, 18, 1]>>, memref<8x16x16xf32>) outs(%y : memref<32x2x3x3xf32>) attrs = {gradir.wgrad_conv_kernel = array<i64: 16, 16, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<8x16x16xf32>
  return
}

// -----

// rlx-to-linalg's form: the generic in an scf.execute_region yielding its
// output (used past the region).  The zero fill just before it still goes
// (the kernel writes every element, zero flag true), and so does that of an
// output allocated outside the region.
// CHECK-LABEL: func.func @in_region(
// CHECK-NOT: linalg.fill
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TRUE]],
// CHECK-LABEL: func.func @allocated_outside(
// CHECK-NOT: linalg.fill
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: call @gradir_kernel_{{[0-9a-f]+}}_conv_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TRUE]],
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @in_region(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32>, %out: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %r = scf.execute_region -> memref<2x8x8x8xf32> no_inline {
    %y = memref.alloc() : memref<2x8x8x8xf32>
    linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32>)
    %s = memref.alloc() : memref<3x3x3xf32>
    linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %q = arith.addf %o, %m : f32
      linalg.yield %q : f32
    }
    memref.dealloc %s : memref<3x3x3xf32>
    scf.yield %y : memref<2x8x8x8xf32>
  }
  memref.copy %r, %out : memref<2x8x8x8xf32> to memref<2x8x8x8xf32>
  return
}
func.func @allocated_outside(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32>) -> memref<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x8x8x8xf32>
  %r = scf.execute_region -> memref<2x8x8x8xf32> no_inline {
    linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32>)
    %s = memref.alloc() : memref<3x3x3xf32>
    linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %q = arith.addf %o, %m : f32
      linalg.yield %q : f32
    }
    memref.dealloc %s : memref<3x3x3xf32>
    scf.yield %y : memref<2x8x8x8xf32>
  }
  return %r : memref<2x8x8x8xf32>
}

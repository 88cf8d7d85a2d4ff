// RUN: gradir-opt %s --split-input-file --gpu-linalg-to-kernels --canonicalize --cse | FileCheck %s
// RUN: gradir-opt %s --split-input-file --gpu-linalg-to-kernels='tiled=false' --canonicalize --cse | FileCheck %s --check-prefix=SERIAL

// A padded convolution input as bufferization leaves tensor.pad: a buffer
// zero-filled, the input copied into its interior subview, the implicit
// GEMM reading the buffer.  The GEMM's tile loads read the input itself,
// masked per padded dim (y - 1 <u 6: one subtraction, one unsigned compare,
// one select of a safe index): no fill kernel, no copy kernel, no buffer.
// Without tiled kernels (no GEMM to read it) the fill and the copy stay.
// CHECK-LABEL: func.func @padded_conv(
// CHECK-SAME: %[[W:[^:]*]]: memref<32x16x3x3xf32>, %[[X:[^:]*]]: memref<2x16x6x6xf32> {llvm.noalias}, %[[OUT:[^:]*]]: memref<2x32x6x6xf32> {llvm.noalias})
// CHECK-NOT:  memref.alloc
// CHECK:      gpu.launch {{.*}} function(@padded_conv_gemm_0)
// CHECK:        memref.load %[[W]]
// CHECK:        %[[Y:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NEXT:   %[[YOK:.*]] = arith.cmpi ult, %[[Y]], %c6 : index
// CHECK-NEXT:   %[[YS:.*]] = arith.select %[[YOK]], %[[Y]], %c0 : index
// CHECK-NEXT:   %[[XX:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NEXT:   %[[XOK:.*]] = arith.cmpi ult, %[[XX]], %c6 : index
// CHECK-NEXT:   %[[XS:.*]] = arith.select %[[XOK]], %[[XX]], %c0 : index
// CHECK-NEXT:   %[[V:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %[[YS]], %[[XS]]] : memref<2x16x6x6xf32>
// CHECK-NEXT:   %[[IN:.*]] = arith.andi %[[YOK]], %[[XOK]] : i1
// CHECK-NEXT:   %[[OK:.*]] = arith.andi %{{.*}}, %[[IN]] : i1
// CHECK-NEXT:   %[[VS:.*]] = arith.select %[[OK]], %[[V]], %cst : f32
// CHECK-NEXT:   memref.store %[[VS]]
// CHECK:        memref.store %{{.*}}, %[[OUT]]
// CHECK:        gpu.terminator
// CHECK-NOT:  gpu.launch
// CHECK-NOT:  memref.dealloc
// CHECK:      return
// SERIAL-LABEL: func.func @padded_conv(
// SERIAL:       memref.alloc() : memref<2x16x8x8xf32>
// SERIAL:       gpu.launch {{.*}} function(@padded_conv_map_0)
// SERIAL:       memref.subview
// SERIAL:       gpu.launch {{.*}} function(@padded_conv_map_1)
// SERIAL:       gpu.launch {{.*}} function(@padded_conv_reduce_serial_2)
// SERIAL-NOT:   gpu.launch
// SERIAL:       memref.dealloc
#id = affine_map<(n, c, y, x) -> (n, c, y, x)>
#w = affine_map<(n, o, y, x, c, ky, kx) -> (o, c, ky, kx)>
#x = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y + ky, x + kx)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
func.func @padded_conv(%w: memref<32x16x3x3xf32>, %x: memref<2x16x6x6xf32> {llvm.noalias},
                       %out: memref<2x32x6x6xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x16x8x8xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<2x16x8x8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [2, 16, 6, 6] [1, 1, 1, 1] : memref<2x16x8x8xf32> to memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x16x6x6xf32>) outs(%v : memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %p : memref<32x16x3x3xf32>, memref<2x16x8x8xf32>) outs(%out : memref<2x32x6x6xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x16x8x8xf32>
  return
}

// -----

// The copy fused into its producer (gpu-fuse-generics: the relu writes its
// result and the padded buffer's interior): the producer loses that output
// (its kernel stores the relu once), the padded buffer's zero fill (one
// output of a fill of two buffers) loses it too, and the relu's buffer,
// freed before the convolution, now lives until the GEMM has read it.
// CHECK-LABEL: func.func @fused_copy(
// CHECK-SAME: %[[W:[^:]*]]: memref<8x4x3x3xf32>, %[[Y:[^:]*]]: memref<2x4x8x8xf32>, %[[OUT:[^:]*]]: memref<2x8x8x8xf32> {llvm.noalias}, %[[Z:[^:]*]]: memref<2x4x10x10xf32> {llvm.noalias})
// CHECK-NOT:  memref.alloc
// CHECK:      gpu.launch {{.*}} function(@fused_copy_map_0)
// CHECK:          memref.store %cst, %[[Z]]
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.terminator
// CHECK:      %[[R:.*]] = memref.alloc() : memref<2x4x8x8xf32>
// CHECK-NOT:  memref.alloc
// CHECK:      gpu.launch {{.*}} function(@fused_copy_map_1)
// CHECK:        %[[V:.*]] = memref.load %[[Y]]
// CHECK-NEXT:   %[[M:.*]] = arith.maximumf %[[V]], %cst
// CHECK-NEXT:   memref.store %[[M]], %[[R]]
// CHECK-NEXT:   gpu.terminator
// CHECK:      gpu.launch {{.*}} function(@fused_copy_gemm_2)
// CHECK:        memref.load %[[R]]
// CHECK:        gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[R]]
// CHECK-NEXT: return
#id = affine_map<(n, c, y, x) -> (n, c, y, x)>
#w = affine_map<(n, o, y, x, c, ky, kx) -> (o, c, ky, kx)>
#x = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y + ky, x + kx)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
func.func @fused_copy(%w: memref<8x4x3x3xf32>, %y: memref<2x4x8x8xf32>,
                      %out: memref<2x8x8x8xf32> {llvm.noalias}, %z: memref<2x4x10x10xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x4x10x10xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p, %z : memref<2x4x10x10xf32>, memref<2x4x10x10xf32>) {
  ^bb0(%o: f32, %o2: f32):
    linalg.yield %zero, %zero : f32, f32
  }
  %r = memref.alloc() : memref<2x4x8x8xf32>
  %v = memref.subview %p[0, 0, 1, 1] [2, 4, 8, 8] [1, 1, 1, 1] : memref<2x4x10x10xf32> to memref<2x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : memref<2x4x8x8xf32>) outs(%v, %r : memref<2x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>, memref<2x4x8x8xf32>) {
  ^bb0(%i: f32, %o: f32, %o2: f32):
    %m = arith.maximumf %i, %zero : f32
    linalg.yield %m, %m : f32, f32
  }
  memref.dealloc %r : memref<2x4x8x8xf32>
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %p : memref<8x4x3x3xf32>, memref<2x4x10x10xf32>) outs(%out : memref<2x8x8x8xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x4x10x10xf32>
  return
}

// -----

// conv2d_transpose's zero-inserted input (a stride-2 insert_slice into
// zeros, plus 2 rows and columns of padding before): the source is read at
// (y - 2) / 2 where (y - 2) <u 7 and (y - 2) % 2 == 0.
// CHECK-LABEL: func.func @zero_inserted(
// CHECK-SAME: %[[W:[^:]*]]: memref<8x8x3x3xf32>, %[[X:[^:]*]]: memref<2x8x4x4xf32> {llvm.noalias}, %[[OUT:[^:]*]]: memref<2x8x9x9xf32> {llvm.noalias})
// CHECK-NOT:  memref.alloc
// CHECK:      gpu.launch {{.*}} function(@zero_inserted_gemm_0)
// CHECK:        %[[Y:.*]] = arith.subi %{{.*}}, %c2 : index
// CHECK-NEXT:   %[[YIN:.*]] = arith.cmpi ult, %[[Y]], %c7 : index
// CHECK-NEXT:   %[[YR:.*]] = arith.remui %[[Y]], %c2 : index
// CHECK-NEXT:   %[[YON:.*]] = arith.cmpi eq, %[[YR]], %c0 : index
// CHECK-NEXT:   %[[YOK:.*]] = arith.andi %[[YIN]], %[[YON]] : i1
// CHECK-NEXT:   %[[YS:.*]] = arith.select %[[YOK]], %[[Y]], %c0 : index
// CHECK-NEXT:   %[[YI:.*]] = arith.divui %[[YS]], %c2 : index
// CHECK:        memref.load %[[X]][%{{.*}}, %{{.*}}, %[[YI]], %{{.*}}] : memref<2x8x4x4xf32>
// CHECK:        gpu.terminator
// CHECK-NOT:  gpu.launch
// CHECK:      return
#id = affine_map<(n, c, y, x) -> (n, c, y, x)>
#w = affine_map<(n, o, y, x, c, ky, kx) -> (c, o, ky, kx)>
#x = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y - ky + 2, x - kx + 2)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
func.func @zero_inserted(%w: memref<8x8x3x3xf32>, %x: memref<2x8x4x4xf32> {llvm.noalias},
                         %out: memref<2x8x9x9xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x8x11x11xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<2x8x11x11xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %v = memref.subview %p[0, 0, 2, 2] [2, 8, 4, 4] [1, 1, 2, 2] : memref<2x8x11x11xf32> to memref<2x8x4x4xf32, strided<[968, 121, 22, 2], offset: 24>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x8x4x4xf32>) outs(%v : memref<2x8x4x4xf32, strided<[968, 121, 22, 2], offset: 24>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %p : memref<8x8x3x3xf32>, memref<2x8x11x11xf32>) outs(%out : memref<2x8x9x9xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x8x11x11xf32>
  return
}

// -----

// The input computed straight into the padded buffer's interior (no copy:
// a conv2d_transpose's output gradient, which the weight gradient also
// reads through the view): the producer writes a buffer of its own
// instead, the view's readers read that, and so does the GEMM, masked.
// CHECK-LABEL: func.func @computed_into(
// CHECK-SAME: %[[W:[^:]*]]: memref<8x4x3x3xf32>, %[[Y:[^:]*]]: memref<2x4x8x8xf32>, %[[OUT:[^:]*]]: memref<2x8x8x8xf32> {llvm.noalias}, %[[T:[^:]*]]: memref<2x4x8x8xf32> {llvm.noalias})
// CHECK:      %[[X:.*]] = memref.alloc() : memref<2x4x8x8xf32>
// CHECK-NOT:  memref.alloc
// CHECK:      gpu.launch {{.*}} function(@computed_into_map_0)
// CHECK:        %[[V:.*]] = memref.load %[[Y]]
// CHECK-NEXT:   %[[M:.*]] = arith.maximumf %[[V]], %cst
// CHECK-NEXT:   memref.store %[[M]], %[[X]]
// CHECK:      gpu.launch {{.*}} function(@computed_into_map_1)
// CHECK:        memref.load %[[X]]
// CHECK:        memref.store %{{.*}}, %[[T]]
// CHECK:      gpu.launch {{.*}} function(@computed_into_gemm_2)
// CHECK:        arith.cmpi ult
// CHECK:        memref.load %[[X]]
// CHECK:        gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[X]]
// CHECK-NEXT: return
#id = affine_map<(n, c, y, x) -> (n, c, y, x)>
#w = affine_map<(n, o, y, x, c, ky, kx) -> (o, c, ky, kx)>
#x = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y + ky, x + kx)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
func.func @computed_into(%w: memref<8x4x3x3xf32>, %y: memref<2x4x8x8xf32>,
                         %out: memref<2x8x8x8xf32> {llvm.noalias}, %t: memref<2x4x8x8xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x4x10x10xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<2x4x10x10xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [2, 4, 8, 8] [1, 1, 1, 1] : memref<2x4x10x10xf32> to memref<2x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : memref<2x4x8x8xf32>) outs(%v : memref<2x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.maximumf %i, %zero : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : memref<2x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>) outs(%t : memref<2x4x8x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %d = arith.addf %i, %i : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %p : memref<8x4x3x3xf32>, memref<2x4x10x10xf32>) outs(%out : memref<2x8x8x8xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x4x10x10xf32>
  return
}

// -----

// Kept: the source is written between the copy and the GEMM (the padded
// buffer holds its old values), or a reader of the padded buffer is no
// GEMM (a sum), or the source may alias the GEMM's output (function
// arguments not marked llvm.noalias): the fill and the copy stay kernels.
// CHECK-LABEL: func.func @source_written(
// CHECK:      memref.alloc() : memref<2x16x8x8xf32>
// CHECK:      function(@source_written_map_0)
// CHECK:      function(@source_written_map_1)
// CHECK:      function(@source_written_map_2)
// CHECK:      function(@source_written_gemm_3)
// CHECK-LABEL: func.func @sum_reader(
// CHECK:      memref.alloc() : memref<2x16x8x8xf32>
// CHECK:      function(@sum_reader_map_0)
// CHECK:      function(@sum_reader_map_1)
// CHECK:      function(@sum_reader_gemm_2)
// CHECK:      function(@sum_reader_reduce_3)
// CHECK-LABEL: func.func @may_alias(
// CHECK:      memref.alloc() : memref<2x16x8x8xf32>
// CHECK:      function(@may_alias_map_0)
// CHECK:      function(@may_alias_map_1)
// CHECK:      function(@may_alias_gemm_2)
#id = affine_map<(n, c, y, x) -> (n, c, y, x)>
#w = affine_map<(n, o, y, x, c, ky, kx) -> (o, c, ky, kx)>
#x = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y + ky, x + kx)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
#all = affine_map<(n, c, y, x) -> ()>
func.func @source_written(%w: memref<32x16x3x3xf32>, %x: memref<2x16x6x6xf32> {llvm.noalias},
                          %out: memref<2x32x6x6xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x16x8x8xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<2x16x8x8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [2, 16, 6, 6] [1, 1, 1, 1] : memref<2x16x8x8xf32> to memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x16x6x6xf32>) outs(%v : memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%x : memref<2x16x6x6xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %p : memref<32x16x3x3xf32>, memref<2x16x8x8xf32>) outs(%out : memref<2x32x6x6xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x16x8x8xf32>
  return
}
func.func @sum_reader(%w: memref<32x16x3x3xf32>, %x: memref<2x16x6x6xf32> {llvm.noalias},
                      %out: memref<2x32x6x6xf32> {llvm.noalias}, %total: memref<f32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x16x8x8xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<2x16x8x8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [2, 16, 6, 6] [1, 1, 1, 1] : memref<2x16x8x8xf32> to memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x16x6x6xf32>) outs(%v : memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %p : memref<32x16x3x3xf32>, memref<2x16x8x8xf32>) outs(%out : memref<2x32x6x6xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%p : memref<2x16x8x8xf32>) outs(%total : memref<f32>) {
  ^bb0(%i: f32, %acc: f32):
    %s = arith.addf %acc, %i : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x16x8x8xf32>
  return
}
func.func @may_alias(%w: memref<32x16x3x3xf32>, %x: memref<2x16x6x6xf32>, %out: memref<2x32x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x16x8x8xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<2x16x8x8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [2, 16, 6, 6] [1, 1, 1, 1] : memref<2x16x8x8xf32> to memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x16x6x6xf32>) outs(%v : memref<2x16x6x6xf32, strided<[1024, 64, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#w, #x, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%w, %p : memref<32x16x3x3xf32>, memref<2x16x8x8xf32>) outs(%out : memref<2x32x6x6xf32>)
      attrs = {gradir.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x16x8x8xf32>
  return
}

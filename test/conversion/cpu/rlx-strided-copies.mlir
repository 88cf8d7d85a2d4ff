// RUN: gradir-opt %s --split-input-file --rlx-strided-copies | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-strided-copies --rlx-strided-copies | FileCheck %s
// Copies between buffers that are not both contiguous become linalg.copy
// (lowered to loops, not MLIR's element-by-element memrefCopy); contiguous
// ones (one memcpy), rank 0 and unranked ones stay memref.copy.  Running the
// pass twice changes nothing more.

// A convolution's padded input: the data copied into the interior.
// CHECK-LABEL: func.func @into_padding(
// CHECK-SAME:      %[[X:.*]]: memref<2x3x4x4xf32>, %[[P:.*]]: memref<2x3x6x6xf32>)
// CHECK:         %[[S:.*]] = memref.subview %[[P]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
// CHECK-NEXT:    linalg.copy {{.*}}ins(%[[X]] : memref<2x3x4x4xf32>) outs(%[[S]] : memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>)
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @into_padding(%x: memref<2x3x4x4xf32>, %p: memref<2x3x6x6xf32>) {
  %s = memref.subview %p[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
      : memref<2x3x6x6xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  memref.copy %x, %s : memref<2x3x4x4xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  return
}

// -----

// A strided source (every other column) into a contiguous buffer.
// CHECK-LABEL: func.func @from_strided(
// CHECK:         linalg.copy {{.*}}ins(%{{.*}} : memref<4x3xf64, strided<[6, 2]>>) outs(%{{.*}} : memref<4x3xf64>)
// CHECK-NOT:     memref.copy
func.func @from_strided(%a: memref<4x6xf64>, %b: memref<4x3xf64>) {
  %s = memref.subview %a[0, 0] [4, 3] [1, 2] : memref<4x6xf64> to memref<4x3xf64, strided<[6, 2]>>
  memref.copy %s, %b : memref<4x3xf64, strided<[6, 2]>> to memref<4x3xf64>
  return
}

// -----

// Contiguous on both sides (identity layouts; a row slice with an offset; a
// strided layout whose strides are row-major; unit dims with any stride):
// left to memref.copy's memcpy.  Rank 0 and unranked buffers too.
// CHECK-LABEL: func.func @contiguous(
// CHECK-NOT:     linalg.copy
// CHECK-COUNT-5: memref.copy
// CHECK-NOT:     linalg.copy
// CHECK:         return
func.func @contiguous(%a: memref<4x6xf32>, %b: memref<4x6xf32>, %c: memref<6xf32>,
                      %d: memref<f32>, %e: memref<f32>, %u: memref<*xf32>, %v: memref<*xf32>,
                      %w: memref<1x6xf32>) {
  memref.copy %a, %b : memref<4x6xf32> to memref<4x6xf32>
  %row = memref.subview %a[2, 0] [1, 6] [1, 1] : memref<4x6xf32> to memref<6xf32, strided<[1], offset: 12>>
  memref.copy %row, %c : memref<6xf32, strided<[1], offset: 12>> to memref<6xf32>
  %r2 = memref.subview %a[1, 0] [1, 6] [1, 1] : memref<4x6xf32> to memref<1x6xf32, strided<[6, 1], offset: 6>>
  memref.copy %r2, %w : memref<1x6xf32, strided<[6, 1], offset: 6>> to memref<1x6xf32>
  memref.copy %d, %e : memref<f32> to memref<f32>
  memref.copy %u, %v : memref<*xf32> to memref<*xf32>
  return
}

// -----

// Inside loops and other regions too.
// CHECK-LABEL: func.func @in_a_loop(
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK-NOT:     memref.copy
func.func @in_a_loop(%a: memref<8x8xf32>, %b: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c2 {
    %s = memref.subview %a[0, %i] [8, 4] [1, 1] : memref<8x8xf32> to memref<8x4xf32, strided<[8, 1], offset: ?>>
    memref.copy %s, %b : memref<8x4xf32, strided<[8, 1], offset: ?>> to memref<8x4xf32>
  }
  return
}

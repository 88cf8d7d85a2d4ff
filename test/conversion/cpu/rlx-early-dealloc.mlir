// RUN: gradir-opt %s --allow-unregistered-dialect --split-input-file --rlx-early-dealloc | FileCheck %s

// Each buffer is freed right after its last use, not at the end of the block.
// CHECK-LABEL: func.func @straight_line(
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: "test.use"(%[[A]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: "test.use"(%[[B]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: "test.other"()
// CHECK-NEXT: return
func.func @straight_line() {
  %a = memref.alloc() : memref<4xf32>
  "test.use"(%a) : (memref<4xf32>) -> ()
  %b = memref.alloc() : memref<4xf32>
  "test.use"(%b) : (memref<4xf32>) -> ()
  "test.other"() : () -> ()
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A use of a view (subview, then a collapse of it) keeps the buffer alive,
// and so does a use inside a nested region: the enclosing op is the use.
// CHECK-LABEL: func.func @views_and_regions(
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: %[[S:.*]] = memref.subview %[[A]]
// CHECK: "test.first"()
// CHECK: scf.for
// CHECK:   "test.use"(%[[S]])
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: "test.last"()
func.func @views_and_regions(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4x4xf32>
  %s = memref.subview %a[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  "test.first"() : () -> ()
  scf.for %i = %c0 to %n step %c1 {
    "test.use"(%s) : (memref<2x4xf32, strided<[4, 1]>>) -> ()
  }
  "test.last"() : () -> ()
  memref.dealloc %a : memref<4x4xf32>
  return
}

// -----

// Negative cases: a buffer that is not allocated in this block (an
// argument), and a dealloc already right after the last use, stay put.
// CHECK-LABEL: func.func @unmoved(
// CHECK: "test.use"(%[[ARG:[a-z0-9_]+]])
// CHECK-NEXT: "test.other"()
// CHECK-NEXT: memref.dealloc %[[ARG]]
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK-NEXT: "test.use"(%[[B]])
// CHECK-NEXT: memref.dealloc %[[B]]
func.func @unmoved(%arg: memref<4xf32>) {
  "test.use"(%arg) : (memref<4xf32>) -> ()
  "test.other"() : () -> ()
  memref.dealloc %arg : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  "test.use"(%b) : (memref<4xf32>) -> ()
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A view yielded out of an scf.execute_region (rlx-to-linalg's regions
// around reshapes that feed kernel matmuls) is a view of the buffer: the
// buffer lives until the region's result is last used.
// CHECK-LABEL: func.func @region_view(
// CHECK: %[[V:.*]] = scf.execute_region
// CHECK: "test.use"(%[[V]])
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @region_view() {
  %a = memref.alloc() : memref<2x3xf32>
  %v = scf.execute_region -> memref<6xf32> no_inline {
    %c = memref.collapse_shape %a [[0, 1]] : memref<2x3xf32> into memref<6xf32>
    scf.yield %c : memref<6xf32>
  }
  "test.use"(%v) : (memref<6xf32>) -> ()
  memref.dealloc %a : memref<2x3xf32>
  return
}

// RUN: gradir-opt %s --rlx-widen-bool-memrefs | FileCheck %s
// i1 memrefs (the ownership flags of the deallocation of buffers that loops
// return) are stored as i8: stores widen, loads compare with 0.

// CHECK-LABEL: func.func @flags(
// CHECK-SAME:      %[[F:.*]]: i1, %[[M:.*]]: memref<?xi8>) -> i1
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2xi8>
// CHECK:         %[[E:.*]] = arith.extui %[[F]] : i1 to i8
// CHECK:         memref.store %[[E]], %[[A]][%{{.*}}] : memref<2xi8>
// CHECK:         %[[L:.*]] = memref.load %[[A]][%{{.*}}] : memref<2xi8>
// CHECK:         %[[Z:.*]] = arith.constant 0 : i8
// CHECK:         %[[B:.*]] = arith.cmpi ne, %[[L]], %[[Z]] : i8
// CHECK:         %[[C:.*]] = memref.cast %[[A]] : memref<2xi8> to memref<?xi8>
// CHECK:         memref.dealloc %[[A]] : memref<2xi8>
// CHECK:         return %[[B]] : i1
func.func @flags(%f: i1, %m: memref<?xi1>) -> i1 {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<2xi1>
  memref.store %f, %a[%c0] : memref<2xi1>
  %l = memref.load %a[%c0] : memref<2xi1>
  %c = memref.cast %a : memref<2xi1> to memref<?xi1>
  memref.dealloc %a : memref<2xi1>
  return %l : i1
}

// CHECK-LABEL: func.func @untouched(
// CHECK:         memref.alloc() : memref<4xf32>
func.func @untouched() {
  %a = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// RUN: gradir-opt %s --gpu-host-conditions | FileCheck %s
// RUN: gradir-opt %s --gpu-host-conditions --gpu-check-host -o /dev/null
// A condition the host reads from a 0-d device buffer is copied to a host
// buffer first, so scf.if / scf.while stay on the host; loads of larger
// buffers, loads inside kernels and loads of host memory (marked
// gradir.host_memory) are left alone.

// CHECK-LABEL: func.func @branch(
// CHECK:         %[[D:.*]] = gpu.alloc () : memref<i8>
// CHECK:         %[[H:.*]] = memref.alloca() {gradir.host_scalar} : memref<i8>
// CHECK-NEXT:    gpu.memcpy  %[[H]], %[[D]] : memref<i8>, memref<i8>
// CHECK-NEXT:    %[[B:.*]] = memref.load %[[H]][] : memref<i8>
// CHECK:         scf.if
func.func @branch() {
  %d = gpu.alloc () : memref<i8>
  %b = memref.load %d[] : memref<i8>
  %z = arith.constant 0 : i8
  %c = arith.cmpi ne, %b, %z : i8
  scf.if %c {
  }
  gpu.dealloc %d : memref<i8>
  return
}

// CHECK-LABEL: func.func @loop(
// CHECK:         scf.while
// CHECK:           %[[H:.*]] = memref.alloca() {gradir.host_scalar} : memref<i8>
// CHECK-NEXT:      gpu.memcpy  %[[H]], %{{.*}} : memref<i8>, memref<i8>
// CHECK-NEXT:      memref.load %[[H]][] : memref<i8>
// CHECK:           scf.condition
func.func @loop(%d: memref<i8>) {
  %c0 = arith.constant 0 : index
  %r = scf.while (%i = %c0) : (index) -> index {
    %b = memref.load %d[] : memref<i8>
    %z = arith.constant 0 : i8
    %c = arith.cmpi ne, %b, %z : i8
    scf.condition(%c) %i : index
  } do {
  ^bb0(%i: index):
    %c1 = arith.constant 1 : index
    %n = arith.addi %i, %c1 : index
    scf.yield %n : index
  }
  return
}

// A 0-d host buffer (a load marked gradir.host_memory) is read as it is.
// CHECK-LABEL: func.func @host_memory(
// CHECK-NOT:     memref.alloca
// CHECK-NOT:     gpu.memcpy
// CHECK:         %[[B:.*]] = memref.load %{{.*}}[] {gradir.host_memory} : memref<i8>
// CHECK:         scf.if
func.func @host_memory() {
  %h = memref.alloc () : memref<i8>
  %z = arith.constant 0 : i8
  memref.store %z, %h[] : memref<i8>
  %b = memref.load %h[] {gradir.host_memory} : memref<i8>
  %c = arith.cmpi ne, %b, %z : i8
  scf.if %c {
  }
  memref.dealloc %h : memref<i8>
  return
}

// RUN: gradir-opt %s --gpu-check-host | FileCheck %s
// Host memory the host alone uses passes gpu-check-host unchanged: integer
// bookkeeping such as the trip-count stack of an scf.while adjoint
// checkpointed with an integer period (gpu-device-buffers leaves it in
// memref.alloc buffers), through views, loops (a carried copy), branches
// and frees, next to device buffers, kernels and a condition copied to the
// host; a scalar loaded from it may reach a kernel as a value (a trip
// counter that selects data).

// CHECK-LABEL: func.func @trip_stack(
// CHECK:      %[[S:.*]] = memref.alloc(%{{.*}}) : memref<?xindex>
// CHECK:      memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<?xindex>
// CHECK:      memref.copy
// CHECK:      memref.load
// CHECK:      memref.dim
// CHECK:      memref.dealloc
// CHECK:      %[[ROW:.*]] = memref.load %[[S]][%{{.*}}] {gradir.host_memory}
// CHECK:      gpu.launch
// CHECK:        arith.addi %{{.*}}, %[[ROW]] : index
// CHECK:      memref.dealloc %[[S]] : memref<?xindex>
// CHECK:      gpu.dealloc
func.func @trip_stack(%x: memref<4xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = gpu.alloc () : memref<4xf32>
  gpu.memcpy %d, %x : memref<4xf32>, memref<4xf32>
  %s = memref.alloc (%n) : memref<?xindex>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%k = %c0) -> (index) {
    %even = arith.remsi %i, %c1 : index
    %z = arith.cmpi eq, %even, %c0 : index
    scf.if %z {
      memref.store %k, %s[%i] : memref<?xindex>
    }
    %k1 = arith.addi %k, %c1 : index
    scf.yield %k1 : index
  }
  %init = memref.alloc () : memref<2xindex>
  %copy = memref.alloc () : memref<2xindex>
  memref.copy %init, %copy : memref<2xindex> to memref<2xindex>
  memref.dealloc %init : memref<2xindex>
  %t = scf.for %i = %c0 to %n step %c1 iter_args(%b = %copy) -> (memref<2xindex>) {
    %v = memref.subview %s[%i] [1] [1] : memref<?xindex> to memref<1xindex, strided<[1], offset: ?>>
    %e = memref.load %v[%c0] : memref<1xindex, strided<[1], offset: ?>>
    memref.store %e, %b[%c0] : memref<2xindex>
    scf.yield %b : memref<2xindex>
  }
  %last = memref.load %t[%c0] : memref<2xindex>
  %len = memref.dim %s, %c0 : memref<?xindex>
  memref.dealloc %t : memref<2xindex>
  %row = memref.load %s[%c0] {gradir.host_memory} : memref<?xindex>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %a = memref.load %d[%tx] : memref<4xf32>
    %m = arith.mulf %a, %a : f32
    %o = arith.addi %tx, %row : index
    memref.store %m, %d[%o] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %s : memref<?xindex>
  gpu.memcpy %x, %d : memref<4xf32>, memref<4xf32>
  gpu.dealloc %d : memref<4xf32>
  %sum = arith.addi %last, %len : index
  return %sum : index
}

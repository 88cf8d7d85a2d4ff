// RUN: gradir-opt %s --split-input-file --gpu-device-buffers | FileCheck %s
// RUN: gradir-opt %s --split-input-file --gpu-device-buffers='keep-resident=1' | FileCheck %s --check-prefix=RESIDENT
// RUN: gradir-opt %s --split-input-file --gpu-device-buffers --gpu-persistent-buffers | FileCheck %s --check-prefix=ARENA

// Inputs are copied to the device once at entry, the output is computed in a
// device buffer and copied back before return; intermediates and the inputs'
// device buffers are freed after their last use (through views), the
// output's after the copy back; memref.copy becomes linalg.copy.

// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[A:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3xf32>, %[[OUT:.*]]: memref<4x3xf32>)
// CHECK:      %[[DA:.*]] = gpu.alloc () : memref<4x3xf32>
// CHECK-NEXT: gpu.memcpy %[[DA]], %[[A]] : memref<4x3xf32>, memref<4x3xf32>
// CHECK-NEXT: %[[DB:.*]] = gpu.alloc () : memref<3xf32>
// CHECK-NEXT: gpu.memcpy %[[DB]], %[[B]] : memref<3xf32>, memref<3xf32>
// CHECK-NEXT: %[[DOUT:.*]] = gpu.alloc () : memref<4x3xf32>
// CHECK-NOT:  gpu.memcpy %[[DOUT]]
// CHECK:      %[[T:.*]] = gpu.alloc () : memref<12xf32>
// CHECK:      %[[V:.*]] = memref.expand_shape %[[T]]
// CHECK:      linalg.generic {{.*}} ins(%[[DA]], %[[DB]] : {{.*}}) outs(%[[V]] : memref<4x3xf32>)
// CHECK:      linalg.yield
// CHECK-NEXT: }
// CHECK-DAG:  gpu.dealloc %[[DA]] :
// CHECK-DAG:  gpu.dealloc %[[DB]] :
// CHECK:      linalg.copy {{.*}}ins(%[[V]] : memref<4x3xf32>) outs(%[[DOUT]] : memref<4x3xf32>)
// CHECK-NEXT: gpu.dealloc %[[T]] : memref<12xf32>
// CHECK-NEXT: gpu.memcpy %[[OUT]], %[[DOUT]] : memref<4x3xf32>, memref<4x3xf32>
// CHECK-NEXT: gpu.dealloc %[[DOUT]]
// CHECK-NEXT: return

// RESIDENT: llvm.mlir.global internal @__gradir_resident_f_1(0 : i64)
// RESIDENT-LABEL: func.func @f(
// RESIDENT-SAME: %[[A:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3xf32>
// RESIDENT:      %[[G:.*]] = llvm.mlir.addressof @__gradir_resident_f_1
// RESIDENT-NEXT: %[[P:.*]] = llvm.load %[[G]] : !llvm.ptr -> i64
// RESIDENT:      %[[FRESH:.*]] = arith.cmpi eq, %[[P]]
// RESIDENT-NEXT: scf.if %[[FRESH]] {
// RESIDENT-NEXT:   %[[D:.*]] = gpu.alloc () : memref<3xf32>
// RESIDENT-NEXT:   gpu.memcpy %[[D]], %[[B]]
// RESIDENT-NEXT:   %[[I:.*]] = memref.extract_aligned_pointer_as_index %[[D]]
// RESIDENT:        llvm.store
// RESIDENT:      %[[DB:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<3xf32>
// RESIDENT:      linalg.generic {{.*}} ins(%{{.*}}, %[[DB]] :
// RESIDENT-NOT:  gpu.dealloc %[[DB]] :
// RESIDENT:      return
// RESIDENT-LABEL: func.func @f_upload_resident(
// RESIDENT-SAME: %[[H:.*]]: memref<3xf32>) attributes {llvm.emit_c_interface}
// RESIDENT:      %[[DEV:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<3xf32>
// RESIDENT-NEXT: gpu.memcpy %[[DEV]], %[[H]]

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @f(%a: memref<4x3xf32>, %b: memref<3xf32>, %out: memref<4x3xf32>)
    attributes {gradir.original_type = (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>} {
  %t = memref.alloc() : memref<12xf32>
  %v = memref.expand_shape %t [[0, 1]] output_shape [4, 3] : memref<12xf32> into memref<4x3xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x3xf32>, memref<3xf32>) outs(%v : memref<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  memref.copy %v, %out : memref<4x3xf32> to memref<4x3xf32>
  return
}

// -----

// Constants (memref.get_global) are copied to the device where they are used.

// CHECK-LABEL: func.func @constant(
// CHECK:      %[[G:.*]] = memref.get_global @cst : memref<2xf32>
// CHECK-NEXT: %[[D:.*]] = gpu.alloc () : memref<2xf32>
// CHECK-NEXT: gpu.memcpy %[[D]], %[[G]]
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[D]] : memref<2xf32>)
// CHECK-NEXT: gpu.dealloc %[[D]]
memref.global "private" constant @cst : memref<2xf32> = dense<[1.0, 2.0]>
func.func @constant(%out: memref<2xf32>)
    attributes {gradir.original_type = () -> tensor<2xf32>} {
  %g = memref.get_global @cst : memref<2xf32>
  memref.copy %g, %out : memref<2xf32> to memref<2xf32>
  return
}

// -----

// Without gradir.original_type every argument is copied in, and the ones
// the function writes are copied back.

// CHECK-LABEL: func.func @untyped(
// CHECK-SAME: %[[X:.*]]: memref<2xf32>, %[[Y:.*]]: memref<2xf32>)
// CHECK:      gpu.memcpy %[[DX:.*]], %[[X]]
// CHECK:      gpu.memcpy %[[DY:.*]], %[[Y]]
// CHECK:      linalg.copy {{.*}}ins(%[[DX]] : memref<2xf32>) outs(%[[DY]] : memref<2xf32>)
// CHECK-NOT:  gpu.memcpy %[[X]]
// CHECK:      gpu.memcpy %[[Y]], %[[DY]]
func.func @untyped(%x: memref<2xf32>, %y: memref<2xf32>) {
  memref.copy %x, %y : memref<2xf32> to memref<2xf32>
  return
}

// -----

// A loop owns the buffers it carries: the init buffer is handed to it (the
// loop is its last use), each iteration frees the previous iteration's
// buffer once the next one is made, and the result is freed after its last
// use after the loop.

// CHECK-LABEL: func.func @loop(
// CHECK:      linalg.copy {{.*}}outs(%[[INIT:.*]] : memref<4xf32>)
// CHECK-NOT:  gpu.dealloc %[[INIT]] :
// CHECK:      %[[R:.*]] = scf.for {{.*}} iter_args(%[[H:.*]] = %[[INIT]]) -> (memref<4xf32>) {
// CHECK-NEXT:   %[[N:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:   linalg.generic {{.*}} ins(%[[H]] : memref<4xf32>) outs(%[[N]] : memref<4xf32>)
// CHECK:        linalg.yield
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.dealloc %[[H]] : memref<4xf32>
// CHECK-NEXT:   scf.yield %[[N]] : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[R]] : memref<4xf32>) outs(%[[DOUT:.*]] : memref<4xf32>)
// CHECK-NEXT: gpu.dealloc %[[R]] : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %{{.*}}, %[[DOUT]]

// gpu-persistent-buffers leaves a buffer handed to a loop out of the arena
// (the loop frees it); the arguments' buffers are views of the arena.
// ARENA-LABEL: func.func @loop(
// ARENA:      %[[IN:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<512xi8> to memref<4xf32>
// ARENA:      %[[OUT:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<512xi8> to memref<4xf32>
// ARENA:      %[[INIT:.*]] = gpu.alloc () : memref<4xf32>
// ARENA-NEXT: linalg.copy {{.*}}ins(%[[IN]] : memref<4xf32>) outs(%[[INIT]] : memref<4xf32>)
// ARENA-NEXT: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]])
// ARENA:        gpu.dealloc
// ARENA:      linalg.copy {{.*}}ins(%[[R]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// ARENA-NEXT: gpu.dealloc %[[R]]
// ARENA-NOT:  gpu.dealloc
// ARENA:      return
#id1 = affine_map<(d0) -> (d0)>
func.func @loop(%a: memref<4xf32>, %out: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>) -> tensor<4xf32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %init = memref.alloc() : memref<4xf32>
  memref.copy %a, %init : memref<4xf32> to memref<4xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %init) -> (memref<4xf32>) {
    %n = memref.alloc() : memref<4xf32>
    linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%h : memref<4xf32>) outs(%n : memref<4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.addf %x, %x : f32
      linalg.yield %s : f32
    }
    scf.yield %n : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// What a block does not own is copied before it is handed on: a buffer used
// after the loop given as init, a captured buffer yielded.  The iteration
// argument nobody uses is freed at once.

// CHECK-LABEL: func.func @copies(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>, %[[OUT2:.*]]: memref<4xf32>)
// CHECK:      %[[DA:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DA]], %[[A]]
// CHECK-NEXT: %[[DW:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DW]], %[[W]]
// CHECK:      arith.constant 3 : index
// CHECK-NEXT: %[[C:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[DA]] : memref<4xf32>) outs(%[[C]] : memref<4xf32>)
// CHECK-NEXT: %[[R:.*]] = scf.for {{.*}} iter_args(%[[H:.*]] = %[[C]]) -> (memref<4xf32>) {
// CHECK-NEXT:   gpu.dealloc %[[H]] : memref<4xf32>
// CHECK-NEXT:   %[[Y:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:   linalg.copy {{.*}}ins(%[[DW]] : memref<4xf32>) outs(%[[Y]] : memref<4xf32>)
// CHECK-NEXT:   scf.yield %[[Y]] : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.dealloc %[[DW]]
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[R]] : memref<4xf32>)
// CHECK-NEXT: gpu.dealloc %[[R]]
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[DA]] : memref<4xf32>)
// CHECK-NEXT: gpu.dealloc %[[DA]]
func.func @copies(%a: memref<4xf32>, %w: memref<4xf32>, %out: memref<4xf32>, %out2: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %a) -> (memref<4xf32>) {
    scf.yield %w : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  memref.copy %a, %out2 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Carried buffers that change places are handed on as they are; one buffer
// yielded twice is copied for its second place, and the buffer no longer
// carried is freed.

// CHECK-LABEL: func.func @swap(
// CHECK:      scf.for {{.*}} iter_args(%[[P:.*]] = %{{.*}}, %[[Q:.*]] = %{{.*}}) -> (memref<4xf32>, memref<4xf32>) {
// CHECK-NEXT:   scf.yield %[[Q]], %[[P]] : memref<4xf32>, memref<4xf32>
// CHECK:      scf.for {{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[T:.*]] = %{{.*}}) -> (memref<4xf32>, memref<4xf32>) {
// CHECK-NEXT:   gpu.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:   %[[S2:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:   linalg.copy {{.*}}ins(%[[S]] : memref<4xf32>) outs(%[[S2]] : memref<4xf32>)
// CHECK-NEXT:   scf.yield %[[S]], %[[S2]] : memref<4xf32>, memref<4xf32>
func.func @swap(%a: memref<4xf32>, %out: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>) -> tensor<4xf32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc() : memref<4xf32>
  memref.copy %a, %x : memref<4xf32> to memref<4xf32>
  %y = memref.alloc() : memref<4xf32>
  memref.copy %a, %y : memref<4xf32> to memref<4xf32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%p = %x, %q = %y)
      -> (memref<4xf32>, memref<4xf32>) {
    scf.yield %q, %p : memref<4xf32>, memref<4xf32>
  }
  %s:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%u = %r#0, %v = %r#1)
      -> (memref<4xf32>, memref<4xf32>) {
    scf.yield %u, %u : memref<4xf32>, memref<4xf32>
  }
  memref.copy %s#1, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// scf.if: a branch hands on the buffer it made; a buffer from outside that
// the scf.if is the last use of goes to every branch: the one that yields it
// hands it on, the others free it (no copy).

// CHECK-LABEL: func.func @branch(
// CHECK:      %[[DA:.*]] = gpu.alloc () : memref<4xf32>
// CHECK:      %[[R:.*]] = scf.if %{{.*}} -> (memref<4xf32>) {
// CHECK-NEXT:   %[[N:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:   linalg.copy {{.*}}ins(%[[DA]] : memref<4xf32>) outs(%[[N]] : memref<4xf32>)
// CHECK-NEXT:   gpu.dealloc %[[DA]] : memref<4xf32>
// CHECK-NEXT:   scf.yield %[[N]] : memref<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[DA]] : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[R]] : memref<4xf32>)
// CHECK-NEXT: gpu.dealloc %[[R]]
func.func @branch(%a: memref<4xf32>, %out: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>) -> tensor<4xf32>} {
  %t = arith.constant true
  %r = scf.if %t -> (memref<4xf32>) {
    %n = memref.alloc() : memref<4xf32>
    memref.copy %a, %n : memref<4xf32> to memref<4xf32>
    scf.yield %n : memref<4xf32>
  } else {
    scf.yield %a : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// scf.while: scf.condition hands its arguments on (to the after region or
// the results) like scf.yield; the after region frees the buffer it was
// given once it has made the next one.

// CHECK-LABEL: func.func @while(
// CHECK:      %[[R:.*]] = scf.while (%[[H:.*]] = %{{.*}}) : (memref<4xf32>) -> memref<4xf32> {
// CHECK-NEXT:   %[[F:.*]] = arith.constant false
// CHECK-NEXT:   scf.condition(%[[F]]) %[[H]] : memref<4xf32>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[H2:.*]]: memref<4xf32>):
// CHECK-NEXT:   %[[N:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:   linalg.copy {{.*}}ins(%[[H2]] : memref<4xf32>) outs(%[[N]] : memref<4xf32>)
// CHECK-NEXT:   gpu.dealloc %[[H2]] : memref<4xf32>
// CHECK-NEXT:   scf.yield %[[N]] : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[R]] : memref<4xf32>)
// CHECK-NEXT: gpu.dealloc %[[R]]
func.func @while(%a: memref<4xf32>, %out: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>) -> tensor<4xf32>} {
  %init = memref.alloc() : memref<4xf32>
  memref.copy %a, %init : memref<4xf32> to memref<4xf32>
  %r = scf.while (%h = %init) : (memref<4xf32>) -> memref<4xf32> {
    %f = arith.constant false
    scf.condition(%f) %h : memref<4xf32>
  } do {
  ^bb0(%h2: memref<4xf32>):
    %n = memref.alloc() : memref<4xf32>
    memref.copy %h2, %n : memref<4xf32> to memref<4xf32>
    scf.yield %n : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// scf.execute_region and scf.index_switch hand their yields to their results
// like scf.if (here the switch takes over the execute_region's buffer).

// CHECK-LABEL: func.func @regions(
// CHECK:      %[[E:.*]] = scf.execute_region -> memref<4xf32> {
// CHECK-NEXT:   %[[N:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:   linalg.copy
// CHECK-NEXT:   scf.yield %[[N]] : memref<4xf32>
// CHECK:      %[[S:.*]] = scf.index_switch
// CHECK:      default {
// CHECK-NEXT:   scf.yield %[[E]] : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NOT:  gpu.dealloc %[[E]] :
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[S]] : memref<4xf32>)
// CHECK-NEXT: gpu.dealloc %[[S]]
func.func @regions(%a: memref<4xf32>, %out: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>) -> tensor<4xf32>} {
  %c1 = arith.constant 1 : index
  %r = scf.execute_region -> memref<4xf32> {
    %n = memref.alloc() : memref<4xf32>
    memref.copy %a, %n : memref<4xf32> to memref<4xf32>
    scf.yield %n : memref<4xf32>
  }
  %s = scf.index_switch %c1 -> memref<4xf32>
  case 1 {
    %n = memref.alloc() : memref<4xf32>
    memref.copy %r, %n : memref<4xf32> to memref<4xf32>
    scf.yield %n : memref<4xf32>
  }
  default {
    scf.yield %r : memref<4xf32>
  }
  memref.copy %s, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Host bookkeeping stays on the host: the trip-count stack of a checkpointed
// scf.while adjoint (memref<?xindex>) that only host memref.store /
// memref.load use keeps its memref.alloc and is freed with memref.dealloc
// after its last load, which is marked gradir.host_memory; the float data
// goes to the device as usual.

// CHECK-LABEL: func.func @trip_stack(
// CHECK-NOT:  gpu.alloc ({{.*}}) : memref<?xindex>
// CHECK:      %[[S:.*]] = memref.alloc(%{{.*}}) : memref<?xindex>
// CHECK:      scf.for
// CHECK:        memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<?xindex>
// CHECK:      %[[T:.*]] = scf.for
// CHECK:        memref.load %[[S]][%{{.*}}] {gradir.host_memory} : memref<?xindex>
// CHECK:      }
// CHECK-NEXT: memref.dealloc %[[S]] : memref<?xindex>
// CHECK-NOT:  gpu.dealloc %[[S]]
// ARENA-LABEL: func.func @trip_stack(
// ARENA:      memref.alloc(%{{.*}}) : memref<?xindex>
// ARENA:      memref.dealloc %{{.*}} : memref<?xindex>
func.func @trip_stack(%a: memref<4xf32>, %n: index, %out: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>, index) -> tensor<4xf32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %stack = memref.alloc(%n) : memref<?xindex>
  scf.for %i = %c0 to %n step %c1 {
    %k = arith.muli %i, %i : index
    memref.store %k, %stack[%i] : memref<?xindex>
  }
  %t = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %k = memref.load %stack[%i] : memref<?xindex>
    %s = arith.addi %acc, %k : index
    scf.yield %s : index
  }
  %f = arith.index_cast %t : index to i64
  %g = arith.sitofp %f : i64 to f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %z = arith.addf %x, %g : f32
    linalg.yield %z : f32
  }
  return
}

// -----

// A host buffer that a loop carries is owned like a device one: the loop
// frees the previous iteration's buffer (memref.dealloc) and, the init
// buffer being used after the loop, gets a copy of it: a host memref.copy
// into a new memref.alloc, never a kernel.

// CHECK-LABEL: func.func @carried_stack(
// CHECK-NOT:  gpu.alloc
// CHECK:      %[[I:.*]] = memref.alloc() : memref<4xindex>
// CHECK:      %[[C:.*]] = memref.alloc() : memref<4xindex>
// CHECK-NEXT: memref.copy %[[I]], %[[C]] : memref<4xindex> to memref<4xindex>
// CHECK-NEXT: %[[R:.*]] = scf.for {{.*}} iter_args(%[[B:.*]] = %[[C]]) -> (memref<4xindex>) {
// CHECK:        %[[N:.*]] = memref.alloc() : memref<4xindex>
// CHECK-NEXT:   memref.copy %[[B]], %[[N]] : memref<4xindex> to memref<4xindex>
// CHECK-NEXT:   memref.dealloc %[[B]] : memref<4xindex>
// CHECK-NEXT:   memref.store %{{.*}}, %[[N]][%{{.*}}] : memref<4xindex>
// CHECK-NEXT:   scf.yield %[[N]] : memref<4xindex>
// CHECK:      memref.load %[[R]][%{{.*}}] {gradir.host_memory}
// CHECK-NEXT: memref.load %[[I]][%{{.*}}] {gradir.host_memory}
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.dealloc %[[I]] : memref<4xindex>
// CHECK-NEXT: memref.dealloc %[[R]] : memref<4xindex>
// CHECK-NOT:  linalg.copy
// CHECK-NOT:  gpu.dealloc
func.func @carried_stack(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = memref.alloc() : memref<4xindex>
  memref.store %c0, %init[%c0] : memref<4xindex>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %init) -> (memref<4xindex>) {
    %new = memref.alloc() : memref<4xindex>
    memref.copy %b, %new : memref<4xindex> to memref<4xindex>
    memref.store %i, %new[%c0] : memref<4xindex>
    scf.yield %new : memref<4xindex>
  }
  %v = memref.load %r[%c0] : memref<4xindex>
  %u = memref.load %init[%c0] : memref<4xindex>
  %s = arith.addi %v, %u : index
  return %s : index
}

// -----

// An integer buffer that host stores and loads alone use stays host memory
// even when a scalar loaded from it reaches a linalg body (a trip counter
// that selects data): %k keeps its memref.alloc, its load is marked
// gradir.host_memory (the kernel takes the scalar as an argument, never
// reads %k) and %k is freed after the last op using the scalar.  %w, which
// a linalg op writes, is a device buffer.

// CHECK-LABEL: func.func @kernel_reads_index(
// CHECK:      %[[K:.*]] = memref.alloc() : memref<2xindex>
// CHECK-NEXT: memref.store %{{.*}}, %[[K]]
// CHECK-NEXT: %[[V:.*]] = memref.load %[[K]][%{{.*}}] {gradir.host_memory} : memref<2xindex>
// CHECK-NEXT: %[[VI:.*]] = arith.index_cast %[[V]] : index to i32
// CHECK-NEXT: %[[W:.*]] = gpu.alloc () : memref<4xi32>
// CHECK-NOT:  memref.alloc
// CHECK:      linalg.generic
// CHECK:        arith.addi %{{.*}}, %[[VI]] : i32
// CHECK:      gpu.dealloc %[[W]]
// CHECK-NEXT: memref.dealloc %[[K]] : memref<2xindex>
// CHECK-NOT:  gpu.dealloc %[[K]]
func.func @kernel_reads_index(%a: memref<4xf32>, %out: memref<4xf32>)
    attributes {gradir.original_type = (tensor<4xf32>) -> tensor<4xf32>} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : i32
  %k = memref.alloc() : memref<2xindex>
  memref.store %c3, %k[%c0] : memref<2xindex>
  %v = memref.load %k[%c0] : memref<2xindex>
  %vi = arith.index_cast %v : index to i32
  %w = memref.alloc() : memref<4xi32>
  linalg.fill ins(%c7 : i32) outs(%w : memref<4xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a, %w : memref<4xf32>, memref<4xi32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %y: i32, %o: f32):
    %s = arith.addi %y, %vi : i32
    %f = arith.sitofp %s : i32 to f32
    %z = arith.addf %x, %f : f32
    linalg.yield %z : f32
  }
  return
}

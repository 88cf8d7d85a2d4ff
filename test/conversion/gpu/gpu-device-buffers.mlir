// RUN: gradir-opt %s --split-input-file --gpu-device-buffers | FileCheck %s
// RUN: gradir-opt %s --split-input-file --gpu-device-buffers='keep-resident=1' | FileCheck %s --check-prefix=RESIDENT

// Inputs are copied to the device once at entry, the output is computed in a
// device buffer and copied back before return; intermediates become gpu.alloc
// freed after their last use (through views); memref.copy becomes linalg.copy.

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
// CHECK:      linalg.copy {{.*}}ins(%[[V]] : memref<4x3xf32>) outs(%[[DOUT]] : memref<4x3xf32>)
// CHECK-NEXT: gpu.dealloc %[[T]] : memref<12xf32>
// CHECK-NEXT: gpu.memcpy %[[OUT]], %[[DOUT]] : memref<4x3xf32>, memref<4x3xf32>
// CHECK-NEXT: gpu.dealloc %[[DA]]
// CHECK-NEXT: gpu.dealloc %[[DB]]
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
// RESIDENT-NOT:  gpu.dealloc %[[DB]]
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

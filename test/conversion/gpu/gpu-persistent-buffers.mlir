// RUN: gradir-opt %s --gpu-persistent-buffers --canonicalize --cse | FileCheck %s

// Device buffers become views of one arena allocated by the first call; a
// buffer freed before another is allocated shares its bytes.

// CHECK: llvm.mlir.global internal @__gradir_arena_f(0 : i64)
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>)
// CHECK:      %[[G:.*]] = llvm.mlir.addressof @__gradir_arena_f
// CHECK:      scf.if
// CHECK-NEXT:   gpu.alloc () : memref<768xi8>
// CHECK:      %[[ARENA:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<768xi8>
// CHECK:      %[[IN:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<768xi8> to memref<64xf32>
// CHECK-NEXT: gpu.memcpy %[[IN]], %[[X]]
// CHECK-NEXT: %[[T1:.*]] = memref.view %[[ARENA]][%c256{{.*}}][] : memref<768xi8> to memref<64xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.view %[[ARENA]][%c512{{.*}}][] : memref<768xi8> to memref<64xf32>
// CHECK-NEXT: gpu.memcpy %[[T1]], %[[IN]]
// CHECK-NEXT: gpu.memcpy %[[OUT]], %[[T1]]
// t2 reuses t1's bytes (after cse, the very same view)
// CHECK-NEXT: gpu.memcpy %[[T1]], %[[OUT]]
// CHECK-NEXT: gpu.memcpy %[[Y]], %[[T1]]
// CHECK-NOT:  gpu.dealloc
// CHECK:      return
func.func @f(%x: memref<64xf32>, %y: memref<64xf32>) {
  %in = gpu.alloc () : memref<64xf32>
  gpu.memcpy %in, %x : memref<64xf32>, memref<64xf32>
  %t1 = gpu.alloc () : memref<64xf32>
  %out = gpu.alloc () : memref<64xf32>
  gpu.memcpy %t1, %in : memref<64xf32>, memref<64xf32>
  gpu.memcpy %out, %t1 : memref<64xf32>, memref<64xf32>
  gpu.dealloc %t1 : memref<64xf32>
  %t2 = gpu.alloc () : memref<64xf32>
  gpu.memcpy %t2, %out : memref<64xf32>, memref<64xf32>
  gpu.memcpy %y, %t2 : memref<64xf32>, memref<64xf32>
  gpu.dealloc %t2 : memref<64xf32>
  gpu.dealloc %in : memref<64xf32>
  gpu.dealloc %out : memref<64xf32>
  return
}

// RUN: gradir-opt %s --rlx-order-globals --split-input-file | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-order-globals --rlx-order-globals | FileCheck %s
// Bufferization's constants: for each of several hash seeds (and so heap
// layouts) the lowered module is byte-identical.
// RUN: env PYTHONHASHSEED=1 gradir-opt %gradir_src/examples/convnet.mlir --rlx-gradient --rlx-lower-to-llvm='stage=bufferized' -o %t.1
// RUN: env PYTHONHASHSEED=2 gradir-opt %gradir_src/examples/convnet.mlir --rlx-gradient --rlx-lower-to-llvm='stage=bufferized' -o %t.2
// RUN: env PYTHONHASHSEED=3 gradir-opt %gradir_src/examples/convnet.mlir --rlx-gradient --rlx-lower-to-llvm='stage=bufferized' -o %t.3
// RUN: diff %t.1 %t.2
// RUN: diff %t.1 %t.3
// RUN: FileCheck %s --check-prefix=LOWERED < %t.1

// Globals in the order of their first read; unread ones after them, by name;
// the other top-level ops keep their order.
// CHECK-LABEL: module
// CHECK-NEXT: memref.global "private" constant @z_first
// CHECK-NEXT: memref.global "private" constant @a_second
// CHECK-NEXT: memref.global "private" constant @m_unread
// CHECK-NEXT: memref.global "private" constant @n_unread
// CHECK-NEXT: func.func private @ext
// CHECK: func.func @f
// CHECK: memref.get_global @z_first
// CHECK: memref.get_global @a_second
// CHECK: memref.get_global @z_first
module {
  memref.global "private" constant @n_unread : memref<f32> = dense<3.0>
  func.func private @ext(memref<2xf32>)
  memref.global "private" constant @a_second : memref<2xf32> = dense<1.0>
  memref.global "private" constant @m_unread : memref<f32> = dense<2.0>
  func.func @f() -> f32 {
    %c0 = arith.constant 0 : index
    %z = memref.get_global @z_first : memref<2xf32>
    %a = memref.get_global @a_second : memref<2xf32>
    %z2 = memref.get_global @z_first : memref<2xf32>
    func.call @ext(%a) : (memref<2xf32>) -> ()
    func.call @ext(%z2) : (memref<2xf32>) -> ()
    %x = memref.load %z[%c0] : memref<2xf32>
    return %x : f32
  }
  memref.global "private" constant @z_first : memref<2xf32> = dense<0.0>
}

// -----

// Nothing to order: a module without globals is unchanged.
// CHECK-LABEL: module
// CHECK-NEXT: func.func @g
func.func @g(%x: f32) -> f32 {
  return %x : f32
}

// LOWERED: memref.global "private" constant
// LOWERED: func.func @main

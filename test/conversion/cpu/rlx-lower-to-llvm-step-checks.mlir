// RUN: gradir-opt %s --rlx-lower-to-llvm='stage=bufferized opt-level=0 threads=1' | FileCheck %s --check-prefix=BUF
// RUN: gradir-opt %s --rlx-lower-to-llvm='opt-level=0 threads=1' | FileCheck %s --check-prefix=LLVM
// RUN: gradir-opt %s --rlx-lower-to-llvm=threads=1 | FileCheck %s --check-prefix=LLVM
// The CPU pipeline checks a loop step computed at run time
// (conversion/cpu/runtime_checks.py): a step <= 0 calls @gradir_check_fail with
// the loop's location and the step, and the loop runs no trip (its upper
// bound becomes its lower bound, its step 1).  A constant step needs no check
// (rlx-verify refuses one <= 0).  Private functions (the deallocation helper)
// have internal linkage: the parts of a split function, lowered apart, link
// into one library.

func.func @main(%x: tensor<5xf32>, %n: tensor<i64>) -> tensor<f32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %e = tensor.extract %n[] : tensor<i64>
  %s = arith.index_cast %e : i64 to index
  %r = scf.for %i = %c1 to %c9 step %s iter_args(%h = %x) -> (tensor<5xf32>) {
    %m = "rlx.sin"(%h) : (tensor<5xf32>) -> tensor<5xf32>
    scf.yield %m : tensor<5xf32>
  }
  %q = scf.for %i = %c1 to %c9 step %c2 iter_args(%h = %r) -> (tensor<5xf32>) {
    %m = "rlx.exp"(%h) : (tensor<5xf32>) -> tensor<5xf32>
    scf.yield %m : tensor<5xf32>
  }
  %t = "rlx.sum"(%q) : (tensor<5xf32>) -> tensor<f32>
  return %t : tensor<f32>
}

// BUF-LABEL: func.func @main(
// BUF-DAG: %[[C0:.*]] = arith.constant 0 : index
// BUF-DAG: %[[Z:.*]] = arith.constant 0 : i64
// BUF-DAG: %[[C1:.*]] = arith.constant 1 : index
// BUF-DAG: %[[C2:.*]] = arith.constant 2 : index
// BUF-DAG: %[[C9:.*]] = arith.constant 9 : index
// BUF-DAG: %[[MSG:.*]] = llvm.mlir.addressof @gradir_check_message_0 : !llvm.ptr
// BUF: %[[N:.*]] = memref.load
// BUF: %[[S:.*]] = arith.index_cast %[[N]] : i64 to index
// BUF: %[[BAD:.*]] = arith.cmpi sle, %[[N]], %[[Z]] : i64
// BUF-NEXT: scf.if %[[BAD]] {
// BUF-NEXT: llvm.call @gradir_check_fail(%[[MSG]], %[[N]]) : (!llvm.ptr, i64) -> ()
// BUF-NEXT: }
// BUF-NEXT: %[[OK:.*]] = arith.cmpi sgt, %[[S]], %[[C0]] : index
// BUF-NEXT: %[[STEP:.*]] = arith.select %[[OK]], %[[S]], %[[C1]] : index
// BUF-NEXT: %[[UB:.*]] = arith.select %[[OK]], %[[C9]], %[[C1]] : index
// (the loop's carried buffer starts as a copy of %x: the caller's array is read-only)
// BUF: memref.copy %arg0
// BUF-NEXT: scf.for %{{.*}} = %[[C1]] to %[[UB]] step %[[STEP]]
// BUF: scf.for %{{.*}} = %[[C1]] to %[[C9]] step %[[C2]]
// BUF-NOT: llvm.call @gradir_check_fail
// BUF: return
// BUF: llvm.mlir.global weak @gradir_check_hook() {addr_space = 0 : i32} : !llvm.ptr
// BUF: llvm.func @gradir_check_set_hook_{{[0-9a-f]+}}(%[[H:.*]]: !llvm.ptr) {
// BUF-NEXT: %[[A:.*]] = llvm.mlir.addressof @gradir_check_hook : !llvm.ptr
// BUF-NEXT: llvm.store %[[H]], %[[A]] : !llvm.ptr, !llvm.ptr
// BUF: llvm.func internal @gradir_check_fail(%[[M:.*]]: !llvm.ptr, %[[V:.*]]: i64) {
// BUF: %[[HOOK:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// BUF: llvm.call %[[HOOK]](%[[M]], %[[V]]) : !llvm.ptr, (!llvm.ptr, i64) -> ()
// BUF: llvm.mlir.global internal constant @gradir_check_message_0("{{.*}}rlx-lower-to-llvm-step-checks.mlir:18:8: 'scf.for' op step must be positive, got \00")

// LLVM-DAG: llvm.func @_mlir_ciface_main(
// LLVM-DAG: llvm.func @gradir_check_set_hook_{{[0-9a-f]+}}(
// LLVM-DAG: llvm.func internal @gradir_check_fail(
// LLVM-DAG: llvm.func internal @dealloc_helper(
// LLVM-DAG: llvm.func internal @_mlir_ciface_dealloc_helper(

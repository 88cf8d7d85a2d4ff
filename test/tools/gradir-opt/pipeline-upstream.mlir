// An upstream-only pipeline anchored on builtin.module runs on the input
// module itself (not on modules nested in it), as in mlir-opt.
// RUN: gradir-opt %s --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s
// RUN: gradir-opt %s --pass-pipeline='builtin.module(func.func(canonicalize))' | FileCheck %s
// RUN: gradir-opt %s --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @fold
// CHECK-NEXT: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT: return %[[C]]
func.func @fold() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  return %c : i32
}

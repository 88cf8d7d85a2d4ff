// RUN: gradir-opt %s --split-input-file --rlx-dce | FileCheck %s
// Each split is its own module; outputs are separated like mlir-opt's.

// CHECK-LABEL: func.func @first
// CHECK-NOT: rlx.exp
// CHECK: // -----
// CHECK-LABEL: func.func @second
// CHECK: rlx.sin
func.func @first(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

// -----

// The same symbol name in two splits is fine: they are separate modules.
func.func @second(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.sin"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

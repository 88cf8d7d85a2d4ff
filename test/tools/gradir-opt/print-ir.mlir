// RUN: gradir-opt %s --rlx-dce --canonicalize --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s
// RUN: gradir-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: gradir-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUG

// CHECK: IR Dump After rlx-dce
// CHECK-NOT: rlx.exp
// CHECK: IR Dump After Canonicalizer
// GENERIC: "func.return"
// DEBUG: "rlx.exp"(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc([[L:#loc[0-9]+]])
// DEBUG: [[L]] = loc("{{.*}}print-ir.mlir":[[@LINE+2]]:8)
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

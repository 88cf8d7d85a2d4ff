// gradir-opt reads MLIR bytecode (its own --emit-bytecode, mlir-opt's) as
// mlir-opt does: from a file or stdin, with the locations it carries, so
// diagnostics point into the source the bytecode was made from.
// RUN: gradir-opt %s --emit-bytecode -o %t.mlirbc
// RUN: gradir-opt %t.mlirbc | FileCheck %s
// CHECK-LABEL: func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[E:.*]] = "rlx.exp"(%arg0)
// CHECK-NEXT: "rlx.log"(%arg0)
// CHECK-NEXT: return %[[E]]
// RUN: gradir-opt %s --emit-bytecode | gradir-opt --rlx-dce | FileCheck %s --check-prefix=DCE
// DCE: %[[E:.*]] = "rlx.exp"(%arg0)
// DCE-NEXT: return %[[E]]
// RUN: not gradir-opt %t.mlirbc --pass-pipeline='builtin.module(rlx-gradient{func=nope})' 2>&1 | FileCheck %s --check-prefix=LOC
// LOC: bytecode-input.mlir:[[#@LINE+5]]:1: error: rlx-gradient: no function named '@nope' in the module
// Truncated or foreign bytecode is an error naming the input, not a traceback.
// RUN: head -c 20 %t.mlirbc > %t.trunc.mlirbc
// RUN: not gradir-opt %t.trunc.mlirbc 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: trunc.mlirbc: error: could not read MLIR bytecode: attempting to parse {{[0-9]+}} bytes when only {{[0-9]+}} remain
module {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "rlx.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %dead = "rlx.log"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

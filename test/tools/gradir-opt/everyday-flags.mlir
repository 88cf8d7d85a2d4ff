// mlir-opt's everyday flags in gradir-opt (issue 12).
// RUN: gradir-opt %s --rlx-dce --cse --mlir-print-ir-after=rlx-dce 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: gradir-opt %s --rlx-dce --cse --mlir-print-ir-before=cse,rlx-dce 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: gradir-opt %s --pass-pipeline='builtin.module(func.func(cse),rlx-dce)' --mlir-print-ir-after=cse 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED
// RUN: gradir-opt %s --rlx-dce --rlx-dce --mlir-print-ir-after-all --mlir-print-ir-after-change 2>&1 >/dev/null | FileCheck %s --check-prefix=CHANGE
// RUN: not gradir-opt %s --rlx-gradient='func=nope' --mlir-print-ir-after-failure 2>&1 | FileCheck %s --check-prefix=FAILURE
// RUN: gradir-opt %s --rlx-dce --cse --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMING
// RUN: gradir-opt %s --rlx-dce --cse --dump-pass-pipeline 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP
// RUN: gradir-opt %s --mlir-elide-elementsattrs-if-larger=2 | FileCheck %s --check-prefix=ELIDE
// RUN: gradir-opt %s --rlx-dce --verify-each=false --mlir-disable-threading | FileCheck %s --check-prefix=PLAIN
// RUN: gradir-opt %s --rlx-gradient --emit-bytecode -o %t.mlirbc
// RUN: %mlir-opt-gradir %t.mlirbc | FileCheck %s --check-prefix=BYTECODE
// RUN: not gradir-opt %s --mlir-print-ir-after=no-such-pass 2>&1 | FileCheck %s --check-prefix=BADNAME
// RUN: not gradir-opt %s --verify-each=maybe 2>&1 | FileCheck %s --check-prefix=BADBOOL
// RUN: not gradir-opt %s --mlir-elide-elementsattrs-if-larger=x 2>&1 | FileCheck %s --check-prefix=BADINT
// RUN: gradir-opt --help | FileCheck %s --check-prefix=HELP

// AFTER: // -----// IR Dump After rlx-dce (rlx-dce) //----- //
// AFTER-NOT: "rlx.exp"
// AFTER-NOT: IR Dump
// BEFORE: IR Dump Before rlx-dce (rlx-dce)
// BEFORE: "rlx.exp"
// BEFORE: IR Dump Before cse (cse)
// BEFORE-NOT: "rlx.exp"
// NESTED: IR Dump After cse (cse)
// NESTED-NOT: IR Dump
// CHANGE: IR Dump After rlx-dce
// CHANGE-NOT: IR Dump
// FAILURE: IR Dump After rlx-gradient Failed
// FAILURE: error: rlx-gradient: no function named '@nope' in the module
// TIMING: Execution time report
// TIMING: rlx-dce
// TIMING: CSE
// DUMP: builtin.module(rlx-dce,cse)
// ELIDE: arith.constant dense_resource<__elided__> : tensor<3xf32>
// PLAIN-LABEL: func.func @main
// BYTECODE-LABEL: func.func @main_adjoint
// BADNAME: gradir-opt: error: 'no-such-pass' (in --mlir-print-ir-before/after) does not refer to a registered pass
// BADBOOL: gradir-opt: error: option '--verify-each' expects true or false, got 'maybe'
// BADINT: gradir-opt: error: option '--mlir-elide-elementsattrs-if-larger' expects a non-negative integer, got 'x'
// HELP: --mlir-print-ir-after=<pass>
// HELP: upstream MLIR passes
// HELP-DAG: --canonicalize  -  Canonicalize operations
// HELP-DAG: --cse  -  Eliminate common sub-expressions
// HELP-NOT: True
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = "rlx.multiply"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

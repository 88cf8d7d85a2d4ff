// Damaged MLIR bytecode is an error, never a dead tool: MLIR's bytecode reader
// aborts on some damaged files (one byte of the bytecode of
// test/dialects/rlx/ops.mlir changed: an assertion in the type uniquer,
// SIGABRT, exit code 134) and reads others into names that are not UTF-8 (an
// internal error), so the tools read bytecode in a child process.  Found by
// changing random bytes of --emit-bytecode output (121 of 1915 files failed).
// RUN: not gradir-opt %S/Inputs/damaged-abort.mlirbc 2>&1 | FileCheck %s --check-prefix=ABORT
// RUN: not gradir-run %S/Inputs/damaged-abort.mlirbc --random-inputs 0 2>&1 | FileCheck %s --check-prefix=ABORT
// RUN: not gradir-opt %S/Inputs/damaged-name.mlirbc 2>&1 | FileCheck %s --check-prefix=NAME
// Undamaged bytecode still reads, with the source's locations.
// RUN: gradir-opt %s --emit-bytecode -o %t.mlirbc
// RUN: gradir-opt %t.mlirbc --mlir-print-debuginfo | FileCheck %s --check-prefix=GOOD

// ABORT-NOT: Traceback
// ABORT: damaged-abort.mlirbc: error: could not read MLIR bytecode: malformed (MLIR's bytecode reader crashed on it: signal 6
// NAME-NOT: internal error
// NAME: damaged-name.mlirbc: error: could not read MLIR bytecode: malformed
// GOOD: "rlx.permute_dims"(%arg0) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc(#[[LOC:.*]])
// GOOD: #[[LOC]] = loc("{{.*}}damaged-bytecode.mlir":[[@LINE+2]]:8)
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

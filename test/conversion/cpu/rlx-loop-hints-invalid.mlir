// A transform rlx-loop-hints cannot turn off is an option error at the
// option (exit 1), not an internal error.
// RUN: not gradir-opt %s --rlx-loop-hints=disable=unroll,licm 2>&1 | FileCheck %s --check-prefix=LICM
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-loop-hints{disable=unroll disable=vectorize})' 2>&1 | FileCheck %s --check-prefix=TWICE
// LICM: error: option 'disable' of pass 'rlx-loop-hints' expects list<unroll|vectorize>, got 'unroll,licm'
// TWICE: error: option 'disable' of pass 'rlx-loop-hints' is given twice
llvm.func @f() {
  llvm.return
}

// Pipelines mlir-opt would run silently wrong, or that gradir used to accept: an
// anchor that names no op, an op-anchored pipeline at the top level, a module pass
// nested under func.func, malformed lists and repeated options.  One located error,
// exit code 1, no output.
// RUN: not gradir-opt %s --pass-pipeline='builtin.modul(rlx-gradient{func=main})' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not gradir-opt %s --pass-pipeline='builtin.modul(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR-UP
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(func.fun(rlx-dce))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(func.fun(cse))' 2>&1 | FileCheck %s --check-prefix=NESTED-UP
// RUN: not gradir-opt %s --pass-pipeline='func.func(rlx-dce)' 2>&1 | FileCheck %s --check-prefix=LEVEL
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce),builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(func.func(rlx-gradient))' 2>&1 | FileCheck %s --check-prefix=MODULE-PASS
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(func.func(rlx-lower-to-llvm))' 2>&1 | FileCheck %s --check-prefix=MODULE-PASS2
// RUN: not gradir-opt %s --rlx-gradient='wrt=0,,1' 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not gradir-opt %s --rlx-gradient='wrt=0,' 2>&1 | FileCheck %s --check-prefix=LIST-END
// RUN: not gradir-opt %s --rlx-gradient='wrt=0 wrt=1' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(canonicalize{max-iterations=1 max-iterations=2})' 2>&1 | FileCheck %s --check-prefix=TWICE-UP
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce,,cse)' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce,)' 2>&1 | FileCheck %s --check-prefix=TRAILING
// RUN: not gradir-opt %s --rlx-lower-to-llvm='stage=bogus' 2>&1 | FileCheck %s --check-prefix=ENUM
// RUN: not gradir-opt %s --rlx-lower-to-llvm='opt-level=7' 2>&1 | FileCheck %s --check-prefix=RANGE
// The accepted forms, for contrast: a bare list runs on the module; any(...) is the module.
// RUN: gradir-opt %s --pass-pipeline='rlx-dce,cse' | FileCheck %s --check-prefix=OK
// RUN: gradir-opt %s --pass-pipeline='any(rlx-dce,func.func(rlx-dce))' | FileCheck %s --check-prefix=OK

// ANCHOR: <pass-pipeline>:1:1: error: can't run 'builtin.modul' pass manager on 'builtin.module' op
// ANCHOR-UP: <pass-pipeline>:1:1: error: can't run 'builtin.modul' pass manager on 'builtin.module' op
// NESTED: <pass-pipeline>:1:16: error: 'func.fun' does not name a registered operation, so the pipeline nested under it would never run
// NESTED-UP: <pass-pipeline>:1:16: error: 'func.fun' does not name a registered operation
// LEVEL: <pass-pipeline>:1:1: error: can't run 'func.func' pass manager on 'builtin.module' op
// TWO: <pass-pipeline>:1:1: error: 'builtin.module(...)' must be the whole pipeline
// MODULE-PASS: <pass-pipeline>:1:26: error: 'rlx-gradient' runs on 'builtin.module' (it needs the whole module), not on each 'func.func': put it at the top level of the pipeline, outside 'func.func(...)'
// MODULE-PASS2: <pass-pipeline>:1:26: error: 'rlx-lower-to-llvm' runs on 'builtin.module'
// LIST: <pass-pipeline>:1:16: error: option 'wrt' of pass 'rlx-gradient' expects list<int>, got '0,,1'
// LIST-END: <pass-pipeline>:1:16: error: option 'wrt' of pass 'rlx-gradient' expects list<int>, got '0,'
// TWICE: <pass-pipeline>:1:16: error: option 'wrt' of pass 'rlx-gradient' is given twice
// TWICE-UP: <pass-pipeline>:1:16: error: option 'max-iterations' of pass 'canonicalize' is given twice
// EMPTY: <pass-pipeline>:1:24: error: expected a pass name, found ','
// TRAILING: <pass-pipeline>:1:24: error: expected a pass name, found ')'
// ENUM: <pass-pipeline>:1:16: error: option 'stage' of pass 'rlx-lower-to-llvm' must be one of bufferized, llvm, got 'bogus'
// RANGE: <pass-pipeline>:1:16: error: option 'opt-level' of pass 'rlx-lower-to-llvm' must be from 0 to 3, got 7
// CHECK-NOT: Traceback
// OK-LABEL: func.func @main
func.func @main(%a: tensor<2xf32>) -> tensor<f32> {
  %0 = "rlx.sum"(%a) : (tensor<2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

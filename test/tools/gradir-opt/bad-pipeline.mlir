// Bad pipelines, unknown passes, bad options, unknown flags: one located
// error and exit code 1.
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce' 2>&1 | FileCheck %s --check-prefix=UNCLOSED
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce,no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce{bogus=1})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(,)' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not gradir-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not gradir-opt %s --rlx-dce --pass-pipeline='builtin.module(rlx-dce)' 2>&1 | FileCheck %s --check-prefix=BOTH

// UNCLOSED: <pass-pipeline>:1:{{[0-9]+}}: error: expected ')' to close 'builtin.module('
// UNKNOWN: <pass-pipeline>:1:24: error: 'no-such-pass' does not refer to a registered pass or pass pipeline
// OPTION: <pass-pipeline>:1:16: error: no such option 'bogus' for pass 'rlx-dce'
// EMPTY: <pass-pipeline>:1:16: error: expected a pass name, found ','
// FLAG: gradir-opt: error: unknown command line argument '--no-such-flag'
// BOTH: gradir-opt: error: '--pass-pipeline' cannot be used with individual pass options
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}

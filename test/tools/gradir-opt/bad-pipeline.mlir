// Bad pipelines, unknown passes, bad options, unknown flags: one located
// error and exit code 1.
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce' 2>&1 | FileCheck %s --check-prefix=UNCLOSED
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce,no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-dce{bogus=1})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(,)' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not gradir-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not gradir-opt %s --rlx-dce --pass-pipeline='builtin.module(rlx-dce)' 2>&1 | FileCheck %s --check-prefix=BOTH
// A pipeline in an upstream pass's option (the inliner ignored one it could not parse: exit 0, -o written):
// RUN: rm -f %t.out && not gradir-opt %s --pass-pipeline='builtin.module(inline{default-pipeline=bogus-pass})' -o %t.out 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not test -e %t.out
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(inline{op-pipelines=func.func(bogus)})' 2>&1 | FileCheck %s --check-prefix=OPPIPE
// RUN: gradir-opt %s --pass-pipeline='builtin.module(inline{default-pipeline=canonicalize})'

// UNCLOSED: <pass-pipeline>:1:{{[0-9]+}}: error: expected ')' to close 'builtin.module('
// UNKNOWN: <pass-pipeline>:1:24: error: 'no-such-pass' does not refer to a registered pass or pass pipeline
// OPTION: <pass-pipeline>:1:16: error: no such option 'bogus' for pass 'rlx-dce'
// EMPTY: <pass-pipeline>:1:16: error: expected a pass name, found ','
// FLAG: gradir-opt: error: unknown command line argument '--no-such-flag'
// BOTH: gradir-opt: error: '--pass-pipeline' cannot be used with individual pass options
// NESTED: <pass-pipeline>:1:16: error: option 'default-pipeline' of pass 'inline': 'bogus-pass' does not refer to a registered pass or pass pipeline
// OPPIPE: <pass-pipeline>:1:16: error: option 'op-pipelines' of pass 'inline': 'bogus' does not refer to a registered pass or pass pipeline
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}

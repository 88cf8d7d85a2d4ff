// -o is never written (not even truncated) when the run fails.
// RUN: rm -f %t && not gradir-opt %s --pass-pipeline='builtin.module(no-such-pass)' -o %t
// RUN: not test -e %t
// RUN: echo keep > %t && not gradir-opt %s --pass-pipeline='builtin.module(no-such-pass)' -o %t
// RUN: FileCheck %s --check-prefix=KEEP --input-file=%t
// KEEP: keep
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}

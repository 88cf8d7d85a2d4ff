// gradir passes and upstream passes mix, in one pipeline string or as flags.
// RUN: gradir-opt %s --pass-pipeline='builtin.module(rlx-cse,canonicalize,func.func(rlx-dce,cse),symbol-dce)' | FileCheck %s
// RUN: gradir-opt %s --rlx-cse --canonicalize --rlx-dce --symbol-dce | FileCheck %s
// RUN: gradir-opt %s --pass-pipeline='rlx-cse, rlx-dce' | FileCheck %s --check-prefix=BARE

// CHECK-NOT: @unused_private
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[E:.*]] = "rlx.exp"
// CHECK-NEXT: %[[S:.*]] = "rlx.add"(%[[E]], %[[E]])
// CHECK-NEXT: return %[[S]]
// BARE-LABEL: func.func @main
// BARE-COUNT-1: "rlx.exp"
// BARE-NOT: "rlx.exp"
func.func private @unused_private(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "rlx.add"(%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "rlx.log"(%2) : (tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}

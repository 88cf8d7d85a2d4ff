// RUN: gradir-opt %s --rlx-dce | FileCheck %s
// RUN: gradir-opt %s --pass-pipeline='builtin.module(func.func(rlx-dce))' | FileCheck %s

// A dead chain disappears entirely; live ops and the return stay.
// CHECK-LABEL: func.func @dead_chain
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[E:.*]] = "rlx.exp"(%[[A]])
// CHECK-NEXT: return %[[E]]
func.func @dead_chain(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "rlx.sin"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "rlx.add"(%1, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "rlx.tanh"(%2) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Unused constants and grad markers are pure too.
// CHECK-LABEL: func.func @constants_and_markers
// CHECK-NOT: arith.constant
// CHECK-NOT: grad.
// CHECK: return
func.func @constants_and_markers(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<1.0> : tensor<2xf32>
  %m = "grad.start_checkpoint"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %n = "grad.no_grad"(%m) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

// Multi-result ops go only when no result is used.
// CHECK-LABEL: func.func @multi_result
// CHECK: "rlx.split"
// CHECK-NOT: rlx.relu
func.func @multi_result(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0:2 = "rlx.split"(%a) {sections = 2 : i64, axis = array<i64: 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %1 = "rlx.relu"(%0#0) : (tensor<2xf32>) -> tensor<2xf32>
  return %0#1 : tensor<2xf32>
}

// Ops of other dialects are left alone (upstream DCE knows their effects).
// CHECK-LABEL: func.func @other_dialects
// CHECK: call @dead_chain
func.func @other_dialects(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @dead_chain(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

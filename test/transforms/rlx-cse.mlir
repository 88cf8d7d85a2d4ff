// RUN: gradir-opt %s --rlx-cse | FileCheck %s
// RUN: gradir-opt %s --rlx-cse | gradir-opt --rlx-cse | FileCheck %s

// Identical ops merge; the chain built on them merges too.
// CHECK-LABEL: func.func @merge
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[E:.*]] = "rlx.exp"(%[[A]])
// CHECK-NEXT: %[[S:.*]] = "rlx.add"(%[[E]], %[[E]])
// CHECK-NEXT: %[[M:.*]] = "rlx.multiply"(%[[S]], %[[S]])
// CHECK-NEXT: return %[[M]]
func.func @merge(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "rlx.add"(%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "rlx.add"(%1, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %4 = "rlx.add"(%0, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %5 = "rlx.multiply"(%2, %4) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %5 : tensor<2xf32>
}

// Different attributes or operand order: no merge.
// CHECK-LABEL: func.func @no_merge
// CHECK: "rlx.sum"(%{{.*}}) {axis = array<i64: 0>}
// CHECK: "rlx.sum"(%{{.*}}) {axis = array<i64: 1>}
// CHECK: "rlx.subtract"(%[[X:[0-9]+]], %[[Y:[0-9]+]])
// CHECK: "rlx.subtract"(%[[Y]], %[[X]])
func.func @no_merge(%a: tensor<2x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0 = "rlx.sum"(%a) {axis = array<i64: 0>} : (tensor<2x2xf32>) -> tensor<2xf32>
  %1 = "rlx.sum"(%a) {axis = array<i64: 1>} : (tensor<2x2xf32>) -> tensor<2xf32>
  %2 = "rlx.subtract"(%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "rlx.subtract"(%1, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// Constants merge within a function, never across functions; grad markers
// are never merged.
// CHECK-LABEL: func.func @consts_a
// CHECK: arith.constant
// CHECK-NOT: arith.constant
// CHECK: "grad.start_checkpoint"
// CHECK: "grad.start_checkpoint"
// CHECK-LABEL: func.func @consts_b
// CHECK: arith.constant
func.func @consts_a(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c0 = arith.constant dense<2.0> : tensor<2xf32>
  %c1 = arith.constant dense<2.0> : tensor<2xf32>
  %0 = "rlx.multiply"(%a, %c0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "rlx.multiply"(%a, %c1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "grad.start_checkpoint"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %3 = "grad.start_checkpoint"(%1) : (tensor<2xf32>) -> tensor<2xf32>
  return %2, %3 : tensor<2xf32>, tensor<2xf32>
}
func.func @consts_b(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant dense<2.0> : tensor<2xf32>
  %0 = "rlx.multiply"(%a, %c0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient | FileCheck %s --check-prefix=SIMPLIFY
// Adjoints of a scalar target (the seed is rlx.ones) before (CHECK) and
// after (SIMPLIFY) rlx-simplify-gradient: the seed's ones fold into their
// consumers.

// mean's VJP: ones * (1/N) broadcast, times the other factor.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<4x3xf32>)
// CHECK: %[[ONE:.*]] = "rlx.ones"() : () -> tensor<f32>
// CHECK-NEXT: %[[N:.*]] = arith.constant dense<0.0833{{[0-9]*}}> : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = "rlx.multiply"(%[[ONE]], %[[N]])
// CHECK-NEXT: %[[B:.*]] = "rlx.broadcast_to"(%[[S]]) : (tensor<f32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[GX:.*]] = "rlx.multiply"(%[[B]], %[[W]])
// CHECK-NEXT: %[[GW:.*]] = "rlx.multiply"(%[[B]], %[[X]])
// CHECK-NEXT: return %{{.*}}, %[[GX]], %[[GW]]
// SIMPLIFY-LABEL: func.func @main_adjoint(
// SIMPLIFY-SAME: %[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<4x3xf32>)
// SIMPLIFY: %[[N:.*]] = arith.constant dense<0.0833{{[0-9]*}}> : tensor<f32>
// SIMPLIFY-NEXT: %[[GX:.*]] = "rlx.multiply"(%[[N]], %[[W]]) : (tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// SIMPLIFY-NEXT: %[[GW:.*]] = "rlx.multiply"(%[[N]], %[[X]]) : (tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// SIMPLIFY-NEXT: return %{{.*}}, %[[GX]], %[[GW]]
func.func @main(%x: tensor<4x3xf32>, %w: tensor<4x3xf32>) -> tensor<f32> {
  %0 = "rlx.multiply"(%x, %w) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = "rlx.mean"(%0) : (tensor<4x3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// sum's VJP broadcasts the seed; tanh's multiplies by it: the multiply by
// ones goes, the bias gradient sums 1 - y^2 directly.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK: %[[ONE:.*]] = "rlx.ones"() : () -> tensor<f32>
// CHECK-NEXT: %[[G:.*]] = "rlx.broadcast_to"(%[[ONE]])
// CHECK: %[[D:.*]] = "rlx.subtract"
// CHECK-NEXT: %[[GX:.*]] = "rlx.multiply"(%[[G]], %[[D]])
// CHECK-NEXT: %[[GB:.*]] = "rlx.collapse_sum_to"(%[[GX]])
// CHECK-NEXT: return %{{.*}}, %[[GX]], %[[GB]]
// SIMPLIFY-LABEL: func.func @main_adjoint(
// SIMPLIFY-NOT: rlx.ones
// SIMPLIFY-NOT: rlx.broadcast_to
// SIMPLIFY: %[[D:.*]] = "rlx.subtract"
// SIMPLIFY-NEXT: %[[GB:.*]] = "rlx.collapse_sum_to"(%[[D]]) : (tensor<4x3xf32>) -> tensor<3xf32>
// SIMPLIFY-NEXT: return %{{.*}}, %[[D]], %[[GB]]
func.func @main(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.add"(%x, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = "rlx.tanh"(%0) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = "rlx.sum"(%1) : (tensor<4x3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// The gradients of sum(x + b) are constants: ones, and the batch size.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK: %[[ONE:.*]] = "rlx.ones"() : () -> tensor<f32>
// CHECK-NEXT: %[[G:.*]] = "rlx.broadcast_to"(%[[ONE]]) : (tensor<f32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[GB:.*]] = "rlx.collapse_sum_to"(%[[G]]) : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %{{.*}}, %[[G]], %[[GB]]
// SIMPLIFY-LABEL: func.func @main_adjoint(
// SIMPLIFY: %[[G:.*]] = "rlx.ones"() : () -> tensor<4x3xf32>
// SIMPLIFY-NEXT: %[[GB:.*]] = arith.constant dense<4.000000e+00> : tensor<3xf32>
// SIMPLIFY-NEXT: return %{{.*}}, %[[G]], %[[GB]]
func.func @main(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.add"(%x, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = "rlx.sum"(%0) : (tensor<4x3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

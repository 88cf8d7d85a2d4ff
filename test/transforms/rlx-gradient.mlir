// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient | FileCheck %s --check-prefix=SIMPLIFY
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=vjp' | FileCheck %s --check-prefix=VJP
// RUN: gradir-opt %s --split-input-file --rlx-gradient='split=true' | FileCheck %s --check-prefix=SPLIT
// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | gradir-opt --split-input-file --rlx-verify | FileCheck %s

// The seed example (TVM Relax's Gradient test): @main is left untouched and
// @main_adjoint returns the loss and both gradients; the backward walks the
// bindings in reverse.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT: "rlx.permute_dims"
// CHECK-NEXT: "rlx.permute_dims"
// CHECK-NEXT: "rlx.matmul"
// CHECK-NEXT: "rlx.sum"
// CHECK-NEXT: return
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[X:.*]]: tensor<3x3xf32>, %[[Y:.*]]: tensor<3x3xf32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>)
// CHECK: %[[XT:.*]] = "rlx.permute_dims"(%[[X]])
// CHECK: %[[YT:.*]] = "rlx.permute_dims"(%[[Y]])
// CHECK: %[[MM:.*]] = "rlx.matmul"(%[[XT]], %[[YT]])
// CHECK: %[[LOSS:.*]] = "rlx.sum"(%[[MM]])
// CHECK: %[[SEED:.*]] = "rlx.ones"() : () -> tensor<f32>
// CHECK: %[[G:.*]] = "rlx.broadcast_to"
// CHECK-SAME: -> tensor<3x3xf32>
// CHECK: "rlx.matmul"(%[[G]],
// CHECK: "rlx.matmul"({{.*}}, %[[G]])
// CHECK: return %[[LOSS]], %{{.*}}, %{{.*}} : tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>

// Simplified (rlx-gradient's default): no GEMM and no transpose is left.
// The loss sum(x^T y^T) is the dot product of x's row sums and y's column
// sums; the gradients, matmuls with the all-ones adjoint, are those sums
// broadcast: grad_x[i, j] = colsum(y)[i], grad_y[i, j] = rowsum(x)[j].
// SIMPLIFY-LABEL: func.func @main_adjoint(
// SIMPLIFY-SAME: %[[X:.*]]: tensor<3x3xf32>, %[[Y:.*]]: tensor<3x3xf32>)
// SIMPLIFY-NEXT: %[[RX:.*]] = "rlx.sum"(%[[X]]) {axis = array<i64: -1>} : (tensor<3x3xf32>) -> tensor<3xf32>
// SIMPLIFY-NEXT: %[[CY:.*]] = "rlx.sum"(%[[Y]]) {axis = array<i64: -2>} : (tensor<3x3xf32>) -> tensor<3xf32>
// SIMPLIFY-NEXT: %[[DOT:.*]] = "rlx.multiply"(%[[RX]], %[[CY]])
// SIMPLIFY-NEXT: %[[LOSS:.*]] = "rlx.sum"(%[[DOT]]) : (tensor<3xf32>) -> tensor<f32>
// SIMPLIFY-NEXT: %[[GY:.*]] = "rlx.broadcast_to"(%[[RX]]) : (tensor<3xf32>) -> tensor<3x3xf32>
// SIMPLIFY-NEXT: %[[CY1:.*]] = "rlx.expand_dims"(%[[CY]]) {axis = array<i64: -1>} : (tensor<3xf32>) -> tensor<3x1xf32>
// SIMPLIFY-NEXT: %[[GX:.*]] = "rlx.broadcast_to"(%[[CY1]]) : (tensor<3x1xf32>) -> tensor<3x3xf32>
// SIMPLIFY-NEXT: return %[[LOSS]], %[[GX]], %[[GY]]

// VJP-LABEL: func.func @main_vjp(
// VJP-SAME: %{{.*}}: tensor<3x3xf32>, %{{.*}}: tensor<3x3xf32>, %[[COT:.*]]: tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>)
// VJP-NOT: rlx.ones
// VJP: "rlx.{{reshape|broadcast_to}}"(%[[COT]])

// SPLIT-LABEL: func.func @main_fwd(
// SPLIT-SAME: -> (tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>)
// SPLIT-NOT: rlx.ones
// SPLIT: return
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-SAME: %{{.*}}: tensor<3x3xf32>, %{{.*}}: tensor<3x3xf32>, %[[COT:.*]]: tensor<f32>) -> (tensor<3x3xf32>, tensor<3x3xf32>)
// SPLIT-NOT: rlx.sum
// SPLIT: "rlx.{{reshape|broadcast_to}}"(%[[COT]])
// SPLIT: return
// SPLIT-NOT: main_vjp
func.func @main(%x: tensor<3x3xf32>, %y: tensor<3x3xf32>) -> tensor<f32> {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = "rlx.permute_dims"(%y) {axes = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = "rlx.matmul"(%0, %1) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %3 = "rlx.sum"(%2) : (tensor<3x3xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}

// -----

// Gradients accumulate over uses; an argument off the path gets zeros; an
// integer argument gets none by default.
// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME: %[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>, %[[I:.*]]: tensor<2xi64>) -> (tensor<f32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: "rlx.add"
// CHECK: %[[Z:.*]] = "rlx.zeros"() : () -> tensor<2xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[Z]] : tensor<f32>, tensor<2xf32>, tensor<2xf32>
// SIMPLIFY-LABEL: func.func @main_adjoint(
// SIMPLIFY-SAME: %[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>, %[[I:.*]]: tensor<2xi64>)
// SIMPLIFY: %[[GA:.*]] = "rlx.add"(%[[A]], %[[A]])
// SIMPLIFY-NEXT: %[[Z:.*]] = "rlx.zeros"() : () -> tensor<2xf32>
// SIMPLIFY-NEXT: return %{{.*}}, %[[GA]], %[[Z]]
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>, %i: tensor<2xi64>) -> tensor<f32> {
  %0 = "rlx.multiply"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "rlx.sum"(%0) : (tensor<2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// RUN: gradir-opt %s --rlx-gradient | FileCheck %s
// A plain func.call is differentiated through its callee (inlined into the
// adjoint); a call carrying grad.vjp uses that function as the callee's VJP.

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-NOT: call @layer
// CHECK: "rlx.tanh"
// CHECK: %[[L:.*]] = call @loss(%[[H:.*]]) {grad.vjp = @loss_vjp}
// CHECK: %[[G:.*]] = call @loss_vjp(%[[H]], %{{.*}}) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK: return %[[L]]
func.func private @layer(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.tanh"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @loss(%x: tensor<2xf32>) -> tensor<f32> {
  %0 = "rlx.sum"(%x) : (tensor<2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @loss_vjp(%x: tensor<2xf32>, %g: tensor<f32>) -> tensor<2xf32> {
  %0 = "rlx.broadcast_to"(%g) : (tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<f32> {
  %0 = func.call @layer(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = func.call @loss(%0) {grad.vjp = @loss_vjp} : (tensor<2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// RUN: gradir-opt %s --split-input-file --rlx-gradient | FileCheck %s
// The mean nll_loss divides by sum(M), the weighted count of kept targets;
// only where it can be 0 (an ignore_index among the classes, or class
// weights) does the gradient guard that division (all targets ignored: zero
// gradients, as in PyTorch).  Without either, every target counts and the
// guard would be dead ops in every classifier's gradient.

// CHECK-LABEL: func.func @main_adjoint
// CHECK-NOT: "rlx.where"
// CHECK: return
func.func @main(%p: tensor<4x5xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %l = "rlx.nll_loss"(%p, %t) : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main_adjoint
// CHECK: "rlx.equal"
// CHECK: "rlx.where"
// CHECK: return
func.func @main(%p: tensor<4x5xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %l = "rlx.nll_loss"(%p, %t) {ignore_index = 2 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

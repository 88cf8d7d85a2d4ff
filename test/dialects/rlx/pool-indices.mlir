// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-verify | FileCheck %s
// rlx.max_pool2d_with_indices and rlx.max_pool2d_indices_backward: what
// rlx-verify accepts (and prints back) and refuses.

// CHECK-LABEL: func.func @ok(
// CHECK: "rlx.max_pool2d_with_indices"(%{{.+}}) {{.+}} : (tensor<2x3x9x9xf32>) -> (tensor<2x3x5x5xf32>, tensor<2x3x5x5xi32>)
// CHECK: "rlx.max_pool2d_indices_backward"(%{{.+}}, %{{.+}}) {{.+}} : (tensor<2x3x5x5xf32>, tensor<2x3x5x5xi32>) -> tensor<2x3x9x9xf32>
func.func @ok(%x: tensor<2x3x9x9xf32>, %g: tensor<2x3x5x5xf32>) -> tensor<2x3x9x9xf32> {
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x9x9xf32>) -> (tensor<2x3x5x5xf32>, tensor<2x3x5x5xi32>)
  %dx = "rlx.max_pool2d_indices_backward"(%g, %y#1) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x5x5xf32>, tensor<2x3x5x5xi32>) -> tensor<2x3x9x9xf32>
  return %dx : tensor<2x3x9x9xf32>
}

// -----

func.func @index_type(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d_with_indices' op result #1 type tensor<1x1x2x2xi64> does not match inferred tensor<1x1x2x2xi32>}}
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return
}

// -----

func.func @pooled_shape(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d_with_indices' op result #0 type tensor<1x1x3x3xf32> does not match inferred tensor<1x1x2x2xf32>}}
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x2x2xi32>)
  return
}

// -----

func.func @indices_shape(%g: tensor<1x1x2x2xf32>, %i: tensor<1x1x3x3xi32>) {
  // expected-error @+1 {{'rlx.max_pool2d_indices_backward' op indices has shape (1, 1, 3, 3), expected the pooled shape (1, 1, 2, 2) of the result}}
  %dx = "rlx.max_pool2d_indices_backward"(%g, %i) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xi32>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @indices_elt(%g: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d_indices_backward' op indices element type must be one of i32, got f32}}
  %dx = "rlx.max_pool2d_indices_backward"(%g, %i) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @result_elt(%g: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi32>) {
  // expected-error @+1 {{'rlx.max_pool2d_indices_backward' op output_grad and result must have the same element type, got f32 and f64}}
  %dx = "rlx.max_pool2d_indices_backward"(%g, %i) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>) -> tensor<1x1x4x4xf64>
  return
}

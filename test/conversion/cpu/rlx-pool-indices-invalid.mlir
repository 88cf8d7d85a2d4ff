// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-pool-indices
// RUN: not gradir-opt %s --rlx-pool-indices=undo=maybe 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: option 'undo' of pass 'rlx-pool-indices' expects bool

// Refused: a backward reading the positions of a pool with other options.
func.func @mismatch(%x: tensor<1x1x8x8xf32>, %g: tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32> {
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x1x8x8xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xi32>)
  // expected-error @+1 {{'rlx.max_pool2d_indices_backward' op reads the positions of a 'rlx.max_pool2d_with_indices' with other options (pool_size (2, 2) against (3, 3), padding (0, 0, 0, 0) against (1, 1, 1, 1))}}
  %dx = "rlx.max_pool2d_indices_backward"(%g, %y#1) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xi32>) -> tensor<1x1x8x8xf32>
  return %dx : tensor<1x1x8x8xf32>
}

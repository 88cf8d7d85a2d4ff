// RUN: gradir-opt %s --split-input-file --rlx-pool-indices | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-pool-indices=all-windows=true | FileCheck %s --check-prefix=ALL
// RUN: gradir-opt %s --split-input-file --rlx-pool-indices=overlapping=true | FileCheck %s --check-prefix=OVER
// RUN: gradir-opt %s --split-input-file --rlx-pool-indices --rlx-pool-indices=undo=true | FileCheck %s --check-prefix=UNDO
// RUN: gradir-opt %s --split-input-file --rlx-pool-indices --rlx-verify | gradir-opt --split-input-file --rlx-verify > /dev/null

// rlx-pool-indices: a max pool and its backward of the same input, with the
// same options, share the forward's arg-max positions (an rlx value: a cut
// of the function passes them on).  By default only the pools the CPU's
// pooling kernels take; all-windows: every pool; overlapping=true: only
// pools whose windows overlap (the cut's choice).  undo=true turns the pairs
// whose positions stay in their function back.

// CHECK-LABEL: func.func @pool2x2(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x8x8xf32>, %[[G:[^:]+]]: tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[Y:.+]]:2 = "rlx.max_pool2d_with_indices"(%[[X]]) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>)
// CHECK-NEXT: %[[R:.+]] = "rlx.relu"(%[[Y]]#0)
// CHECK-NEXT: %[[DX:.+]] = "rlx.max_pool2d_indices_backward"(%[[G]], %[[Y]]#1) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>) -> tensor<2x3x8x8xf32>
// CHECK-NEXT: return %[[R]], %[[DX]]
// UNDO-LABEL: func.func @pool2x2(
// UNDO-NEXT: "rlx.max_pool2d"(%{{.+}}) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
// UNDO-NEXT: "rlx.relu"
// UNDO-NEXT: "rlx.max_pool2d_backward"(%{{.+}}, %{{.+}}) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
// UNDO-NOT: indices
// OVER-LABEL: func.func @pool2x2(
// OVER-NEXT: "rlx.max_pool2d"(%{{.+}}) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
// OVER-NOT: indices
// OVER: return
func.func @pool2x2(%x: tensor<2x3x8x8xf32>, %g: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) {
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %r = "rlx.relu"(%y) : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %dx = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  return %r, %dx : tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>
}

// -----

// ResNet's stem pool (3x3, stride 2, padding 1), f64, two backwards of it.
// CHECK-LABEL: func.func @stem(
// CHECK: %[[Y:.+]]:2 = "rlx.max_pool2d_with_indices"(%{{.+}}) {{.+}} -> (tensor<1x2x4x4xf64>, tensor<1x2x4x4xi32>)
// CHECK: "rlx.max_pool2d_indices_backward"(%{{.+}}, %[[Y]]#1)
// CHECK: "rlx.max_pool2d_indices_backward"(%{{.+}}, %[[Y]]#1)
// CHECK-NOT: "rlx.max_pool2d
// OVER-LABEL: func.func @stem(
// OVER: %[[Y:.+]]:2 = "rlx.max_pool2d_with_indices"(%{{.+}}) {{.+}} -> (tensor<1x2x4x4xf64>, tensor<1x2x4x4xi32>)
// OVER-COUNT-2: "rlx.max_pool2d_indices_backward"(%{{.+}}, %[[Y]]#1)
// OVER-NOT: "rlx.max_pool2d
// OVER: return
func.func @stem(%x: tensor<1x2x8x8xf64>, %g: tensor<1x2x4x4xf64>) -> (tensor<1x2x4x4xf64>, tensor<1x2x8x8xf64>, tensor<1x2x8x8xf64>) {
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf64>) -> tensor<1x2x4x4xf64>
  %a = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x2x4x4xf64>, tensor<1x2x8x8xf64>) -> tensor<1x2x8x8xf64>
  %b = "rlx.max_pool2d_backward"(%y, %x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf64>, tensor<1x2x8x8xf64>) -> tensor<1x2x8x8xf64>
  return %y, %a, %b : tensor<1x2x4x4xf64>, tensor<1x2x8x8xf64>, tensor<1x2x8x8xf64>
}

// -----

// Left alone: other options, another input, a backward before the forward,
// and (by default) a pool the kernels do not take; all-windows pairs that one.
// CHECK-LABEL: func.func @unpaired(
// CHECK-NOT: indices
// CHECK: return
// ALL-LABEL: func.func @unpaired(
// ALL: "rlx.max_pool2d_backward"(%{{.+}}, %{{.+}}) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
// ALL: "rlx.max_pool2d"(%{{.+}}) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
// ALL: "rlx.max_pool2d_backward"(%{{.+}}, %{{.+}}) {pool_size = array<i64: 2, 2>, strides = array<i64: 1, 1>}
// ALL: "rlx.max_pool2d_backward"(%{{.+}}, %{{.+}}) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
// ALL: %[[S:.+]]:2 = "rlx.max_pool2d_with_indices"(%{{.+}}) {pool_size = array<i64: 3, 3>}
// ALL: "rlx.max_pool2d_indices_backward"(%{{.+}}, %[[S]]#1) {pool_size = array<i64: 3, 3>}
func.func @unpaired(%x: tensor<1x1x8x8xf32>, %z: tensor<1x1x8x8xf32>, %g: tensor<1x1x4x4xf32>, %h: tensor<1x1x7x7xf32>, %k: tensor<1x1x6x6xf32>)
    -> (tensor<1x1x8x8xf32>, tensor<1x1x4x4xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x6x6xf32>, tensor<1x1x8x8xf32>) {
  %early = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
  %other = "rlx.max_pool2d_backward"(%h, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x1x7x7xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %input = "rlx.max_pool2d_backward"(%g, %z) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %s = "rlx.max_pool2d"(%x) {pool_size = array<i64: 3, 3>} : (tensor<1x1x8x8xf32>) -> tensor<1x1x6x6xf32>
  %sb = "rlx.max_pool2d_backward"(%k, %x) {pool_size = array<i64: 3, 3>} : (tensor<1x1x6x6xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  return %early, %y, %other, %input, %s, %sb : tensor<1x1x8x8xf32>, tensor<1x1x4x4xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x6x6xf32>, tensor<1x1x8x8xf32>
}

// -----

// A backward nested in a loop after the forward reads its positions; undo
// keeps positions a function returns (a part of a cut function passing
// them on).
// CHECK-LABEL: func.func @loop(
// CHECK: %[[Y:.+]]:2 = "rlx.max_pool2d_with_indices"
// CHECK: scf.for
// CHECK: "rlx.max_pool2d_indices_backward"(%{{.+}}, %[[Y]]#1)
// UNDO-LABEL: func.func @loop(
// UNDO-NOT: indices
// UNDO: return
// UNDO-LABEL: func.func @part0(
// UNDO: "rlx.max_pool2d_with_indices"
// UNDO: return
func.func @loop(%x: tensor<1x1x4x4xf32>, %g: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %x) -> (tensor<1x1x4x4xf32>) {
    %d = "rlx.max_pool2d_backward"(%y, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    %n = "rlx.add"(%acc, %d) : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    scf.yield %n : tensor<1x1x4x4xf32>
  }
  return %r : tensor<1x1x4x4xf32>
}
func.func @part0(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>) {
  %y:2 = "rlx.max_pool2d_with_indices"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>)
  return %y#0, %y#1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>
}

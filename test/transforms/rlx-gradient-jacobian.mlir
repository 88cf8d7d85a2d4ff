// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=jacobian' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=jacobian jacobian-mode=reverse' | FileCheck %s --check-prefix=REV
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=jacobian jacobian-mode=forward' | FileCheck %s --check-prefix=FWD
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=hvp' | FileCheck %s --check-prefix=HVP
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=hessian' | FileCheck %s --check-prefix=HESS
// mode=jacobian: one batched sweep over an identity built from two iotas
// (forward columns: the basis of the wrt elements goes through the forward
// sweep; reverse rows: the basis of the result elements goes through the
// forward sweep of the VJP w.r.t. its cotangent).  mode=hvp: forward over
// reverse; mode=hessian: forward columns of the adjoint's gradients.

// auto: 3 result elements against 9 wrt elements, reverse rows.
// CHECK-LABEL: func.func @main_jacobian(
// CHECK-SAME:      %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3x2xf32>)
// CHECK-SAME:      -> (tensor<f32>, tensor<2xf32>, tensor<3xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3x2xf32>)
// CHECK:         %[[IOTA:.*]] = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK:         %[[COL:.*]] = "rlx.reshape"(%[[IOTA]]) : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK:         %[[EQ:.*]] = "rlx.equal"(%[[COL]], %[[IOTA]])
// CHECK:         %[[EYE:.*]] = "rlx.astype"(%[[EQ]]) : (tensor<3x3xi1>) -> tensor<3x3xf32>
// CHECK-NOT:     scf.for
// CHECK:         return

// FWD-LABEL: func.func @main_jacobian(
// FWD:           "rlx.astype"({{.*}}) : (tensor<9x9xi1>) -> tensor<9x9xf32>
// FWD:           "rlx.strided_slice"
// FWD:           return

// REV-LABEL: func.func @main_jacobian(
// REV-SAME:      -> (tensor<f32>, tensor<2xf32>, tensor<3xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3x2xf32>)
// REV:           "rlx.astype"({{.*}}) : (tensor<3x3xi1>) -> tensor<3x3xf32>
// REV:           return

// HVP-LABEL: func.func @main_hvp(
// HVP-SAME:      %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3x2xf32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3x2xf32>)
// HVP-SAME:      -> (tensor<f32>, tensor<2xf32>, tensor<3xf32>, tensor<3x2xf32>)

// HESS-LABEL: func.func @main_hessian(
// HESS-SAME:      %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3x2xf32>)
// HESS-SAME:      -> (tensor<f32>, tensor<2xf32>, tensor<3x3xf32>, tensor<3x3x2xf32>, tensor<3x2x3xf32>, tensor<3x2x3x2xf32>)
// HESS:           "rlx.astype"({{.*}}) : (tensor<9x9xi1>) -> tensor<9x9xf32>
func.func @main(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> (tensor<f32>, tensor<2xf32>) {
  %0 = "rlx.tanh"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.matmul"(%0, %w) : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  %2 = "rlx.multiply"(%1, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "rlx.sum"(%2) : (tensor<2xf32>) -> tensor<f32>
  return %3, %1 : tensor<f32>, tensor<2xf32>
}

// -----

// Reverse rows through a loop: the VJP's cotangent is a constant, so the
// backward loop's primal half (the adjoints at that cotangent) feeds
// nothing; its iter_args go (cleanup.drop_dead_carries) and the loop carries
// the batched tangents only.
// CHECK-LABEL: func.func @main_jacobian(
// FWD-LABEL: func.func @main_jacobian(
// FWD:           scf.for {{.*}} -> (tensor<3xf32>, tensor<15x3xf32>)
// REV-LABEL: func.func @main_jacobian(
// REV:           scf.for {{.*}} -> (tensor<3xf32>, tensor<4x3xf32>)
// REV:           scf.for {{.*}} -> (tensor<1x3xf32>, tensor<1x4x3xf32>)
// REV-NOT:       scf.for
// REV:           return
// HVP-LABEL: func.func @main_hvp(
// HESS-LABEL: func.func @main_hessian(
func.func @main(%x: tensor<4x3xf32>, %h0: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<3xf32>) {
    %ii = arith.index_cast %i : index to i64
    %t = tensor.from_elements %ii : tensor<i64>
    %xi = "rlx.take"(%x, %t) {axis = array<i64: 0>} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
    %a = "rlx.add"(%h, %xi) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %hn = "rlx.tanh"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %hn : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

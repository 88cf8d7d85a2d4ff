// RUN: gradir-opt %s --split-input-file --rlx-gradient | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=vjp' | FileCheck %s --check-prefix=VJP
// RUN: gradir-opt %s --split-input-file --rlx-gradient='simplify=false' | FileCheck %s --check-prefix=RAW
// A loop that fills its result with tensor.insert_slice and reads rows of x
// with tensor.extract_slice (rlx-fuse-attention's loop over query blocks):
// - the forward loop records nothing: the backward never reads the carried
//   result, so no stack of it is pushed per iteration (a 4x8x3 stack);
// - x's gradient is accumulated slice by slice: the extract_slice's adjoint,
//   an insert_slice into zeros, is added into only that slice of the
//   accumulator (no 8x4 zeros and no 8x4 add per iteration);
// - the reverse loop's permute_dims(w) (matmul's VJP), invariant, is
//   computed once before the loop.
// (Numbers against finite differences: test/autodiff/scf/slices.py.)

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME:      %[[X:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<4x3xf32>)
// CHECK-NOT:     tensor<4x8x3xf32>
// CHECK:         %[[FWD:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<8x3xf32>) {
// CHECK-NOT:       tensor<4x8x3xf32>
// CHECK:           tensor.insert_slice %{{.*}} into %[[ACC]][%[[I]], 0] [2, 3] [1, 1]
// CHECK-NEXT:      scf.yield
// CHECK:         %[[WT:.*]] = "rlx.permute_dims"(%[[W]]) {axes = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK:         %[[BWD:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[GX:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<8x3xf32>, tensor<8x4xf32>, tensor<4x3xf32>) {
// CHECK-NOT:       "rlx.permute_dims"(%[[W]])
// CHECK:           %[[D:.*]] = "rlx.matmul"(%{{.*}}, %[[WT]]) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT:       "rlx.add"(%[[GX]]
// CHECK:           %[[OLD:.*]] = tensor.extract_slice %[[GX]][%[[K:.*]], 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:      %[[SUM:.*]] = "rlx.add"(%[[OLD]], %[[D]]) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:      %[[NEW:.*]] = tensor.insert_slice %[[SUM]] into %[[GX]][%[[K]], 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
// CHECK:           scf.yield %{{.*}}, %[[NEW]], %{{.*}} : tensor<8x3xf32>, tensor<8x4xf32>, tensor<4x3xf32>
// CHECK:         return %{{.*}}, %[[BWD]]#1, %[[BWD]]#2

// VJP-LABEL: func.func @main_vjp(
// VJP-NOT:     tensor<4x8x3xf32>
// VJP:         "rlx.permute_dims"
// VJP:         scf.for
// VJP-NOT:       "rlx.permute_dims"
// VJP:           tensor.extract_slice
// VJP:         return

// RAW-LABEL: func.func @main_adjoint(
// RAW-NOT:     tensor<4x8x3xf32>
// RAW:         scf.for
// RAW:           tensor.insert_slice
// RAW:         "rlx.permute_dims"
// RAW:         scf.for
// RAW-NOT:       "rlx.zeros"() : () -> tensor<8x4xf32>
// RAW:           "rlx.add"(%{{.*}}, %{{.*}}) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// RAW:         return
func.func @main(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<8x3xf32>
  %r = scf.for %i = %c0 to %c8 step %c2 iter_args(%acc = %e) -> (tensor<8x3xf32>) {
    %xs = tensor.extract_slice %x[%i, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %m = "rlx.matmul"(%xs, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %t = "rlx.tanh"(%m) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<8x3xf32>
    scf.yield %ins : tensor<8x3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<8x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Nested loops: exp(w), invariant in both, leaves both forward loops and
// both reverse loops; a zeros the inner loop writes into (a destination)
// stays where it is.

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-SAME:      %{{.*}}: tensor<4x4xf32>, %[[W:.*]]: tensor<2x2xf32>)
// CHECK:         %[[E:.*]] = "rlx.exp"(%[[W]])
// CHECK-NOT:     "rlx.exp"
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             "rlx.matmul"(%{{.*}}, %[[E]])
// CHECK:             tensor.insert_slice
// CHECK:         "rlx.permute_dims"(%[[E]])
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK-NOT:         "rlx.exp"
// CHECK-NOT:         "rlx.permute_dims"(%[[E]])
// CHECK:             scf.yield
// CHECK:         return
func.func @main(%x: tensor<4x4xf32>, %w: tensor<2x2xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %z = "rlx.zeros"() : () -> tensor<4x4xf32>
  %r = scf.for %i = %c0 to %c4 step %c2 iter_args(%acc = %z) -> (tensor<4x4xf32>) {
    %in = scf.for %j = %c0 to %c4 step %c2 iter_args(%acc2 = %acc) -> (tensor<4x4xf32>) {
      %xs = tensor.extract_slice %x[%i, %j] [2, 2] [1, 1] : tensor<4x4xf32> to tensor<2x2xf32>
      %we = "rlx.exp"(%w) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %m = "rlx.matmul"(%xs, %we) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      %ins = tensor.insert_slice %m into %acc2[%i, %j] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
      scf.yield %ins : tensor<4x4xf32>
    }
    scf.yield %in : tensor<4x4xf32>
  }
  %q = "rlx.multiply"(%r, %r) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = "rlx.sum"(%q) : (tensor<4x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// An invariant rlx op whose result the loop writes into stays in the loop
// (hoisted, each iteration would need a copy of it): the forward loop's
// ones that tensor.insert_slice fills.

// CHECK-LABEL: func.func @main_adjoint(
// CHECK-NOT:     "rlx.ones"
// CHECK:         scf.for
// CHECK:           %[[O:.*]] = "rlx.ones"() : () -> tensor<4x3xf32>
// CHECK:           tensor.insert_slice %{{.*}} into %[[O]]
// CHECK:           scf.yield
// CHECK:         return
func.func @main(%x: tensor<4x3xf32>, %h0: tensor<4x3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<4x3xf32>) {
    %o = "rlx.ones"() : () -> tensor<4x3xf32>
    %xs = tensor.extract_slice %x[%i, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
    %f = tensor.insert_slice %xs into %o[%i, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
    %m = "rlx.multiply"(%h, %f) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %hn = "rlx.sin"(%m) : (tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %hn : tensor<4x3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<4x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

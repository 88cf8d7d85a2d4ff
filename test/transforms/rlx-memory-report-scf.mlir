// RUN: gradir-opt %s --rlx-gradient='wrt=1' --rlx-memory-report --verify-diagnostics -o /dev/null
// rlx-memory-report on loops: per-iteration bytes x trips, what the loop
// stores for the backward, and a body's temporaries at the loop.

// expected-remark @+2 {{@main: peak}}
// expected-remark @+1 {{@main_adjoint: peak 208 bytes = arguments 60 + saved for backward 72 + temporaries 76, at 'scf.for'}}
func.func @main(%x: tensor<4x3xf32>, %h0: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+3 {{@main: 'scf.for' with 4 trips: carries 12 bytes per iteration (storing every iteration: 12 x trips = 48 bytes); stores 0 bytes for the backward}}
  // expected-remark @+2 {{@main_adjoint: 'scf.for' with 4 trips: carries 12 bytes per iteration (storing every iteration: 12 x trips = 48 bytes); stores 48 bytes for the backward}}
  // expected-remark @+1 {{@main_adjoint: 'scf.for' with 4 trips: carries 12 bytes per iteration (storing every iteration: 12 x trips = 48 bytes); stores 0 bytes for the backward}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<3xf32>) {
    %ii = arith.index_cast %i : index to i64
    %t = tensor.from_elements %ii : tensor<i64>
    %xi = "rlx.take"(%x, %t) {axis = array<i64: 0>} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
    %m = "rlx.multiply"(%h, %xi) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %hn = "rlx.tanh"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %hn : tensor<3xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

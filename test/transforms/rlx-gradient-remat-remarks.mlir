// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient='remat=auto budget=0.8 remarks=true'

// expected-remark @+1 {{rlx-gradient: remat=auto: keeps 1024 bytes, recomputes 2 ops (128 FLOPs); peak 1544 bytes (storing everything: 2056 bytes)}}
func.func @main(%x: tensor<64xf32>) -> tensor<f32> {
  // expected-remark @+1 {{recomputed in the backward (64 FLOPs, 256 bytes not kept): remat=auto recomputes it to fit the budget}}
  %h1 = "rlx.tanh"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{recomputed in the backward (64 FLOPs, 256 bytes not kept): remat=auto recomputes it to fit the budget}}
  %h2 = "rlx.tanh"(%h1) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{kept for the backward (256 bytes): remat=auto keeps it: the budget has room for it}}
  %h3 = "rlx.tanh"(%h2) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{kept for the backward (256 bytes): remat=auto keeps it}}
  %h4 = "rlx.tanh"(%h3) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{kept for the backward (256 bytes): remat=auto keeps it}}
  %h5 = "rlx.tanh"(%h4) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{kept for the backward (256 bytes): remat=auto keeps it}}
  %h6 = "rlx.tanh"(%h5) : (tensor<64xf32>) -> tensor<64xf32>
  %l = "rlx.sum"(%h6) : (tensor<64xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// tanh's backward needs tanh(x) whether it is kept or recomputed: 80%
// cannot be met, and the warning says what can.
// expected-warning @+2 {{rlx-gradient: remat=auto cannot meet the budget of 83 bytes: the lowest peak it reaches is 104 bytes (storing everything: 104 bytes)}}
// expected-remark @+1 {{remat=auto: keeps 32 bytes, recomputes 0 ops (0 FLOPs); peak 104 bytes}}
func.func @main(%x: tensor<8xf32>) -> tensor<f32> {
  // expected-remark @+1 {{kept for the backward (32 bytes): remat=auto keeps it: the budget has room for it}}
  %0 = "rlx.tanh"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "rlx.sum"(%0) : (tensor<8xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Markers are ignored by remat=auto, with a warning.  (sin's backward uses
// x only: nothing can be saved.)
// expected-warning @+3 {{remat=auto makes its own plan; the grad.start_checkpoint/grad.end_checkpoint markers are ignored}}
// expected-warning @+2 {{cannot meet the budget of 54 bytes: the lowest peak it reaches is 68 bytes}}
// expected-remark @+1 {{remat=auto: keeps 0 bytes, recomputes 0 ops}}
func.func @main(%x: tensor<8xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %0 = "rlx.sin"(%s) : (tensor<8xf32>) -> tensor<8xf32>
  %e = "grad.end_checkpoint"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "rlx.sum"(%e) : (tensor<8xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

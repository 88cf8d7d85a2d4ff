// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-gradient='remarks=true'
// remarks=true explains each decision at the forward op, and sums it up at
// the function.

// expected-remark @+1 {{rlx-gradient: checkpoints: keeps 40 bytes, recomputes 2 ops (18 FLOPs); peak 156 bytes (storing everything: 192 bytes)}}
func.func @main(%x: tensor<3x3xf32>) -> tensor<f32> {
  // expected-remark @+1 {{kept for the backward (4 bytes): a constant}}
  %c = arith.constant dense<3.0> : tensor<f32>
  %x_scp = "grad.start_checkpoint"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  // expected-remark @+1 {{recomputed in the backward (9 FLOPs, 36 bytes not kept): inside a checkpoint (computed from a grad.start_checkpoint result)}}
  %lv1 = "rlx.power"(%x_scp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv1_ecp = "grad.end_checkpoint"(%lv1) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  // expected-remark @+1 {{kept for the backward (36 bytes): wrapped by grad.start_checkpoint}}
  %lv2 = "rlx.power"(%lv1_ecp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv2_scp = "grad.start_checkpoint"(%lv2) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  // expected-remark @+1 {{recomputed in the backward (9 FLOPs, 36 bytes not kept): inside a checkpoint}}
  %lv3 = "rlx.power"(%lv2_scp, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %lv4 = "rlx.power"(%lv3, %c) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %gv = "rlx.sum"(%lv4) : (tensor<3x3xf32>) -> tensor<f32>
  %gv_ecp = "grad.end_checkpoint"(%gv) : (tensor<f32>) -> tensor<f32>
  return %gv_ecp : tensor<f32>
}

// -----

// expected-remark @+1 {{rlx-gradient: checkpoints: keeps 768 bytes, recomputes 3 ops (192 FLOPs); peak 1800 bytes (storing everything: 2056 bytes)}}
func.func @main(%x: tensor<64xf32>) -> tensor<f32> {
  %s = "grad.start_checkpoint"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{recomputed in the backward (64 FLOPs, 256 bytes not kept): inside a checkpoint}}
  %h1 = "rlx.tanh"(%s) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{kept for the backward (256 bytes): pinned by grad.save}}
  %h2 = "rlx.tanh"(%h1) {grad.save} : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{kept for the backward (256 bytes): every operand is kept or closes a checkpoint (grad.end_checkpoint)}}
  %h3 = "rlx.tanh"(%h2) : (tensor<64xf32>) -> tensor<64xf32>
  %e = "grad.end_checkpoint"(%h3) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{kept for the backward (256 bytes): every operand is kept or closes a checkpoint}}
  %h4 = "rlx.tanh"(%e) : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{recomputed in the backward (64 FLOPs, 256 bytes not kept): pinned by grad.recompute}}
  %h5 = "rlx.tanh"(%h4) {grad.recompute} : (tensor<64xf32>) -> tensor<64xf32>
  // expected-remark @+1 {{recomputed in the backward (64 FLOPs, 256 bytes not kept): computed from a recomputed value}}
  %h6 = "rlx.tanh"(%h5) : (tensor<64xf32>) -> tensor<64xf32>
  %l = "rlx.sum"(%h6) : (tensor<64xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A pin on a returned value changes nothing: it is live to the end anyway.
// expected-remark @+1 {{keeps 256 bytes, recomputes 0 ops}}
func.func @main(%x: tensor<64xf32>) -> (tensor<f32>, tensor<64xf32>) {
  // expected-remark @+2 {{grad.recompute ignored: the value is returned by the function, so it is live anyway}}
  // expected-remark @+1 {{kept for the backward (256 bytes): returned by the function}}
  %h = "rlx.tanh"(%x) {grad.recompute} : (tensor<64xf32>) -> tensor<64xf32>
  %l = "rlx.sum"(%h) : (tensor<64xf32>) -> tensor<f32>
  return %l, %h : tensor<f32>, tensor<64xf32>
}

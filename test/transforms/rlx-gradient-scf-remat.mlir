// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=1.0' | FileCheck %s --check-prefix=ALL
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.5' | FileCheck %s --check-prefix=SQRT
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.5 split=true' | FileCheck %s --check-prefix=SPLIT
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.5 mode=vjp' | FileCheck %s --check-prefix=VJP
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.5 remarks=true' --verify-diagnostics -o /dev/null
// remat=auto chooses each loop's checkpointing policy (all, sqrt, revolve;
// cheapest first) to fit the budget: a 400-step loop stores all 400 states
// at budget 1.0 and every 20th (plus one segment's) at 0.5.

// ALL-LABEL: func.func @main_adjoint(
// ALL:         tensor.empty() : tensor<400x64xf32>
// ALL-NOT:     grad.checkpoint

// SQRT-LABEL: func.func @main(
// SQRT-NOT:    grad.checkpoint
// SQRT-LABEL: func.func @main_adjoint(
// SQRT:         tensor.empty() : tensor<20x64xf32>
// SQRT:         scf.for
// SQRT:         scf.for
// SQRT:           tensor.empty() : tensor<20x64xf32>
// SQRT-NOT:     grad.checkpoint

// SPLIT-LABEL: func.func @main_fwd(
// SPLIT-SAME:      -> (tensor<f32>, tensor<20x64xf32>, tensor<64xf32>)
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-SAME:      %{{.*}}: tensor<20x64xf32>

// VJP-LABEL: func.func @main_vjp(
// VJP:         tensor.empty() : tensor<20x64xf32>

// expected-remark @+1 {{rlx-gradient: remat=auto: keeps 5400 bytes, recomputes 0 ops (0 FLOPs); peak 13380 bytes}}
func.func @main(%h0: tensor<64xf32>, %w: tensor<64xf32>) -> tensor<f32> {
  // expected-remark @+1 {{kept for the backward (8 bytes): a constant}}
  %c0 = arith.constant 0 : index
  // expected-remark @+1 {{kept for the backward (8 bytes): a constant}}
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{kept for the backward (8 bytes): a constant}}
  %cT = arith.constant 400 : index
  // expected-remark @+2 {{kept for the backward (5376 bytes): remat=auto keeps it: the budget has room for it}}
  // expected-remark @+1 {{rlx-gradient: remat=auto checkpoints this loop with policy "sqrt" (adjoint peak 13380 bytes; every state stored: 104996 bytes)}}
  %r = scf.for %i = %c0 to %cT step %c1 iter_args(%h = %h0) -> (tensor<64xf32>) {
    %m = "rlx.multiply"(%h, %w) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %t = "rlx.tanh"(%m) : (tensor<64xf32>) -> tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  %s = "rlx.sum"(%r) : (tensor<64xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// One pre-norm transformer block in rlx text (sequence 4, model width 8, 2 heads):
// layer_norm -> packed q/k/v projection split three ways -> per-head attention ->
// output projection + residual -> layer_norm -> GELU MLP + residual.  The variadic
// split is written as the contract writes it (%qkv:3, no segment attribute) and
// layer_norm's epsilon is left at its default (1e-5).
//
//   gradir-opt examples/transformer_block.mlir --rlx-gradient
//   gradir-run examples/transformer_block.mlir --rlx-gradient --entry main_adjoint --random-inputs 0
func.func @main(%x: tensor<4x8xf32>, %g1: tensor<8xf32>, %be1: tensor<8xf32>,
                %wqkv: tensor<8x24xf32>, %wo: tensor<8x8xf32>,
                %g2: tensor<8xf32>, %be2: tensor<8xf32>,
                %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<f32> {
  %ln1 = "rlx.layer_norm"(%x, %g1, %be1) {axes = array<i64: -1>} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // linear layers are x @ W with W stored (in, out); PyTorch's nn.Linear stores (out, in).
  %proj = "rlx.matmul"(%ln1, %wqkv) : (tensor<4x8xf32>, tensor<8x24xf32>) -> tensor<4x24xf32>
  %qkv:3 = "rlx.split"(%proj) {axis = array<i64: 1>, sections = 3 : i64} : (tensor<4x24xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  %q4 = "rlx.reshape"(%qkv#0) : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %k4 = "rlx.reshape"(%qkv#1) : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %v4 = "rlx.reshape"(%qkv#2) : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %q = "rlx.permute_dims"(%q4) {axes = array<i64: 1, 0, 2>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  %kt = "rlx.permute_dims"(%k4) {axes = array<i64: 1, 2, 0>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  %v = "rlx.permute_dims"(%v4) {axes = array<i64: 1, 0, 2>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  %s = "rlx.matmul"(%q, %kt) : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %scale = arith.constant dense<0.5> : tensor<f32>
  %ss = "rlx.multiply"(%s, %scale) : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %a = "rlx.softmax"(%ss) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = "rlx.matmul"(%a, %v) : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %ot = "rlx.permute_dims"(%o) {axes = array<i64: 1, 0, 2>} : (tensor<2x4x4xf32>) -> tensor<4x2x4xf32>
  %om = "rlx.reshape"(%ot) : (tensor<4x2x4xf32>) -> tensor<4x8xf32>
  %attn = "rlx.matmul"(%om, %wo) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h = "rlx.add"(%x, %attn) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ln2 = "rlx.layer_norm"(%h, %g2, %be2) {axes = array<i64: -1>} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %m1 = "rlx.matmul"(%ln2, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %ge = "rlx.gelu"(%m1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %m2 = "rlx.matmul"(%ge, %w2) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %y = "rlx.add"(%h, %m2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y2 = "rlx.square"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %loss = "rlx.mean"(%y2) : (tensor<4x8xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

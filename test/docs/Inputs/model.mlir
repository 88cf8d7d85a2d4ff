// The program the examples of README.md and docs/ run on: a one-layer
// classifier, loss = mean((tanh(x @ w) - y)^2).  Arguments: x (batch 4,
// 3 features), w (3x2), y (targets).
func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %y: tensor<4x2xf32>) -> tensor<f32> {
  %h = "rlx.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %t = "rlx.tanh"(%h) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = "rlx.subtract"(%t, %y) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = "rlx.square"(%d) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = "rlx.mean"(%s) : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

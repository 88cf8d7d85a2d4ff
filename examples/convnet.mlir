// A small convolutional classifier in rlx text: conv -> relu -> max pool -> dense ->
// log_softmax -> nll_loss.  Optional attributes are left out where Relax's default
// is meant (conv2d: strides 1, padding 0, dilation 1, groups 1; nll_loss: "mean").
//
//   gradir-opt examples/convnet.mlir --rlx-gradient          # adds @main_adjoint
//   gradir-run examples/convnet.mlir --rlx-gradient --entry main_adjoint --random-inputs 0
func.func @main(%x: tensor<2x1x8x8xf32>, %labels: tensor<2xi64>,
                %w1: tensor<4x1x3x3xf32>, %b1: tensor<4x1x1xf32>,
                %w2: tensor<36x10xf32>, %b2: tensor<10xf32>) -> (tensor<f32>, tensor<2x10xf32>) {
  %c = "rlx.conv2d"(%x, %w1) : (tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32>
  %cb = "rlx.add"(%c, %b1) : (tensor<2x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<2x4x6x6xf32>
  %r = "rlx.relu"(%cb) : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  // PyTorch's MaxPool2d(2) strides by the window; Relax's default stride is 1: write it.
  %p = "rlx.max_pool2d"(%r) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf32>) -> tensor<2x4x3x3xf32>
  // rlx.flatten makes a 1-D tensor (Relax); keep the batch axis with reshape.
  %f = "rlx.reshape"(%p) : (tensor<2x4x3x3xf32>) -> tensor<2x36xf32>
  %d = "rlx.matmul"(%f, %w2) : (tensor<2x36xf32>, tensor<36x10xf32>) -> tensor<2x10xf32>
  %logits = "rlx.add"(%d, %b2) : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %lp = "rlx.log_softmax"(%logits) : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %loss = "rlx.nll_loss"(%lp, %labels) : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss, %logits : tensor<f32>, tensor<2x10xf32>
}

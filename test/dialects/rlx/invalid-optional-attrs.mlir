// Optional attributes may be left out (DESIGN.md defaults), but a present one of the
// wrong kind or value is still refused, at the op.
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-verify

func.func @conv_groups_float(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op attribute 'groups' must be i64 integer, got 1.000000e+00 : f64}}
  %0 = "rlx.conv2d"(%x, %w) {groups = 1.0 : f64} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @conv_strides_array_attr(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op attribute 'strides' must be array<i64>, got [1, 1]}}
  %0 = "rlx.conv2d"(%x, %w) {strides = [1, 1]} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @conv_padding_length(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op 'padding' must have 4 entries, got 3}}
  %0 = "rlx.conv2d"(%x, %w) {padding = array<i64: 0, 0, 0>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @conv_groups_zero(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op 'groups' must be positive, got 0}}
  %0 = "rlx.conv2d"(%x, %w) {groups = 0 : i64} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @pool_strides_zero(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op 'strides' and 'dilation' must be positive}}
  %0 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @pool_size_missing(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{attribute "pool_size" is expected but not provided}}
  %0 = "rlx.avg_pool2d"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @nll_reduction_int(%p: tensor<3x4xf32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{'rlx.nll_loss' op attribute 'reduction' must be string, got 3 : i64}}
  %0 = "rlx.nll_loss"(%p, %t) {reduction = 3 : i64} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
  return
}

// -----

func.func @triu_k_float(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'rlx.triu' op attribute 'k' must be i64 integer, got 1.500000e+00 : f64}}
  %0 = "rlx.triu"(%x) {k = 1.5 : f64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @layer_norm_epsilon_int(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.layer_norm' op attribute 'epsilon' must be f64 float, got 1 : i64}}
  %0 = "rlx.layer_norm"(%x, %g, %b) {axes = array<i64: -1>, epsilon = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @layer_norm_axes_missing(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{attribute "axes" is expected but not provided}}
  %0 = "rlx.layer_norm"(%x, %g, %b) : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

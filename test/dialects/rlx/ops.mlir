// Round trip of every rlx op (generic form) through upstream mlir-opt and gradir-opt.
// The variadic ops (concat, split, tuple) have their own round trip: variadic.py.
// Only one --irdl-file is honoured by mlir-opt (the last one), so this file loads rlx only.
// RUN: mlir-opt --irdl-file=%rlx_irdl %s | mlir-opt --irdl-file=%rlx_irdl | FileCheck %s
// RUN: gradir-opt %s | gradir-opt | FileCheck %s
// RUN: gradir-opt %s --rlx-verify | FileCheck %s

// CHECK-LABEL: func.func @elementwise(
// CHECK: "rlx.exp"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.add"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.multiply"(%{{.*}}, %{{.*}}) : (tensor<4x1x3xf32>, tensor<2x1xf32>) -> tensor<4x2x3xf32>
// CHECK: "rlx.less"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: "rlx.where"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.negative"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.log"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.sqrt"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.rsqrt"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.sin"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.cos"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.tanh"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.sigmoid"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.abs"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.relu"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.silu"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.gelu"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.erf"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.square"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.subtract"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.divide"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.power"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.maximum"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.minimum"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.equal"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: "rlx.not_equal"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: "rlx.less_equal"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: "rlx.greater"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: "rlx.greater_equal"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @elementwise(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<4x1x3xf32>, %arg3: tensor<2x1xf32>) {
  %0 = "rlx.exp"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.add"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = "rlx.multiply"(%arg2, %arg3) : (tensor<4x1x3xf32>, tensor<2x1xf32>) -> tensor<4x2x3xf32>
  %3 = "rlx.less"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %4 = "rlx.where"(%3, %arg1, %arg3) : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %5 = "rlx.negative"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "rlx.log"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = "rlx.sqrt"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = "rlx.rsqrt"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "rlx.sin"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = "rlx.cos"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = "rlx.tanh"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = "rlx.sigmoid"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = "rlx.abs"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %14 = "rlx.relu"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %15 = "rlx.silu"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %16 = "rlx.gelu"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %17 = "rlx.erf"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %18 = "rlx.square"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %19 = "rlx.subtract"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %20 = "rlx.divide"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %21 = "rlx.power"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %22 = "rlx.maximum"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %23 = "rlx.minimum"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %24 = "rlx.equal"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %25 = "rlx.not_equal"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %26 = "rlx.less_equal"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %27 = "rlx.greater"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %28 = "rlx.greater_equal"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @matmul_shapes(
// CHECK: "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
// CHECK: "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
// CHECK: "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
// CHECK: "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<5x1x2x3xf32>, tensor<7x3x4xf32>) -> tensor<5x7x2x4xf32>
func.func @matmul_shapes(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<3xf32>, %arg3: tensor<5x1x2x3xf32>, %arg4: tensor<7x3x4xf32>) {
  %0 = "rlx.matmul"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "rlx.matmul"(%arg2, %arg1) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  %2 = "rlx.matmul"(%arg0, %arg2) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  %3 = "rlx.matmul"(%arg2, %arg2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %4 = "rlx.matmul"(%arg3, %arg4) : (tensor<5x1x2x3xf32>, tensor<7x3x4xf32>) -> tensor<5x7x2x4xf32>
  return
}

// CHECK-LABEL: func.func @shape_ops(
// CHECK: "rlx.permute_dims"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK: "rlx.permute_dims"(%{{.*}}) {axes = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK: "rlx.reshape"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: "rlx.broadcast_to"(%{{.*}}) : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
// CHECK: "rlx.expand_dims"(%{{.*}}) {axis = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4x1xf32>
// CHECK: "rlx.squeeze"(%{{.*}}) : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK: "rlx.squeeze"(%{{.*}}) {axis = array<i64: -1>} : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK: "rlx.flatten"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<24xf32>
// CHECK: "rlx.strided_slice"(%{{.*}}) {axes = array<i64: 1, 2>, begin = array<i64: 0, 3>, end = array<i64: 2, 0>, strides = array<i64: 1, -1>} : (tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
// CHECK: "rlx.take"(%{{.*}}, %{{.*}}) {axis = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x5x4xf32>
// CHECK: "rlx.take"(%{{.*}}, %{{.*}}) : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<5xf32>
// CHECK: "rlx.triu"(%{{.*}}) {k = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
func.func @shape_ops(%arg0: tensor<2x3x4xf32>, %arg1: tensor<3x1xf32>, %arg2: tensor<5xi64>) {
  %0 = "rlx.permute_dims"(%arg0) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %1 = "rlx.permute_dims"(%arg0) {axes = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %2 = "rlx.reshape"(%arg0) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %3 = "rlx.broadcast_to"(%arg1) : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
  %4 = "rlx.expand_dims"(%arg0) {axis = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4x1xf32>
  %5 = "rlx.squeeze"(%arg1) : (tensor<3x1xf32>) -> tensor<3xf32>
  %6 = "rlx.squeeze"(%arg1) {axis = array<i64: -1>} : (tensor<3x1xf32>) -> tensor<3xf32>
  %7 = "rlx.flatten"(%arg0) : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %11 = "rlx.strided_slice"(%arg0) {axes = array<i64: 1, 2>, begin = array<i64: 0, 3>, end = array<i64: 2, 0>, strides = array<i64: 1, -1>} : (tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
  %12 = "rlx.take"(%arg0, %arg2) {axis = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x5x4xf32>
  %13 = "rlx.take"(%arg0, %arg2) : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<5xf32>
  %14 = "rlx.triu"(%arg0) {k = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// CHECK-LABEL: func.func @reductions(
// CHECK: "rlx.sum"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK: "rlx.sum"(%{{.*}}) {axis = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK: "rlx.mean"(%{{.*}}) {axis = array<i64: -1, 0>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK: "rlx.max"(%{{.*}}) {axis = array<i64: -2>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK: "rlx.min"(%{{.*}}) {axis = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
// CHECK: "rlx.prod"(%{{.*}}) {axis = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
// CHECK: "rlx.variance"(%{{.*}}) {axis = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK: "rlx.cumsum"(%{{.*}}) {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: "rlx.cumsum"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<24xf32>
func.func @reductions(%arg0: tensor<2x3x4xf32>) {
  %0 = "rlx.sum"(%arg0) : (tensor<2x3x4xf32>) -> tensor<f32>
  %1 = "rlx.sum"(%arg0) {axis = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %2 = "rlx.mean"(%arg0) {axis = array<i64: -1, 0>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %3 = "rlx.max"(%arg0) {axis = array<i64: -2>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %4 = "rlx.min"(%arg0) {axis = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  %5 = "rlx.prod"(%arg0) {axis = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  %6 = "rlx.variance"(%arg0) {axis = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %7 = "rlx.cumsum"(%arg0) {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %8 = "rlx.cumsum"(%arg0) : (tensor<2x3x4xf32>) -> tensor<24xf32>
  return
}

// CHECK-LABEL: func.func @nn_ops(
// CHECK: "rlx.softmax"(%{{.*}}) {axis = array<i64: -1>} : (tensor<4x10xf32>) -> tensor<4x10xf32>
// CHECK: "rlx.log_softmax"(%{{.*}}) {axis = array<i64: 0>} : (tensor<4x10xf32>) -> tensor<4x10xf32>
// CHECK: "rlx.cross_entropy_with_logits"(%{{.*}}, %{{.*}}) : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<f32>
// CHECK: "rlx.nll_loss"(%{{.*}}, %{{.*}}) {reduction = "mean"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK: "rlx.nll_loss"(%{{.*}}, %{{.*}}, %{{.*}}) {reduction = "none"} : (tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4xf32>
// CHECK: "rlx.conv2d"(%{{.*}}, %{{.*}}) {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x5x5xf32>
// CHECK: "rlx.conv2d"(%{{.*}}, %{{.*}}) {dilation = array<i64: 2, 2>, groups = 2 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x5xf32>
// CHECK: "rlx.max_pool2d"(%{{.*}}) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x4x4xf32>
// CHECK: "rlx.avg_pool2d"(%{{.*}}) {ceil_mode = true, padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
// CHECK: "rlx.avg_pool2d"(%{{.*}}) {count_include_pad = true, padding = array<i64: 1, 1, 1, 1>, pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
// CHECK: "rlx.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: -1>, epsilon = 1.000000e-05 : f64} : (tensor<4x10xf32>, tensor<10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
// CHECK: "rlx.rms_norm"(%{{.*}}, %{{.*}}) : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
func.func @nn_ops(%arg0: tensor<4x10xf32>, %arg1: tensor<4x10xf32>, %arg2: tensor<4xi64>, %arg3: tensor<10xf32>, %arg4: tensor<2x4x9x9xf32>, %arg5: tensor<8x4x3x3xf32>, %arg6: tensor<6x2x3x3xf32>) {
  %0 = "rlx.softmax"(%arg0) {axis = array<i64: -1>} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %1 = "rlx.log_softmax"(%arg0) {axis = array<i64: 0>} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %2 = "rlx.cross_entropy_with_logits"(%arg0, %arg1) : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<f32>
  %3 = "rlx.nll_loss"(%arg0, %arg2) {reduction = "mean"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %4 = "rlx.nll_loss"(%arg0, %arg2, %arg3) {reduction = "none"} : (tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4xf32>
  %5 = "rlx.conv2d"(%arg4, %arg5) {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x5x5xf32>
  %6 = "rlx.conv2d"(%arg4, %arg6) {dilation = array<i64: 2, 2>, groups = 2 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x5xf32>
  %7 = "rlx.max_pool2d"(%arg4) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x4x4xf32>
  %8 = "rlx.avg_pool2d"(%arg4) {ceil_mode = true, padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
  %9 = "rlx.avg_pool2d"(%arg4) {count_include_pad = true, padding = array<i64: 1, 1, 1, 1>, pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
  %10 = "rlx.layer_norm"(%arg0, %arg3, %arg3) {axes = array<i64: -1>, epsilon = 1.000000e-05 : f64} : (tensor<4x10xf32>, tensor<10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  %11 = "rlx.rms_norm"(%arg0, %arg3) : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return
}

// CHECK-LABEL: func.func @gradient_helpers(
// CHECK: "rlx.conv2d_transpose"(%{{.*}}, %{{.*}}) {dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x10x10xf32>
// CHECK: "rlx.max_pool2d_backward"(%{{.*}}, %{{.*}}) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
// CHECK: "rlx.avg_pool2d_backward"(%{{.*}}, %{{.*}}) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
// CHECK: "rlx.collapse_sum_to"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<3x1xf32>
func.func @gradient_helpers(%arg0: tensor<2x8x5x5xf32>, %arg1: tensor<8x4x3x3xf32>, %arg2: tensor<2x4x4x4xf32>, %arg3: tensor<2x4x9x9xf32>, %arg4: tensor<2x3x4xf32>) {
  %0 = "rlx.conv2d_transpose"(%arg0, %arg1) {dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x10x10xf32>
  %1 = "rlx.max_pool2d_backward"(%arg2, %arg3) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
  %2 = "rlx.avg_pool2d_backward"(%arg2, %arg3) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
  %3 = "rlx.collapse_sum_to"(%arg4) : (tensor<2x3x4xf32>) -> tensor<3x1xf32>
  return
}

// CHECK-LABEL: func.func @create_and_tuples(
// CHECK: "rlx.zeros"() : () -> tensor<2x3xf32>
// CHECK: "rlx.ones"() : () -> tensor<4xbf16>
// CHECK: "rlx.full"(%{{.*}}) : (tensor<f32>) -> tensor<2x3xf32>
// CHECK: arith.constant dense<1.500000e+00> : tensor<f64>
// CHECK: "rlx.full"(%{{.*}}) : (tensor<f64>) -> tensor<2xf64>
// CHECK: "rlx.zeros_like"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.ones_like"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "rlx.astype"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK: "rlx.astype"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK: "rlx.tuple_get_item"(%{{.*}}) {index = 1 : i64} : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<f32>
func.func @create_and_tuples(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>, %arg2: tuple<tensor<2x3xf32>, tensor<f32>>) {
  %0 = "rlx.zeros"() : () -> tensor<2x3xf32>
  %1 = "rlx.ones"() : () -> tensor<4xbf16>
  %2 = "rlx.full"(%arg1) : (tensor<f32>) -> tensor<2x3xf32>
  %cst = arith.constant dense<1.500000e+00> : tensor<f64>
  %3 = "rlx.full"(%cst) : (tensor<f64>) -> tensor<2xf64>
  %4 = "rlx.zeros_like"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = "rlx.ones_like"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "rlx.astype"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %7 = "rlx.astype"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %9 = "rlx.tuple_get_item"(%arg2) {index = 1 : i64} : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<f32>
  return
}

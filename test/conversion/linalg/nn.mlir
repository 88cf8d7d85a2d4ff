// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// Neural-network ops: named convolution / pooling ops where upstream has
// them, reductions and generics for the rest.

// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x5x5xf32>, %[[W:.*]]: tensor<3x2x3x3xf32>)
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x2x5x5xf32> to tensor<1x2x7x7xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<1x3x3x5xf32>
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>) outs(%[[Z]] : tensor<1x3x3x5xf32>)
// CHECK: return %[[C]]
func.func @conv2d(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x5xf32> {
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x5xf32>
  return %0 : tensor<1x3x3x5xf32>
}

// -----

// groups > 1: the grouped named op on NGCHW / GFCHW views.
// CHECK-LABEL: func.func @conv2d_groups(
// CHECK: %[[X5:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 5, 5]
// CHECK: %[[W5:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3]
// CHECK: %[[C:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[X5]], %[[W5]] : tensor<1x2x2x5x5xf32>, tensor<2x3x2x3x3xf32>) outs(%{{.*}} : tensor<1x2x3x3x3xf32>)
// CHECK: tensor.collapse_shape %[[C]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x3x3xf32> into tensor<1x6x3x3xf32>
func.func @conv2d_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// conv2d_transpose: the input spread with the stride into zeros, then a
// stride-1 convolution with the flipped kernel (in/out channels swapped).
// CHECK-DAG: #[[$FLIP:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, -d3 + 2, -d4 + 2)>
// CHECK-LABEL: func.func @conv2d_transpose(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x3x3x3xf32>)
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<1x2x10x10xf32>
// CHECK: %[[S:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 2, 2]
// CHECK: %[[F:.*]] = linalg.generic {indexing_maps = [#[[$FLIP]], #{{.*}}]
// CHECK: %[[FW:.*]] = tensor.collapse_shape %[[F]] {{.*}} into tensor<3x2x3x3xf32>
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[S]], %[[FW]] : tensor<1x2x10x10xf32>, tensor<3x2x3x3xf32>) outs(%{{.*}} : tensor<1x3x8x8xf32>)
func.func @conv2d_transpose(%x: tensor<1x2x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  %0 = "rlx.conv2d_transpose"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @max_pool2d(
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]]
// CHECK: %[[I:.*]] = linalg.fill ins(%[[NINF]] : f32) {{.*}} -> tensor<1x2x3x3xf32>
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%[[I]] : tensor<1x2x3x3xf32>)
func.func @max_pool2d(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// avg_pool2d: a sum pooling divided by the window counts (a constant).
// CHECK-DAG: #[[$HW:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @avg_pool2d(
// CHECK: %[[COUNTS:.*]] = arith.constant dense<4.000000e+00> : tensor<3x3xf32>
// CHECK: %[[S:.*]] = linalg.pooling_nchw_sum
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$HW]], #{{.*}}], {{.*}} ins(%[[S]], %[[COUNTS]] : tensor<1x2x3x3xf32>, tensor<3x3xf32>)
// CHECK: arith.divf
func.func @avg_pool2d(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "rlx.avg_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// max_pool2d_backward: one reduction generic finds each window's first
// arg-max; then each kernel offset adds its gradients in place into a
// strided slice of the (padded) result.
// CHECK-LABEL: func.func @max_pool2d_backward(
// CHECK-SAME: %[[G:.*]]: tensor<1x2x3x3xf32>, %[[X:.*]]: tensor<1x2x6x6xf32>)
// CHECK: %[[ARG:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X]], %{{.*}} : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%{{.*}}, %{{.*}} : tensor<1x2x3x3xf32>, tensor<1x2x3x3xindex>)
// CHECK: arith.cmpf ogt
// CHECK-COUNT-4: tensor.insert_slice %{{.*}} into %{{.*}} [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @max_pool2d_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %0 = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @avg_pool2d_backward(
// CHECK: %[[COUNTS:.*]] = arith.constant dense<4.000000e+00> : tensor<3x3xf32>
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[COUNTS]]
// CHECK: arith.divf
// CHECK: %[[SL:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK: linalg.generic {{.*}} ins(%[[D]] : tensor<1x2x3x3xf32>) outs(%[[SL]] : tensor<1x2x3x3xf32>)
// CHECK-COUNT-4: tensor.insert_slice
func.func @avg_pool2d_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %0 = "rlx.avg_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// softmax: max, exp(x - max), sum, divide.
// CHECK-LABEL: func.func @softmax(
// CHECK: %[[M:.*]] = linalg.reduce {{.*}} dimensions = [1]
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[M]] : tensor<3x4xf32>, tensor<3xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[S:.*]] = linalg.reduce ins(%[[E]] : tensor<3x4xf32>) {{.*}} dimensions = [1]
// CHECK: linalg.generic {{.*}} ins(%[[E]], %[[S]] : tensor<3x4xf32>, tensor<3xf32>)
// CHECK: arith.divf
func.func @softmax(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "rlx.softmax"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// log_softmax: (x - max) - log(sum(exp(x - max))).
// CHECK-LABEL: func.func @log_softmax(
// CHECK: %[[M:.*]] = linalg.reduce {{.*}} dimensions = [0]
// CHECK: %[[S:.*]] = linalg.reduce {{.*}} dimensions = [0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[M]], %[[S]] : tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[D:.*]] = arith.subf
// CHECK: %[[L:.*]] = math.log
// CHECK: arith.subf %[[D]], %[[L]]
func.func @log_softmax(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "rlx.log_softmax"(%x) {axis = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_with_logits(
// CHECK: %[[N:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<f32>)
// CHECK: %[[NEG:.*]] = arith.negf
// CHECK: arith.divf %[[NEG]], %[[N]]
func.func @cross_entropy_with_logits(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>) -> tensor<f32> {
  %0 = "rlx.cross_entropy_with_logits"(%x, %y) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// nll_loss "mean": one reduction over the targets gathering the picked
// predictions and weights; the sum of losses over the sum of weights.
// CHECK-LABEL: func.func @nll_loss(
// CHECK-SAME: %[[P:.*]]: tensor<3x4xf32>, %[[T:.*]]: tensor<3xi64>, %[[W:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[T]] : tensor<3xi64>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// CHECK: %[[VALID:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i64
// CHECK: tensor.extract %[[P]]
// CHECK: tensor.extract %[[W]]
// CHECK: linalg.generic {{.*}} ins(%[[R]]#0, %[[R]]#1 : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @nll_loss(%p: tensor<3x4xf32>, %t: tensor<3xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = "rlx.nll_loss"(%p, %t, %w) {reduction = "mean"} : (tensor<3x4xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// layer_norm over unsorted axes: gamma/beta dim i is the data's axis axes[i].
// CHECK-DAG: #[[$GAMMA:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x3xf32>)
// CHECK: linalg.reduce {{.*}} dimensions = [1, 2]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$GAMMA]], #[[$GAMMA]], #{{.*}}], {{.*}} ins(%[[X]], %{{.*}}, %{{.*}}, %[[G]], %[[B]] :
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3x4xf32> {
  %0 = "rlx.layer_norm"(%x, %g, %b) {axes = array<i64: 2, 1>, epsilon = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm(
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: %[[MS:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MS]], %{{.*}} : tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>)
// CHECK: math.sqrt
func.func @rms_norm(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "rlx.rms_norm"(%x, %w) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// RUN: gradir-opt %s --split-input-file --rlx-to-linalg=pool-kernels=true | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s --check-prefix=OFF

// rlx-to-linalg{pool-kernels=true}: a max pool with a 2x2 window of stride 2
// (no padding, no dilation, no ceil-mode overhang; an odd last row or
// column is not read) becomes linalg.pooling_nchw_max marked gradir.kernel,
// which rlx-pool-kernels turns into a kernel call after bufferization.  An
// average pool keeps its generic (its additions vectorize).  Without the
// option nothing is marked.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8x7xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3x4x3xf32>
// CHECK: %[[I:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%[[E]] : tensor<2x3x4x3xf32>)
// CHECK: %[[W:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<2x3x8x7xf32>, tensor<2x2xf32>) outs(%[[I]] : tensor<2x3x4x3xf32>)
// CHECK-LABEL: func.func @forward_f64(
// CHECK: linalg.pooling_nchw_max {{.*}}gradir.kernel{{.*}} ins({{.*}} : tensor<1x1x4x4xf64>, tensor<2x2xf64>)
// OFF-LABEL: func.func @forward(
// OFF-NOT: gradir.kernel
// OFF-NOT: linalg.pooling_nchw_max
// OFF: linalg.generic
func.func @forward(%x: tensor<2x3x8x7xf32>) -> tensor<2x3x4x3xf32> {
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x8x7xf32>) -> tensor<2x3x4x3xf32>
  return %y : tensor<2x3x4x3xf32>
}
func.func @forward_f64(%x: tensor<1x1x4x4xf64>) -> tensor<1x1x2x2xf64> {
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf64>) -> tensor<1x1x2x2xf64>
  return %y : tensor<1x1x2x2xf64>
}
// CHECK-LABEL: func.func @average(
// CHECK-NOT: gradir.kernel
// CHECK: linalg.generic
// CHECK-NOT: gradir.kernel
// CHECK: return
func.func @average(%x: tensor<2x3x8x7xf32>) -> tensor<2x3x4x3xf32> {
  %y = "rlx.avg_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x8x7xf32>) -> tensor<2x3x4x3xf32>
  return %y : tensor<2x3x4x3xf32>
}

// -----

// The backward of exactly tiling 2x2 windows: one generic over the input
// gradient, in an scf.execute_region no_inline (elementwise fusion would
// fold it into its consumer), reading the output gradient through a
// linalg.copy (a named op fusion leaves alone) and the input four times,
// once per window element (floordiv maps).
// CHECK-DAG: #[[$G:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
// CHECK-DAG: #[[$X00:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
// CHECK-DAG: #[[$X11:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[DY:.*]]: tensor<2x3x4x3xf32>, %[[X:.*]]: tensor<2x3x8x6xf32>
// CHECK: %[[R:.*]] = scf.execute_region -> tensor<2x3x8x6xf32> no_inline {
// CHECK: %[[C:.*]] = linalg.copy {{.*}}ins(%[[DY]] : tensor<2x3x4x3xf32>)
// CHECK: %[[D:.*]] = linalg.generic {indexing_maps = [#[[$G]], #[[$X00]], #{{.*}}, #{{.*}}, #[[$X11]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[C]], %[[X]], %[[X]], %[[X]], %[[X]] : {{.*}}) outs({{.*}}) attrs = {gradir.kernel = "max_pool2x2_backward"}
// CHECK: scf.yield %[[D]]
// CHECK: return %[[R]]
// OFF-LABEL: func.func @backward(
// OFF-NOT: gradir.kernel
// OFF-NOT: scf.execute_region
// OFF: return
func.func @backward(%dy: tensor<2x3x4x3xf32>, %x: tensor<2x3x8x6xf32>) -> tensor<2x3x8x6xf32> {
  %dx = "rlx.max_pool2d_backward"(%dy, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x3xf32>, tensor<2x3x8x6xf32>) -> tensor<2x3x8x6xf32>
  return %dx : tensor<2x3x8x6xf32>
}
// The average pool's backward reads only the gradient: g / 4 everywhere.
// CHECK-LABEL: func.func @average_backward(
// CHECK-SAME: %[[DY:.*]]: tensor<2x3x4x3xf64>, %[[X:.*]]: tensor<2x3x8x6xf64>
// CHECK: scf.execute_region -> tensor<2x3x8x6xf64> no_inline {
// CHECK: %[[C:.*]] = linalg.copy {{.*}}ins(%[[DY]] : tensor<2x3x4x3xf64>)
// CHECK: linalg.generic {indexing_maps = [#[[$G]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[C]] : tensor<2x3x4x3xf64>) outs({{.*}}) attrs = {gradir.kernel = "avg_pool2x2_backward"}
// CHECK: arith.divf
func.func @average_backward(%dy: tensor<2x3x4x3xf64>, %x: tensor<2x3x8x6xf64>) -> tensor<2x3x8x6xf64> {
  %dx = "rlx.avg_pool2d_backward"(%dy, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x3xf64>, tensor<2x3x8x6xf64>) -> tensor<2x3x8x6xf64>
  return %dx : tensor<2x3x8x6xf64>
}

// -----

// Pools the kernels do not take keep the generic lowering: other windows or
// strides, padding, dilation, ceil mode, and the backward of windows that
// do not tile the input (an odd row left over).
// CHECK-LABEL: func.func @others(
// CHECK-NOT: gradir.kernel
// CHECK: return
func.func @others(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x2x4x4xf32>)
    -> (tensor<1x2x3x3xf32>, tensor<1x2x8x8xf32>, tensor<1x2x5x5xf32>, tensor<1x2x4x4xf32>,
        tensor<1x2x5x5xf32>, tensor<1x2x9x9xf32>) {
  %0 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 3, 3>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x3x3xf32>
  %1 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x8x8xf32>
  %2 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x5x5xf32>
  %3 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x4x4xf32>
  %4 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x9x9xf32>) -> tensor<1x2x5x5xf32>
  %5 = "rlx.max_pool2d_backward"(%dy, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<1x2x9x9xf32>) -> tensor<1x2x9x9xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x2x3x3xf32>, tensor<1x2x8x8xf32>, tensor<1x2x5x5xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5x5xf32>, tensor<1x2x9x9xf32>
}

// -----

// f16 and bf16 are computed in f32 (as every op): the f32 pool is marked.
// CHECK-LABEL: func.func @half(
// CHECK: arith.extf
// CHECK: linalg.pooling_nchw_max {{.*}}gradir.kernel{{.*}} ins({{.*}} : tensor<1x2x8x8xf32>, tensor<2x2xf32>)
// CHECK: arith.truncf
func.func @half(%h: tensor<1x2x8x8xf16>) -> tensor<1x2x4x4xf16> {
  %0 = "rlx.max_pool2d"(%h) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf16>) -> tensor<1x2x4x4xf16>
  return %0 : tensor<1x2x4x4xf16>
}

// -----

// A max pool with 3x3 windows of stride 2 and padding 1 over an even number
// of rows and columns (ResNet's stem pool): the input padded with -inf, the
// marked linalg.pooling_nchw_max (3x3 window); its backward, in an
// scf.execute_region, the generic marked "max_pool3x3s2_backward" reading
// the gradient zero-padded by a row and a column through 4 maps and the
// same padded input (one tensor.pad after CSE) through 36, writing the
// input gradient.  Odd rows or columns: the generic lowering.
// CHECK-LABEL: func.func @pool3(
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.pooling_nchw_max {{.*}}gradir.kernel{{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x10x8xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<2x3x4x3xf32>)
// CHECK: %[[G:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: scf.execute_region
// CHECK: linalg.generic {{.*}}ins(%[[G]], %[[G]], %[[G]], %[[G]], %{{.*}} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x10x8xf32>,
// CHECK-SAME: outs(%{{.*}} : tensor<2x3x8x6xf32>) attrs = {gradir.kernel = "max_pool3x3s2_backward"}
// CHECK-LABEL: func.func @pool3_odd(
// CHECK-NOT: gradir.kernel
// CHECK: return
func.func @pool3(%x: tensor<2x3x8x6xf32>, %g: tensor<2x3x4x3xf32>) -> (tensor<2x3x4x3xf32>, tensor<2x3x8x6xf32>) {
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x6xf32>) -> tensor<2x3x4x3xf32>
  %d = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x4x3xf32>, tensor<2x3x8x6xf32>) -> tensor<2x3x8x6xf32>
  return %y, %d : tensor<2x3x4x3xf32>, tensor<2x3x8x6xf32>
}
func.func @pool3_odd(%x: tensor<2x3x7x6xf32>, %g: tensor<2x3x4x3xf32>) -> (tensor<2x3x4x3xf32>, tensor<2x3x7x6xf32>) {
  %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x7x6xf32>) -> tensor<2x3x4x3xf32>
  %d = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x4x3xf32>, tensor<2x3x7x6xf32>) -> tensor<2x3x7x6xf32>
  return %y, %d : tensor<2x3x4x3xf32>, tensor<2x3x7x6xf32>
}

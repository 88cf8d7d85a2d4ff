// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// Creation ops are linalg.fill; astype is an elementwise conversion; the
// grad markers are identities and vanish.

// CHECK-LABEL: func.func @zeros(
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[F]]
func.func @zeros() -> tensor<2x3xf32> {
  %0 = "rlx.zeros"() : () -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @ones(
// CHECK: %[[O:.*]] = arith.constant 1 : i32
// CHECK: linalg.fill ins(%[[O]] : i32) outs(%{{.*}} : tensor<4xi32>)
func.func @ones() -> tensor<4xi32> {
  %0 = "rlx.ones"() : () -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// full reads its 0-d fill and converts it to the result's element type.
// CHECK-LABEL: func.func @full(
// CHECK-SAME: %[[FILL:.*]]: tensor<f64>)
// CHECK: %[[V:.*]] = tensor.extract %[[FILL]][] : tensor<f64>
// CHECK: %[[T:.*]] = arith.truncf %[[V]] : f64 to f32
// CHECK: linalg.fill ins(%[[T]] : f32) outs(%{{.*}} : tensor<2x2xf32>)
func.func @full(%f: tensor<f64>) -> tensor<2x2xf32> {
  %0 = "rlx.full"(%f) : (tensor<f64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @zeros_like(
// CHECK: %[[Z:.*]] = arith.constant 0 : i64
// CHECK: linalg.fill ins(%[[Z]] : i64) outs(%{{.*}} : tensor<3xi64>)
func.func @zeros_like(%x: tensor<3xi64>) -> tensor<3xi64> {
  %0 = "rlx.zeros_like"(%x) : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// A bool tensor is filled with the byte 1.
// CHECK-LABEL: func.func @ones_like(
// CHECK-SAME: -> tensor<3xi8>
// CHECK: %[[O:.*]] = arith.constant 1 : i8
// CHECK: linalg.fill ins(%[[O]] : i8) outs(%{{.*}} : tensor<3xi8>)
func.func @ones_like(%x: tensor<3xi1>) -> tensor<3xi1> {
  %0 = "rlx.ones_like"(%x) : (tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// float -> int truncates toward zero (fptosi), as numpy.
// CHECK-LABEL: func.func @astype(
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3xi32>)
// CHECK: arith.fptosi %{{.*}} : f32 to i32
func.func @astype(%x: tensor<3xf32>) -> tensor<3xi32> {
  %0 = "rlx.astype"(%x) : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Anything -> bool is "!= 0" (NaN is true), stored as a byte.
// CHECK-LABEL: func.func @astype_bool(
// CHECK: %[[C:.*]] = arith.cmpf une, %{{.*}}, %{{.*}} : f64
// CHECK-NEXT: arith.extui %[[C]] : i1 to i8
func.func @astype_bool(%x: tensor<3xf64>) -> tensor<3xi1> {
  %0 = "rlx.astype"(%x) : (tensor<3xf64>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// CHECK-LABEL: func.func @astype_same(
// CHECK-SAME: %[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @astype_same(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "rlx.astype"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @markers(
// CHECK-SAME: %[[X:.*]]: tensor<3xf32>)
// CHECK-NOT: grad.
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<3xf32>)
// CHECK: math.exp
// CHECK-NOT: grad.
// CHECK: return %[[E]]
func.func @markers(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "grad.start_checkpoint"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "grad.no_grad"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "rlx.exp"(%1) : (tensor<3xf32>) -> tensor<3xf32>
  %3 = "grad.end_checkpoint"(%2) : (tensor<3xf32>) -> tensor<3xf32>
  return %3 : tensor<3xf32>
}

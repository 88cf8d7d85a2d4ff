// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// Binary, compare and select ops are elementwise linalg.generic ops; numpy
// broadcasting lives in the indexing maps (dropped leading dims, constant 0
// for stretched unit dims), so no broadcast is materialized.

// CHECK-DAG: #[[$ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
func.func @add(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = "rlx.add"(%a, %b) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-DAG: #[[$COL:map[0-9]*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW:map[0-9]*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @subtract(
// CHECK: linalg.generic {indexing_maps = [#[[$COL]], #[[$ROW]], #{{.*}}]
// CHECK: arith.subf
func.func @subtract(%a: tensor<3x1xf64>, %b: tensor<1x4xf64>) -> tensor<3x4xf64> {
  %0 = "rlx.subtract"(%a, %b) : (tensor<3x1xf64>, tensor<1x4xf64>) -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// -----

// CHECK-DAG: #[[$SCALAR:map[0-9]*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @multiply(
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR]], #{{.*}}, #{{.*}}]
// CHECK: arith.mulf
func.func @multiply(%a: tensor<f32>, %b: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "rlx.multiply"(%a, %b) : (tensor<f32>, tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @divide(
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @divide(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "rlx.divide"(%a, %b) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @power(
// CHECK: linalg.generic
// CHECK: math.powf
func.func @power(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "rlx.power"(%a, %b) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// maximum and minimum propagate NaN, as numpy.
// CHECK-LABEL: func.func @maximum(
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @maximum(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "rlx.maximum"(%a, %b) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @minimum(
// CHECK: linalg.generic
// CHECK: arith.minimumf
func.func @minimum(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "rlx.minimum"(%a, %b) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Comparisons give bools, stored as i8 (0/1) since memrefs of i1 cannot be
// lowered: the signature and the result tensor use i8.
// CHECK-LABEL: func.func @equal(
// CHECK-SAME: -> tensor<5xi8>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<5xi8>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<5xi8>)
// CHECK: %[[C:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT: linalg.yield %[[B]] : i8
func.func @equal(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xi1> {
  %0 = "rlx.equal"(%a, %b) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  return %0 : tensor<5xi1>
}

// -----

// not_equal is true for NaN (unordered).
// CHECK-LABEL: func.func @not_equal(
// CHECK: arith.cmpf une
func.func @not_equal(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xi1> {
  %0 = "rlx.not_equal"(%a, %b) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  return %0 : tensor<5xi1>
}

// -----

// CHECK-LABEL: func.func @less(
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i32
func.func @less(%a: tensor<5xi32>, %b: tensor<5xi32>) -> tensor<5xi1> {
  %0 = "rlx.less"(%a, %b) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
  return %0 : tensor<5xi1>
}

// -----

// CHECK-LABEL: func.func @less_equal(
// CHECK: arith.cmpf ole
func.func @less_equal(%a: tensor<5xf64>, %b: tensor<5xf64>) -> tensor<5xi1> {
  %0 = "rlx.less_equal"(%a, %b) : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xi1>
  return %0 : tensor<5xi1>
}

// -----

// CHECK-LABEL: func.func @greater(
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : i64
func.func @greater(%a: tensor<5xi64>, %b: tensor<i64>) -> tensor<5xi1> {
  %0 = "rlx.greater"(%a, %b) : (tensor<5xi64>, tensor<i64>) -> tensor<5xi1>
  return %0 : tensor<5xi1>
}

// -----

// Bools compare as unsigned (false < true).
// CHECK-LABEL: func.func @greater_equal(
// CHECK-SAME: %{{.*}}: tensor<5xi8>, %{{.*}}: tensor<5xi8>) -> tensor<5xi8>
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : i8
func.func @greater_equal(%a: tensor<5xi1>, %b: tensor<5xi1>) -> tensor<5xi1> {
  %0 = "rlx.greater_equal"(%a, %b) : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
  return %0 : tensor<5xi1>
}

// -----

// CHECK-LABEL: func.func @where(
// CHECK-SAME: %[[C:.*]]: tensor<3x1xi8>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<f32>)
// CHECK: linalg.generic {{.*}} ins(%[[C]], %[[A]], %[[B]] : tensor<3x1xi8>, tensor<4xf32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[CI:.*]]: i8, %[[AI:.*]]: f32, %[[BI:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.trunci %[[CI]] : i8 to i1
// CHECK-NEXT: arith.select %[[P]], %[[AI]], %[[BI]] : f32
func.func @where(%c: tensor<3x1xi1>, %a: tensor<4xf32>, %b: tensor<f32>) -> tensor<3x4xf32> {
  %0 = "rlx.where"(%c, %a, %b) : (tensor<3x1xi1>, tensor<4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Chains stay separate generics here; linalg-fuse-elementwise-ops (in the
// CPU pipeline) merges them.
// CHECK-LABEL: func.func @chain(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "rlx.add"(%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = "rlx.exp"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "rlx.multiply"(%1, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

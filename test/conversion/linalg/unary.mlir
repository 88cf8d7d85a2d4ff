// RUN: gradir-opt %s --split-input-file --rlx-to-linalg | FileCheck %s

// Every unary op is one elementwise linalg.generic whose body computes the
// interpreter's formula.

// CHECK-LABEL: func.func @negative(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID:map[0-9]*]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[N]] : f32
// CHECK: return %[[R]]
func.func @negative(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "rlx.negative"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @exp_op(
// CHECK: linalg.generic
// CHECK: math.exp %{{.*}} : f64
func.func @exp_op(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "rlx.exp"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// CHECK-LABEL: func.func @log_op(
// CHECK: linalg.generic
// CHECK: math.log
func.func @log_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sqrt_op(
// CHECK: linalg.generic
// CHECK: math.sqrt
func.func @sqrt_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// rsqrt is 1 / sqrt(x), as the interpreter computes it.
// CHECK-LABEL: func.func @rsqrt(
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.generic
// CHECK: %[[S:.*]] = math.sqrt %{{.*}} : f32
// CHECK-NEXT: arith.divf %[[ONE]], %[[S]] : f32
func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sin_op(
// CHECK: linalg.generic
// CHECK: math.sin
func.func @sin_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cos_op(
// CHECK: linalg.generic
// CHECK: math.cos
func.func @cos_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @tanh_op(
// CHECK: linalg.generic
// CHECK: math.tanh
func.func @tanh_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// sigmoid: e = exp(-|x|); x >= 0 ? 1/(1+e) : e/(1+e) (no overflow).
// CHECK-LABEL: func.func @sigmoid(
// CHECK: linalg.generic
// CHECK: %[[A:.*]] = math.absf %[[IN:[^ ]*]] : f32
// CHECK-NEXT: %[[NA:.*]] = arith.negf %[[A]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[NA]]
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[E]], %{{.*}}
// CHECK-NEXT: %[[P:.*]] = arith.divf %{{.*}}, %[[D]]
// CHECK-NEXT: %[[N:.*]] = arith.divf %[[E]], %[[D]]
// CHECK-NEXT: %[[C:.*]] = arith.cmpf oge, %[[IN]], %{{.*}}
// CHECK-NEXT: arith.select %[[C]], %[[P]], %[[N]]
func.func @sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @abs(
// CHECK: linalg.generic
// CHECK: math.absf
func.func @abs(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.abs"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @relu(
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.generic
// CHECK: arith.maximumf %{{.*}}, %[[Z]] : f32
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @silu(
// CHECK: linalg.generic
// CHECK: %[[S:.*]] = arith.select
// CHECK-NEXT: arith.mulf %{{.*}}, %[[S]] : f32
func.func @silu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.silu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// gelu, the exact erf form: 0.5 * x * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @gelu(
// CHECK-DAG: %[[SQRT2:.*]] = arith.constant 1.414{{[0-9]*}} : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic
// CHECK: %[[D:.*]] = arith.divf %[[IN:[^ ]*]], %[[SQRT2]]
// CHECK-NEXT: %[[E:.*]] = math.erf %[[D]]
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[IN]], %[[HALF]]
// CHECK-NEXT: %[[P:.*]] = arith.addf %[[E]], %{{.*}}
// CHECK-NEXT: arith.mulf %[[H]], %[[P]]
func.func @gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.gelu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf_op(
// CHECK: linalg.generic
// CHECK: math.erf
func.func @erf_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @square(
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[IN]], %[[IN]] : f32
func.func @square(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.square"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// f16 and bf16 compute in f32: extend, compute, truncate (one rounding per op).
// CHECK-LABEL: func.func @exp_f16(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: math.exp %{{.*}} : f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @exp_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "rlx.exp"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

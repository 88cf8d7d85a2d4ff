// RUN: gradir-opt %s --split-input-file --rlx-math-approx | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-math-approx=ops=exp | FileCheck %s --check-prefix=EXP

// f32 exp: Cody-Waite reduction by ln2 (two math.fma), a polynomial in
// math.fma, scaling by 2^n in two halves (shifted exponent bits), NaN kept.
// CHECK-LABEL: func.func @exp_scalar(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK-NOT: math.exp
// CHECK: %[[LO:.*]] = arith.maximumf %[[X]], %{{.*}} : f32
// CHECK: %[[C:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK: %[[N:.*]] = math.roundeven %{{.*}} : f32
// CHECK: %[[R1:.*]] = math.fma %[[N]], %{{.*}}, %[[C]] : f32
// CHECK: %[[R:.*]] = math.fma %[[N]], %{{.*}}, %[[R1]] : f32
// CHECK-COUNT-6: math.fma
// CHECK: arith.fptosi %[[N]] : f32 to i32
// CHECK: arith.shrsi
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[RES:.*]] = arith.select %[[NAN]], %[[X]], %{{.*}} : f32
// CHECK: return %[[RES]] : f32
// EXP-LABEL: func.func @exp_scalar(
// EXP-NOT: math.exp
// EXP: math.roundeven
func.func @exp_scalar(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// -----

// Vectors get splat constants; every op stays elementwise on the vector type.
// CHECK-LABEL: func.func @log_vector(
// CHECK-NOT: math.log
// CHECK: arith.constant dense<{{.*}}> : vector<16xf32>
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shrui %{{.*}} : vector<16xi32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: math.fma %{{.*}} : vector<16xf32>
// CHECK: arith.cmpf oeq, %{{.*}} : vector<16xf32>
// CHECK: return %{{.*}} : vector<16xf32>
// EXP-LABEL: func.func @log_vector(
// EXP: math.log %{{.*}} : vector<16xf32>
func.func @log_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.log %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// tanh: the small-argument polynomial and 1 - 2/(e^2|x| + 1), selected on
// |x| < 0.625, sign restored with math.copysign.
// CHECK-LABEL: func.func @tanh_erf(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK-NOT: math.tanh
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: arith.divf
// CHECK: arith.cmpf olt, %[[A]]
// CHECK: %[[T:.*]] = math.copysign %{{.*}}, %[[X]] : f32
// erf: x (c0 + x^2 Q(x^2)) below 1, 1 - P_i(|x| - mid_i) above, 1 from 3.92.
// CHECK-NOT: math.erf
// CHECK: %[[B:.*]] = math.absf %[[T]] : f32
// CHECK: arith.cmpf olt, %[[B]]
// CHECK: arith.cmpf oge, %[[B]]
// CHECK: %[[E:.*]] = math.copysign %{{.*}}, %[[T]] : f32
// CHECK: return %[[E]] : f32
// EXP-LABEL: func.func @tanh_erf(
// EXP: math.tanh
// EXP: math.erf
func.func @tanh_erf(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  %1 = math.erf %0 : f32
  return %1 : f32
}

// -----

// f64 exp: its own polynomial on i64 exponent bits (the reduction's
// rounding error r_lo carried into the sum), NaN kept; with ops=exp too.
// CHECK-LABEL: func.func @exp_f64(
// CHECK-SAME: %[[X:.*]]: vector<8xf64>)
// CHECK-NOT: math.exp
// CHECK: %[[LO:.*]] = arith.maximumf %[[X]], %{{.*}} : vector<8xf64>
// CHECK: %[[C:.*]] = arith.minimumf %[[LO]], %{{.*}} : vector<8xf64>
// CHECK: %[[N:.*]] = math.roundeven %{{.*}} : vector<8xf64>
// CHECK: %[[T:.*]] = math.fma %[[N]], %{{.*}}, %[[C]] : vector<8xf64>
// CHECK: %[[R:.*]] = math.fma %[[N]], %{{.*}}, %[[T]] : vector<8xf64>
// CHECK: %[[D:.*]] = arith.subf %[[T]], %[[R]] : vector<8xf64>
// CHECK: math.fma %[[N]], %{{.*}}, %[[D]] : vector<8xf64>
// CHECK-COUNT-11: math.fma %{{.*}}, %[[R]], %{{.*}} : vector<8xf64>
// CHECK: arith.fptosi %[[N]] : vector<8xf64> to vector<8xi64>
// CHECK: arith.shli %{{.*}} : vector<8xi64>
// CHECK: arith.bitcast %{{.*}} : vector<8xi64> to vector<8xf64>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<8xf64>
// CHECK: %[[RES:.*]] = arith.select %[[NAN]], %[[X]], %{{.*}} : vector<8xi1>, vector<8xf64>
// CHECK: return %[[RES]] : vector<8xf64>
// EXP-LABEL: func.func @exp_f64(
// EXP-NOT: math.exp
// EXP: math.roundeven %{{.*}} : vector<8xf64>
func.func @exp_f64(%x: vector<8xf64>) -> vector<8xf64> {
  %0 = math.exp %x : vector<8xf64>
  return %0 : vector<8xf64>
}

// -----

// f64 log/tanh/erf and f16 are left to libm / LLVM.
// CHECK-LABEL: func.func @f64_kept(
// CHECK: math.log %{{.*}} : f64
// CHECK: math.log %{{.*}} : vector<8xf64>
// CHECK: math.tanh %{{.*}} : f16
// CHECK: math.erf %{{.*}} : f64
func.func @f64_kept(%x: f64, %v: vector<8xf64>, %h: f16) -> (f64, vector<8xf64>, f16, f64) {
  %0 = math.log %x : f64
  %1 = math.log %v : vector<8xf64>
  %2 = math.tanh %h : f16
  %3 = math.erf %x : f64
  return %0, %1, %2, %3 : f64, vector<8xf64>, f16, f64
}

// -----

// Inside a linalg.generic body (where the CPU pipeline runs it, before the
// schedule vectorizes the generic).
// CHECK-LABEL: func.func @in_generic(
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: linalg.yield
func.func @in_generic(%x: tensor<33xf32>) -> tensor<33xf32> {
  %e = tensor.empty() : tensor<33xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<33xf32>) outs(%e : tensor<33xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = math.exp %in : f32
    linalg.yield %1 : f32
  } -> tensor<33xf32>
  return %0 : tensor<33xf32>
}

// -----

// fma=false: multiply, then add (a CPU without FMA instructions).
// RUN: gradir-opt %s --split-input-file --rlx-math-approx=fma=false | FileCheck %s --check-prefix=NOFMA
// NOFMA-LABEL: func.func @no_fma(
// NOFMA-NOT: math.fma
// NOFMA: arith.mulf
// NOFMA: arith.addf
// NOFMA-NOT: math.fma
// NOFMA: return
// CHECK-LABEL: func.func @no_fma(
// CHECK: math.fma
// EXP-LABEL: func.func @no_fma(
func.func @no_fma(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %x : vector<8xf32>
  return %0 : vector<8xf32>
}

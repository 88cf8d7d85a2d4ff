// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=vjp simplify=false' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=vjp' | FileCheck %s --check-prefix=SIMPLIFY
// RUN: gradir-opt %s --split-input-file --rlx-gradient='mode=vjp' | gradir-opt --split-input-file --rlx-verify > /dev/null
// Gradients as rlx-gradient emits them (CHECK, simplify=false) and after
// rlx-simplify-gradient, which rlx-gradient runs by default (SIMPLIFY).
// mode=vjp keeps the incoming gradient %g an argument.

// The seed (TVM's gradient simplifier), form 1: out = matmul(a, transpose(b)).
// Raw: grad_a = matmul(g, transpose(transpose(b))),
//      grad_b = transpose(matmul(transpose(a), g)).
// CHECK-LABEL: func.func @main_vjp(
// CHECK-SAME: %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<5x4xf32>, %[[G:.*]]: tensor<3x5xf32>)
// CHECK: %[[BT:.*]] = "rlx.permute_dims"(%[[B]])
// CHECK: %[[BTT:.*]] = "rlx.permute_dims"(%[[BT]])
// CHECK: %[[GA:.*]] = "rlx.matmul"(%[[G]], %[[BTT]])
// CHECK: %[[AT:.*]] = "rlx.permute_dims"(%[[A]])
// CHECK: %[[M:.*]] = "rlx.matmul"(%[[AT]], %[[G]])
// CHECK: %[[GB:.*]] = "rlx.permute_dims"(%[[M]])
// CHECK: return %{{.*}}, %[[GA]], %[[GB]]
// Simplified: grad_a = matmul(g, b), grad_b = matmul(transpose(g), a).
// SIMPLIFY-LABEL: func.func @main_vjp(
// SIMPLIFY-SAME: %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<5x4xf32>, %[[G:.*]]: tensor<3x5xf32>)
// SIMPLIFY-NEXT: %[[BT:.*]] = "rlx.permute_dims"(%[[B]])
// SIMPLIFY-NEXT: %[[OUT:.*]] = "rlx.matmul"(%[[A]], %[[BT]])
// SIMPLIFY-NEXT: %[[GA:.*]] = "rlx.matmul"(%[[G]], %[[B]]) : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
// SIMPLIFY-NEXT: %[[GT:.*]] = "rlx.permute_dims"(%[[G]]) {axes = array<i64: 1, 0>}
// SIMPLIFY-NEXT: %[[GB:.*]] = "rlx.matmul"(%[[GT]], %[[A]]) : (tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
// SIMPLIFY-NEXT: return %[[OUT]], %[[GA]], %[[GB]]
func.func @main(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %bt = "rlx.permute_dims"(%b) {axes = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %0 = "rlx.matmul"(%a, %bt) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Form 2: out = matmul(transpose(a), b).
// Raw: grad_a = transpose(matmul(g, transpose(b))),
//      grad_b = matmul(transpose(transpose(a)), g).
// CHECK-LABEL: func.func @main_vjp(
// CHECK-SAME: %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[G:.*]]: tensor<3x5xf32>)
// CHECK: %[[AT:.*]] = "rlx.permute_dims"(%[[A]])
// CHECK: %[[BT:.*]] = "rlx.permute_dims"(%[[B]])
// CHECK: %[[M:.*]] = "rlx.matmul"(%[[G]], %[[BT]])
// CHECK: %[[ATT:.*]] = "rlx.permute_dims"(%[[AT]])
// CHECK: %[[GB:.*]] = "rlx.matmul"(%[[ATT]], %[[G]])
// CHECK: %[[GA:.*]] = "rlx.permute_dims"(%[[M]])
// CHECK: return %{{.*}}, %[[GA]], %[[GB]]
// Simplified: grad_a = matmul(b, transpose(g)), grad_b = matmul(a, g).
// SIMPLIFY-LABEL: func.func @main_vjp(
// SIMPLIFY-SAME: %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[G:.*]]: tensor<3x5xf32>)
// SIMPLIFY-NEXT: %[[AT:.*]] = "rlx.permute_dims"(%[[A]])
// SIMPLIFY-NEXT: %[[OUT:.*]] = "rlx.matmul"(%[[AT]], %[[B]])
// SIMPLIFY-NEXT: %[[GB:.*]] = "rlx.matmul"(%[[A]], %[[G]]) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// SIMPLIFY-NEXT: %[[GT:.*]] = "rlx.permute_dims"(%[[G]]) {axes = array<i64: 1, 0>}
// SIMPLIFY-NEXT: %[[GA:.*]] = "rlx.matmul"(%[[B]], %[[GT]]) : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
// SIMPLIFY-NEXT: return %[[OUT]], %[[GA]], %[[GB]]
func.func @main(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %at = "rlx.permute_dims"(%a) {axes = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %0 = "rlx.matmul"(%at, %b) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Form 3: out = matmul(transpose(a), transpose(b)).
// Raw: grad_a = transpose(matmul(g, transpose(transpose(b)))),
//      grad_b = transpose(matmul(transpose(transpose(a)), g)).
// CHECK-LABEL: func.func @main_vjp(
// CHECK-SAME: %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<5x4xf32>, %[[G:.*]]: tensor<3x5xf32>)
// CHECK: %[[AT:.*]] = "rlx.permute_dims"(%[[A]])
// CHECK: %[[BT:.*]] = "rlx.permute_dims"(%[[B]])
// CHECK: %[[BTT:.*]] = "rlx.permute_dims"(%[[BT]])
// CHECK: %[[M1:.*]] = "rlx.matmul"(%[[G]], %[[BTT]])
// CHECK: %[[ATT:.*]] = "rlx.permute_dims"(%[[AT]])
// CHECK: %[[M2:.*]] = "rlx.matmul"(%[[ATT]], %[[G]])
// CHECK: %[[GB:.*]] = "rlx.permute_dims"(%[[M2]])
// CHECK: %[[GA:.*]] = "rlx.permute_dims"(%[[M1]])
// CHECK: return %{{.*}}, %[[GA]], %[[GB]]
// Simplified: grad_a = matmul(transpose(b), transpose(g)),
//             grad_b = matmul(transpose(g), transpose(a)), reusing the
// forward's transposes of a and b.
// SIMPLIFY-LABEL: func.func @main_vjp(
// SIMPLIFY-SAME: %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<5x4xf32>, %[[G:.*]]: tensor<3x5xf32>)
// SIMPLIFY-NEXT: %[[AT:.*]] = "rlx.permute_dims"(%[[A]])
// SIMPLIFY-NEXT: %[[BT:.*]] = "rlx.permute_dims"(%[[B]])
// SIMPLIFY-NEXT: %[[OUT:.*]] = "rlx.matmul"(%[[AT]], %[[BT]])
// SIMPLIFY-NEXT: %[[GT:.*]] = "rlx.permute_dims"(%[[G]])
// SIMPLIFY-NEXT: %[[GB:.*]] = "rlx.matmul"(%[[GT]], %[[AT]]) : (tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
// SIMPLIFY-NEXT: %[[GA:.*]] = "rlx.matmul"(%[[BT]], %[[GT]]) : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
// SIMPLIFY-NEXT: return %[[OUT]], %[[GA]], %[[GB]]
func.func @main(%a: tensor<4x3xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %at = "rlx.permute_dims"(%a) {axes = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %bt = "rlx.permute_dims"(%b) {axes = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %0 = "rlx.matmul"(%at, %bt) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Must not fire: a plain matmul's gradient has no transpose of a transpose
// nor of a matmul; it comes out unchanged.
// CHECK-LABEL: func.func @main_vjp(
// CHECK-SAME: %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[G:.*]]: tensor<3x5xf32>)
// CHECK-NEXT: %[[OUT:.*]] = "rlx.matmul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[BT:.*]] = "rlx.permute_dims"(%[[B]])
// CHECK-NEXT: %[[GA:.*]] = "rlx.matmul"(%[[G]], %[[BT]])
// CHECK-NEXT: %[[AT:.*]] = "rlx.permute_dims"(%[[A]])
// CHECK-NEXT: %[[GB:.*]] = "rlx.matmul"(%[[AT]], %[[G]])
// CHECK-NEXT: return %[[OUT]], %[[GA]], %[[GB]]
// SIMPLIFY-LABEL: func.func @main_vjp(
// SIMPLIFY-SAME: %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[G:.*]]: tensor<3x5xf32>)
// SIMPLIFY-NEXT: %[[OUT:.*]] = "rlx.matmul"(%[[A]], %[[B]])
// SIMPLIFY-NEXT: %[[BT:.*]] = "rlx.permute_dims"(%[[B]])
// SIMPLIFY-NEXT: %[[GA:.*]] = "rlx.matmul"(%[[G]], %[[BT]])
// SIMPLIFY-NEXT: %[[AT:.*]] = "rlx.permute_dims"(%[[A]])
// SIMPLIFY-NEXT: %[[GB:.*]] = "rlx.matmul"(%[[AT]], %[[G]])
// SIMPLIFY-NEXT: return %[[OUT]], %[[GA]], %[[GB]]
func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// sum's VJP broadcasts, broadcast_to's VJP sums it back: collapse_sum_to of
// broadcast_to is the gradient times the broadcast count; multiply by the
// broadcast cotangent uses it 0-d.
// CHECK-LABEL: func.func @main_vjp(
// CHECK-SAME: %[[V:.*]]: tensor<4x1xf32>, %[[W:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<f32>)
// CHECK: %[[GB:.*]] = "rlx.broadcast_to"(%[[G]]) : (tensor<f32>) -> tensor<4xf32>
// CHECK: %[[GS:.*]] = "rlx.multiply"(%[[GB]], %[[W]])
// CHECK: %[[R:.*]] = "rlx.reshape"(%[[GS]]) : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: %[[B:.*]] = "rlx.broadcast_to"(%[[R]]) : (tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK: %[[GV:.*]] = "rlx.collapse_sum_to"(%[[B]]) : (tensor<4x3xf32>) -> tensor<4x1xf32>
// CHECK: return %{{.*}}, %[[GV]], %{{.*}}
// SIMPLIFY-LABEL: func.func @main_vjp(
// SIMPLIFY-SAME: %[[V:.*]]: tensor<4x1xf32>, %[[W:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<f32>)
// SIMPLIFY: %[[GS:.*]] = "rlx.multiply"(%[[G]], %[[W]]) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// SIMPLIFY: %[[R:.*]] = "rlx.reshape"(%[[GS]]) : (tensor<4xf32>) -> tensor<4x1xf32>
// SIMPLIFY-NEXT: %[[THREE:.*]] = arith.constant dense<3.000000e+00> : tensor<f32>
// SIMPLIFY-NEXT: %[[GV:.*]] = "rlx.multiply"(%[[R]], %[[THREE]]) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// SIMPLIFY-NEXT: return %{{.*}}, %[[GV]], %{{.*}}
func.func @main(%v: tensor<4x1xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %b = "rlx.broadcast_to"(%v) : (tensor<4x1xf32>) -> tensor<4x3xf32>
  %s = "rlx.sum"(%b) {axis = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  %p = "rlx.multiply"(%s, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = "rlx.sum"(%p) : (tensor<4xf32>) -> tensor<f32>
  return %t : tensor<f32>
}

// -----

// Symbolic zeros: x * zeros_like(x) contributes a zero adjoint; the
// multiply by zeros and the addition of it disappear, with the forward
// zero term.
// CHECK-LABEL: func.func @main_vjp(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<2x3xf32>, %[[G:.*]]: tensor<f32>)
// CHECK: %[[Z:.*]] = "rlx.zeros_like"(%[[X]])
// CHECK: %[[GB:.*]] = "rlx.broadcast_to"(%[[G]])
// CHECK: %[[GW:.*]] = "rlx.multiply"(%[[GB]], %[[W]])
// CHECK: %[[GZ:.*]] = "rlx.multiply"(%[[GB]], %[[Z]])
// CHECK: %[[GX:.*]] = "rlx.add"(%[[GW]], %[[GZ]])
// CHECK: return %{{.*}}, %[[GX]], %{{.*}}
// SIMPLIFY-LABEL: func.func @main_vjp(
// SIMPLIFY-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<2x3xf32>, %[[G:.*]]: tensor<f32>)
// SIMPLIFY-NEXT: %[[P:.*]] = "rlx.multiply"(%[[X]], %[[W]])
// SIMPLIFY-NEXT: %[[T:.*]] = "rlx.sum"(%[[P]])
// SIMPLIFY-NEXT: %[[GX:.*]] = "rlx.multiply"(%[[G]], %[[W]])
// SIMPLIFY-NEXT: %[[GW:.*]] = "rlx.multiply"(%[[G]], %[[X]])
// SIMPLIFY-NEXT: return %[[T]], %[[GX]], %[[GW]]
func.func @main(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<f32> {
  %z = "rlx.zeros_like"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = "rlx.multiply"(%x, %z) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = "rlx.multiply"(%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %q = "rlx.add"(%m, %p) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = "rlx.sum"(%q) : (tensor<2x3xf32>) -> tensor<f32>
  return %t : tensor<f32>
}

// -----

// permute_dims and reshape chains: their VJPs are chains too, folded into
// one op each (forward and backward).
// CHECK-LABEL: func.func @main_vjp(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>, %[[G1:.*]]: tensor<4x2x3xf32>, %[[G2:.*]]: tensor<24xf32>)
// CHECK: %[[R1:.*]] = "rlx.reshape"(%[[G2]]) : (tensor<24xf32>) -> tensor<6x4xf32>
// CHECK: %[[R2:.*]] = "rlx.reshape"(%[[R1]]) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[P1:.*]] = "rlx.permute_dims"(%[[G1]]) {axes = array<i64: 2, 0, 1>}
// CHECK: %[[P2:.*]] = "rlx.permute_dims"(%[[P1]]) {axes = array<i64: 2, 0, 1>}
// CHECK: "rlx.add"(%[[R2]], %[[P2]])
// SIMPLIFY-LABEL: func.func @main_vjp(
// SIMPLIFY-SAME: %[[X:.*]]: tensor<2x3x4xf32>, %[[G1:.*]]: tensor<4x2x3xf32>, %[[G2:.*]]: tensor<24xf32>)
// SIMPLIFY-NEXT: %[[Y1:.*]] = "rlx.permute_dims"(%[[X]]) {axes = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// SIMPLIFY-NEXT: %[[Y2:.*]] = "rlx.reshape"(%[[X]]) : (tensor<2x3x4xf32>) -> tensor<24xf32>
// SIMPLIFY-NEXT: %[[R:.*]] = "rlx.reshape"(%[[G2]]) : (tensor<24xf32>) -> tensor<2x3x4xf32>
// SIMPLIFY-NEXT: %[[P:.*]] = "rlx.permute_dims"(%[[G1]]) {axes = array<i64: 1, 2, 0>} : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
// SIMPLIFY-NEXT: %[[GX:.*]] = "rlx.add"(%[[R]], %[[P]])
// SIMPLIFY-NEXT: return %[[Y1]], %[[Y2]], %[[GX]]
func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<24xf32>) {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "rlx.permute_dims"(%0) {axes = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  %2 = "rlx.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %3 = "rlx.reshape"(%2) : (tensor<6x4xf32>) -> tensor<24xf32>
  return %1, %3 : tensor<4x2x3xf32>, tensor<24xf32>
}

// RUN: gradir-opt %s --rlx-fuse-attention=cache-bytes=4096 --rlx-gradient | FileCheck %s
// The fused attention is ordinary input to rlx-gradient: @main_adjoint's
// forward loop computes the blocks (and records its carried output per
// iteration), its reverse loop recomputes each block's scores and softmax
// from q's rows (16 of the 64) and runs the block's backward.  No score
// matrix of all 64 rows is made.  (Numbers against finite differences:
// rlx-fuse-attention-numeric.py.)
// CHECK-LABEL: func.func @main_adjoint
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x64x16xf32>
// CHECK-NOT: tensor<2x64x64xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}}) -> (tensor<2x64x16xf32>
// CHECK: tensor.extract_slice %[[Q]][0, %{{.*}}, 0] [2, 16, 16] [1, 1, 1]
// CHECK: "rlx.softmax"(%{{.*}}) {axis = array<i64: -1>} : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: tensor.extract_slice %[[Q]][0, %{{.*}}, 0] [2, 16, 16] [1, 1, 1]
// CHECK: "rlx.softmax"(%{{.*}}) {axis = array<i64: -1>} : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK: scf.yield
// CHECK-NOT: tensor<2x64x64xf32>
// CHECK: return
func.func @main(%q: tensor<2x64x16xf32>, %k: tensor<2x64x16xf32>, %v: tensor<2x64x16xf32>) -> tensor<f32> {
  %kt = "rlx.permute_dims"(%k) {axes = array<i64: 0, 2, 1>} : (tensor<2x64x16xf32>) -> tensor<2x16x64xf32>
  %s = "rlx.matmul"(%q, %kt) : (tensor<2x64x16xf32>, tensor<2x16x64xf32>) -> tensor<2x64x64xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %a = "rlx.multiply"(%s, %c) : (tensor<2x64x64xf32>, tensor<f32>) -> tensor<2x64x64xf32>
  %p = "rlx.softmax"(%a) {axis = array<i64: -1>} : (tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<2x64x64xf32>, tensor<2x64x16xf32>) -> tensor<2x64x16xf32>
  %l = "rlx.sum"(%o) : (tensor<2x64x16xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

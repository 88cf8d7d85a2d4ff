// RUN: gradir-opt %s --rlx-fuse-attention=cache-bytes=4096 | FileCheck %s
// RUN: gradir-opt %s --pass-pipeline='builtin.module(func.func(rlx-fuse-attention{cache-bytes=4096}))' | FileCheck %s
// RUN: gradir-opt %s --rlx-fuse-attention | FileCheck %s --check-prefix=DEFAULT
// RUN: gradir-opt %s --rlx-fuse-attention=cache-bytes=4096 | gradir-opt --rlx-verify | FileCheck %s --check-prefix=VERIFY

// VERIFY-LABEL: func.func @sdpa_mask

// F.scaled_dot_product_attention as the importer writes it, with a float
// mask: 64 x 64 f32 scores (16 KiB) over 4096 bytes: 16 rows of 64 x 4
// bytes per block, 4 blocks.  q's and the mask's rows are sliced; the
// scale, k^T and v are used whole.
// CHECK-LABEL: func.func @sdpa_mask
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x2x64x16xf32>, %[[K:[^:]*]]: tensor<1x2x64x16xf32>, %[[V:[^:]*]]: tensor<1x2x64x16xf32>, %[[M:[^:]*]]: tensor<64x64xf32>)
// CHECK: %[[KT:.*]] = "rlx.permute_dims"(%[[K]])
// CHECK: %[[C:.*]] = arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK-DAG: %[[LB:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[UB:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[STEP:.*]] = arith.constant 16 : index
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<1x2x64x16xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<1x2x64x16xf32>) {
// CHECK-NEXT: %[[QB:.*]] = tensor.extract_slice %[[Q]][0, 0, %[[I]], 0] [1, 2, 16, 16] [1, 1, 1, 1] : tensor<1x2x64x16xf32> to tensor<1x2x16x16xf32>
// CHECK-NEXT: %[[S:.*]] = "rlx.matmul"(%[[QB]], %[[KT]]) : (tensor<1x2x16x16xf32>, tensor<1x2x16x64xf32>) -> tensor<1x2x16x64xf32>
// CHECK-NEXT: %[[A:.*]] = "rlx.multiply"(%[[S]], %[[C]]) : (tensor<1x2x16x64xf32>, tensor<f32>) -> tensor<1x2x16x64xf32>
// CHECK-NEXT: %[[MB:.*]] = tensor.extract_slice %[[M]][%[[I]], 0] [16, 64] [1, 1] : tensor<64x64xf32> to tensor<16x64xf32>
// CHECK-NEXT: %[[AM:.*]] = "rlx.add"(%[[A]], %[[MB]]) : (tensor<1x2x16x64xf32>, tensor<16x64xf32>) -> tensor<1x2x16x64xf32>
// CHECK-NEXT: %[[P:.*]] = "rlx.softmax"(%[[AM]]) {axis = array<i64: -1>} : (tensor<1x2x16x64xf32>) -> tensor<1x2x16x64xf32>
// CHECK-NEXT: %[[OB:.*]] = "rlx.matmul"(%[[P]], %[[V]]) : (tensor<1x2x16x64xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x16x16xf32>
// CHECK-NEXT: %[[NEXT:.*]] = tensor.insert_slice %[[OB]] into %[[ACC]][0, 0, %[[I]], 0] [1, 2, 16, 16] [1, 1, 1, 1] : tensor<1x2x16x16xf32> into tensor<1x2x64x16xf32>
// CHECK-NEXT: scf.yield %[[NEXT]] : tensor<1x2x64x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<1x2x64x16xf32>
// DEFAULT-LABEL: func.func @sdpa_mask
// DEFAULT-NOT: scf.for
// DEFAULT: return
func.func @sdpa_mask(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>, %m: tensor<64x64xf32>) -> tensor<1x2x64x16xf32> {
  %kt = "rlx.permute_dims"(%k) {axes = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x16xf32>) -> tensor<1x2x16x64xf32>
  %s = "rlx.matmul"(%q, %kt) : (tensor<1x2x64x16xf32>, tensor<1x2x16x64xf32>) -> tensor<1x2x64x64xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %a = "rlx.multiply"(%s, %c) : (tensor<1x2x64x64xf32>, tensor<f32>) -> tensor<1x2x64x64xf32>
  %am = "rlx.add"(%a, %m) : (tensor<1x2x64x64xf32>, tensor<64x64xf32>) -> tensor<1x2x64x64xf32>
  %p = "rlx.softmax"(%am) {axis = array<i64: -1>} : (tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<1x2x64x64xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// is_causal: a scale, then where(tril, scores, -inf); the i1 mask's rows
// are sliced, the -inf scalar is used whole.
// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x64x16xf32>, %[[KT:[^:]*]]: tensor<2x16x64xf32>, %[[V:[^:]*]]: tensor<2x64x16xf32>)
// CHECK-DAG: %[[TRIL:.*]] = arith.constant dense<{{.*}}> : tensor<64x64xi1>
// CHECK-DAG: %[[NEG:.*]] = arith.constant dense<0xFF800000> : tensor<f32>
// CHECK: scf.for
// CHECK: "rlx.multiply"
// CHECK-NEXT: %[[TB:.*]] = tensor.extract_slice %[[TRIL]][%{{.*}}, 0] [16, 64] [1, 1] : tensor<64x64xi1> to tensor<16x64xi1>
// CHECK-NEXT: %[[W:.*]] = "rlx.where"(%[[TB]], %{{.*}}, %[[NEG]]) : (tensor<16x64xi1>, tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: "rlx.softmax"(%[[W]])
// CHECK: return
func.func @causal(%q: tensor<2x64x16xf32>, %kt: tensor<2x16x64xf32>, %v: tensor<2x64x16xf32>) -> tensor<2x64x16xf32> {
  %tril = arith.constant dense<true> : tensor<64x64xi1>
  %neg = arith.constant dense<0xFF800000> : tensor<f32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %s = "rlx.matmul"(%q, %kt) : (tensor<2x64x16xf32>, tensor<2x16x64xf32>) -> tensor<2x64x64xf32>
  %a = "rlx.multiply"(%s, %c) : (tensor<2x64x64xf32>, tensor<f32>) -> tensor<2x64x64xf32>
  %w = "rlx.where"(%tril, %a, %neg) : (tensor<64x64xi1>, tensor<2x64x64xf32>, tensor<f32>) -> tensor<2x64x64xf32>
  %p = "rlx.softmax"(%w) {axis = array<i64: -1>} : (tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<2x64x64xf32>, tensor<2x64x16xf32>) -> tensor<2x64x16xf32>
  return %o : tensor<2x64x16xf32>
}

// Written by hand: divided by sqrt(d), softmax over axis 2 (the last), a
// mask broadcast over the rows (1 x 64) used whole; f64: 8 rows of 64 x 8
// bytes per block.
// CHECK-LABEL: func.func @hand_written
// CHECK-SAME: %[[B:[^:]*]]: tensor<1x64xf64>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: "rlx.divide"
// CHECK-NOT: tensor.extract_slice
// CHECK: "rlx.subtract"(%{{.*}}, %[[B]]) : (tensor<2x8x64xf64>, tensor<1x64xf64>) -> tensor<2x8x64xf64>
// CHECK-NEXT: "rlx.softmax"(%{{.*}}) {axis = array<i64: 2>}
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}, 0] [2, 8, 16] [1, 1, 1] : tensor<2x8x16xf64> into tensor<2x64x16xf64>
// CHECK: return
func.func @hand_written(%q: tensor<2x64x16xf64>, %k: tensor<2x64x16xf64>, %v: tensor<2x64x16xf64>, %b: tensor<1x64xf64>) -> tensor<2x64x16xf64> {
  %kt = "rlx.permute_dims"(%k) {axes = array<i64: 0, 2, 1>} : (tensor<2x64x16xf64>) -> tensor<2x16x64xf64>
  %s = "rlx.matmul"(%q, %kt) : (tensor<2x64x16xf64>, tensor<2x16x64xf64>) -> tensor<2x64x64xf64>
  %c = arith.constant dense<4.0> : tensor<f64>
  %a = "rlx.divide"(%s, %c) : (tensor<2x64x64xf64>, tensor<f64>) -> tensor<2x64x64xf64>
  %ab = "rlx.subtract"(%a, %b) : (tensor<2x64x64xf64>, tensor<1x64xf64>) -> tensor<2x64x64xf64>
  %p = "rlx.softmax"(%ab) {axis = array<i64: 2>} : (tensor<2x64x64xf64>) -> tensor<2x64x64xf64>
  %o = "rlx.matmul"(%p, %v) : (tensor<2x64x64xf64>, tensor<2x64x16xf64>) -> tensor<2x64x16xf64>
  return %o : tensor<2x64x16xf64>
}

// 7 query rows of 256 x 4 bytes: 4096 bytes fit 4 rows, 7 has no divisor
// from 2 to 4: blocks of 4 rows in the loop (one), then a ragged block of
// 3 rows on static slices.
// CHECK-LABEL: func.func @ragged
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<7x16xf32>
// CHECK-DAG: %[[UB:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[STEP:.*]] = arith.constant 4 : index
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[UB]] step %[[STEP]]
// CHECK: tensor.extract_slice %[[Q]][%{{.*}}, 0] [4, 16] [1, 1] : tensor<7x16xf32> to tensor<4x16xf32>
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[QT:.*]] = tensor.extract_slice %[[Q]][4, 0] [3, 16] [1, 1] : tensor<7x16xf32> to tensor<3x16xf32>
// CHECK-NEXT: "rlx.matmul"(%[[QT]], %{{.*}}) : (tensor<3x16xf32>, tensor<16x256xf32>) -> tensor<3x256xf32>
// CHECK: %[[OT:.*]] = "rlx.matmul"(%{{.*}}, %{{.*}}) : (tensor<3x256xf32>, tensor<256x8xf32>) -> tensor<3x8xf32>
// CHECK-NEXT: %[[OUT:.*]] = tensor.insert_slice %[[OT]] into %[[R]][4, 0] [3, 8] [1, 1] : tensor<3x8xf32> into tensor<7x8xf32>
// CHECK-NEXT: return %[[OUT]] : tensor<7x8xf32>
func.func @ragged(%q: tensor<7x16xf32>, %kt: tensor<16x256xf32>, %v: tensor<256x8xf32>) -> tensor<7x8xf32> {
  %s = "rlx.matmul"(%q, %kt) : (tensor<7x16xf32>, tensor<16x256xf32>) -> tensor<7x256xf32>
  %p = "rlx.softmax"(%s) : (tensor<7x256xf32>) -> tensor<7x256xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<7x256xf32>, tensor<256x8xf32>) -> tensor<7x8xf32>
  return %o : tensor<7x8xf32>
}

// Left alone: the probabilities are also returned (need_weights), the
// scores have a second use, the softmax is over the query axis, the scores
// fit.
// CHECK-LABEL: func.func @weights_returned
// CHECK-NOT: scf.for
// CHECK: return
func.func @weights_returned(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> (tensor<64x16xf32>, tensor<64x64xf32>) {
  %s = "rlx.matmul"(%q, %kt) : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %p = "rlx.softmax"(%s) {axis = array<i64: -1>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<64x64xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
  return %o, %p : tensor<64x16xf32>, tensor<64x64xf32>
}

// CHECK-LABEL: func.func @scores_reused
// CHECK-NOT: scf.for
// CHECK: return
func.func @scores_reused(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> (tensor<64x16xf32>, tensor<f32>) {
  %s = "rlx.matmul"(%q, %kt) : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %a = "rlx.multiply"(%s, %c) : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %p = "rlx.softmax"(%a) {axis = array<i64: -1>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<64x64xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
  %z = "rlx.sum"(%s) : (tensor<64x64xf32>) -> tensor<f32>
  return %o, %z : tensor<64x16xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @query_axis_softmax
// CHECK-NOT: scf.for
// CHECK: return
func.func @query_axis_softmax(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %s = "rlx.matmul"(%q, %kt) : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %p = "rlx.softmax"(%s) {axis = array<i64: 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<64x64xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
  return %o : tensor<64x16xf32>
}

// The scores are made before a loop whose body takes their softmax: the
// ops are not in one block, the loop's body is left alone.
// CHECK-LABEL: func.func @scores_outside_loop
// CHECK: %[[S:.*]] = "rlx.matmul"
// CHECK: scf.for
// CHECK-NEXT: "rlx.softmax"(%[[S]])
// CHECK-NOT: scf.for
// CHECK: return
func.func @scores_outside_loop(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %s = "rlx.matmul"(%q, %kt) : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %q) -> (tensor<64x16xf32>) {
    %p = "rlx.softmax"(%s) {axis = array<i64: -1>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %o = "rlx.matmul"(%p, %v) : (tensor<64x64xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
    scf.yield %o : tensor<64x16xf32>
  }
  return %r : tensor<64x16xf32>
}

// Attention inside a loop's body is fused there (a loop in the loop).
// CHECK-LABEL: func.func @inside_loop
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.extract_slice
// CHECK: "rlx.softmax"(%{{.*}}) {axis = array<i64: -1>} : (tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK: return
func.func @inside_loop(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%x = %q) -> (tensor<64x16xf32>) {
    %s = "rlx.matmul"(%x, %kt) : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
    %p = "rlx.softmax"(%s) {axis = array<i64: -1>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %o = "rlx.matmul"(%p, %v) : (tensor<64x64xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
    scf.yield %o : tensor<64x16xf32>
  }
  return %r : tensor<64x16xf32>
}

// 8 x 64 x 4 = 2048 bytes fit in 4096.
// CHECK-LABEL: func.func @fits
// CHECK-NOT: scf.for
// CHECK: return
func.func @fits(%q: tensor<8x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> tensor<8x16xf32> {
  %s = "rlx.matmul"(%q, %kt) : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
  %p = "rlx.softmax"(%s) {axis = array<i64: -1>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  return %o : tensor<8x16xf32>
}

// The default budget, 524288 bytes: 1024 x 1024 f32 scores (4 MiB per
// head) go in blocks of 128 rows.
// CHECK-LABEL: func.func @long_sequence
// DEFAULT-LABEL: func.func @long_sequence
// DEFAULT-DAG: %[[UB:.*]] = arith.constant 1024 : index
// DEFAULT-DAG: %[[STEP:.*]] = arith.constant 128 : index
// DEFAULT: scf.for %{{.*}} = %{{.*}} to %[[UB]] step %[[STEP]]
// DEFAULT: "rlx.softmax"(%{{.*}}) {axis = array<i64: -1>} : (tensor<1x4x128x1024xf32>) -> tensor<1x4x128x1024xf32>
func.func @long_sequence(%q: tensor<1x4x1024x64xf32>, %k: tensor<1x4x1024x64xf32>, %v: tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32> {
  %kt = "rlx.permute_dims"(%k) {axes = array<i64: 0, 1, 3, 2>} : (tensor<1x4x1024x64xf32>) -> tensor<1x4x64x1024xf32>
  %s = "rlx.matmul"(%q, %kt) : (tensor<1x4x1024x64xf32>, tensor<1x4x64x1024xf32>) -> tensor<1x4x1024x1024xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %a = "rlx.multiply"(%s, %c) : (tensor<1x4x1024x1024xf32>, tensor<f32>) -> tensor<1x4x1024x1024xf32>
  %p = "rlx.softmax"(%a) {axis = array<i64: -1>} : (tensor<1x4x1024x1024xf32>) -> tensor<1x4x1024x1024xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<1x4x1024x1024xf32>, tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32>
  return %o : tensor<1x4x1024x64xf32>
}

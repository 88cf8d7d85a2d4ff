// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s
// RUN: gradir-opt %s --rlx-lower-to-llvm='stage=bufferized' | FileCheck %s --check-prefix=BUF

// An op rlx-gradient recomputes in the backward (grad.recomputed) lowers to
// ops that keep the mark, so the pipeline's upstream CSE does not merge the
// recomputation with the forward op (which would undo rematerialization).
// CHECK-LABEL: func.func @main(
// CHECK: linalg.generic
// CHECK-NOT: grad.recomputed
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: grad.recomputed
// CHECK: math.exp
// CHECK: return

// Without the mark the two exps would be one; with it two (vectorized)
// computations of exp remain (rlx-math-approx's polynomial: one
// math.roundeven each; 16 elements: more than rlx-scalarize computes on
// scalars).
// BUF-LABEL: func.func @main(
// BUF-NOT: math.exp
// BUF-COUNT-2: math.roundeven
// BUF-NOT: math.roundeven
// BUF: return
func.func @main(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = "rlx.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = "rlx.exp"(%x) {grad.recomputed} : (tensor<16xf32>) -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

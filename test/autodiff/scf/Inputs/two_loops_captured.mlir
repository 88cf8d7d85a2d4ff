// Two loops in a row; the first loop's body computes exp(w) itself, the
// second captures exp(w) from outside.  Under remat=auto (budget 0.5) the
// first loop is recomputed in the backward, whose loop captures the stack
// of states the first loop records: every use of that stack, also inside
// the backward loop's body (where it is captured, not an operand), must
// move to the clone (this used to abort in MLIR: an operand index past the
// loop's operands).  f32: in f64 the planner picks another plan.
func.func @main(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e0 = "rlx.exp"(%w) : (tensor<3xf32>) -> tensor<3xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<3xf32>) {
    %e = "rlx.exp"(%w) : (tensor<3xf32>) -> tensor<3xf32>
    %m = "rlx.multiply"(%h, %e) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %dead = "rlx.sin"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    %t = "rlx.tanh"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  }
  %r2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %r) -> (tensor<3xf32>) {
    %m = "rlx.multiply"(%h, %e0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %t = "rlx.tanh"(%m) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  }
  %after = "rlx.multiply"(%r2, %e0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %a = "rlx.add"(%after, %r2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = "rlx.sum"(%a) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

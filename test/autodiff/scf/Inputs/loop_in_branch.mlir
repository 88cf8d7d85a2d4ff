func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>, %c: tensor<i1>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %b = tensor.extract %c[] : tensor<i1>
  %r = scf.if %b -> (tensor<3xf64>) {
    %l = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
      %m = "rlx.multiply"(%h, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
      %s = "rlx.sin"(%m) : (tensor<3xf64>) -> tensor<3xf64>
      scf.yield %s : tensor<3xf64>
    }
    scf.yield %l : tensor<3xf64>
  } else {
    %z = scf.for %i = %c3 to %c0 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
      %s = "rlx.exp"(%h) : (tensor<3xf64>) -> tensor<3xf64>
      scf.yield %w : tensor<3xf64>
    }
    %q = "rlx.multiply"(%z, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %q : tensor<3xf64>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}

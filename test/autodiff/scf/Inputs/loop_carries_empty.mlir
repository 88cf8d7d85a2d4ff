// A loop carrying an empty tensor beside a normal one (test/autodiff/scf/numeric.py).
func.func @main(%x: tensor<3xf64>, %e0: tensor<0xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x, %e = %e0) -> (tensor<3xf64>, tensor<0xf64>) {
    %hn = "rlx.sin"(%h) : (tensor<3xf64>) -> tensor<3xf64>
    %en = "rlx.exp"(%e) : (tensor<0xf64>) -> tensor<0xf64>
    scf.yield %hn, %en : tensor<3xf64>, tensor<0xf64>
  }
  %s = "rlx.sum"(%r#0) : (tensor<3xf64>) -> tensor<f64>
  %s2 = "rlx.sum"(%r#1) : (tensor<0xf64>) -> tensor<f64>
  %t = "rlx.add"(%s, %s2) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %t : tensor<f64>
}

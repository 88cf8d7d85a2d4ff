// Errors the IRDL definition of grad reports while parsing.
// RUN: mlir-opt --irdl-file=%grad_irdl %s --split-input-file --verify-diagnostics

func.func @marker_type_change(%a: tensor<2xf32>) {
  // expected-error @+1 {{expected 'tensor<2xf32>' but got 'tensor<3xf32>'}}
  %0 = "grad.no_grad"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return
}

// Errors the IRDL definitions themselves report while parsing.
// RUN: mlir-opt --irdl-file=%rlx_irdl %s --split-input-file --verify-diagnostics

func.func @operand_count(%a: tensor<2xf32>) {
  // expected-error @+1 {{op expects exactly 2 operands, but got 1}}
  %0 = "rlx.add"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @unary_type_change(%a: tensor<2xf32>) {
  // expected-error @+1 {{expected 'tensor<2xf32>' but got 'tensor<3xf32>'}}
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @not_a_tensor(%a: f32, %b: f32) {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.f32'}}
  %0 = "rlx.add"(%a, %b) : (f32, f32) -> f32
  return
}

// -----

func.func @missing_required_attribute(%a: tuple<tensor<2x3xf32>>) {
  // expected-error @+1 {{attribute "index" is expected but not provided}}
  %0 = "rlx.tuple_get_item"(%a) : (tuple<tensor<2x3xf32>>) -> tensor<2x3xf32>
  return
}

// -----

func.func @unknown_op(%a: tensor<2xf32>) {
  // expected-error @+1 {{unregistered operation 'rlx.dense' found in dialect ('rlx') that does not allow unknown operations}}
  %0 = "rlx.dense"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return
}


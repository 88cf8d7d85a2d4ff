// RUN: gradir-opt %s --split-input-file --verify-diagnostics
// Errors from the parser, from IRDL constraints and from passes, at the
// annotated lines.

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{use of undeclared SSA value name}}
  return %b : tensor<2xf32>
}

// -----

func.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @below {{op expects exactly 1 operands, but got 2}}
  %0 = "rlx.exp"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @h(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error-re @+1 {{custom assembly format is not supported for '{{[a-z.]+}}'}}
  %0 = rlx.exp %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Notes are matched too.
func.func @n(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-note @+1 {{prior use here}}
  %0 = "rlx.exp"(%b) : (tensor<2xf32>) -> tensor<2xf32>
  // expected-error @+1 {{use of value '%b' expects different type than prior uses: 'tensor<3xf32>' vs 'tensor<2xf32>'}}
  %1 = "rlx.exp"(%b) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<2xf32>
}

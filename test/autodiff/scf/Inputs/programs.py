"""Control-flow programs shared by the scf gradient and compile tests
(float64 unless a test substitutes f32).  Each entry: name -> (IR text,
argument shapes/dtypes maker)."""

import numpy as np

RNN = """
func.func @main(%x: tensor<{T}x3xf64>, %h0: tensor<3xf64>, %w: tensor<3x3xf64>) -> tensor<f64> {{
  %c0 = arith.constant 0 : index
  %cT = arith.constant {T} : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %cT step %c1 iter_args(%h = %h0) -> (tensor<3xf64>) {{
    %ii = arith.index_cast %i : index to i64
    %t = tensor.from_elements %ii : tensor<i64>
    %xi = "rlx.take"(%x, %t) {{axis = array<i64: 0>}} : (tensor<{T}x3xf64>, tensor<i64>) -> tensor<3xf64>
    %m = "rlx.matmul"(%h, %w) : (tensor<3xf64>, tensor<3x3xf64>) -> tensor<3xf64>
    %a = "rlx.add"(%m, %xi) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %hn = "rlx.tanh"(%a) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %hn : tensor<3xf64>
  }} {POLICY}
  %q = "rlx.multiply"(%r, %r) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "rlx.sum"(%q) : (tensor<3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}}
"""


def rnn(T=5, policy=""):
    pol = f"{{grad.checkpoint = {policy}}}" if policy else ""
    return RNN.format(T=T, POLICY=pol)


def rnn_args(rng, T=5):
    return [rng.normal(size=(T, 3)) * 0.5, rng.normal(size=3) * 0.5,
            rng.normal(size=(3, 3)) * 0.5]


# Two carried tensors (one of them an accumulated loss), lb != 0, step 2,
# a loop-invariant captured weight used also outside the loop.
TWO_CARRIED = """
func.func @main(%h0: tensor<2x3xf64>, %w: tensor<3x3xf64>) -> tensor<f64> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %z = "rlx.zeros"() : () -> tensor<f64>
  %r:2 = scf.for %i = %c1 to %c9 step %c2 iter_args(%h = %h0, %l = %z) -> (tensor<2x3xf64>, tensor<f64>) {
    %m = "rlx.matmul"(%h, %w) : (tensor<2x3xf64>, tensor<3x3xf64>) -> tensor<2x3xf64>
    %s = "rlx.sigmoid"(%m) : (tensor<2x3xf64>) -> tensor<2x3xf64>
    %sq = "rlx.square"(%s) : (tensor<2x3xf64>) -> tensor<2x3xf64>
    %ls = "rlx.sum"(%sq) : (tensor<2x3xf64>) -> tensor<f64>
    %l2 = "rlx.add"(%l, %ls) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    scf.yield %s, %l2 : tensor<2x3xf64>, tensor<f64>
  }
  %ws = "rlx.sum"(%w) : (tensor<3x3xf64>) -> tensor<f64>
  %hs = "rlx.sum"(%r#0) : (tensor<2x3xf64>) -> tensor<f64>
  %a = "rlx.multiply"(%ws, %hs) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %o = "rlx.add"(%a, %r#1) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %o : tensor<f64>
}
"""

# scf.if on a data-dependent condition, inside a loop, one branch yielding
# a captured value unchanged.
IF_IN_LOOP = """
func.func @main(%x: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %c1 = arith.constant 1 : index
  %zero = "rlx.zeros"() : () -> tensor<f64>
  %r = scf.for %i = %c0 to %c6 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %s = "rlx.sum"(%h) : (tensor<3xf64>) -> tensor<f64>
    %gt = "rlx.greater"(%s, %zero) : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %c = tensor.extract %gt[] : tensor<i1>
    %n = scf.if %c -> (tensor<3xf64>) {
      %e = "rlx.sin"(%h) : (tensor<3xf64>) -> tensor<3xf64>
      %m = "rlx.multiply"(%e, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
      scf.yield %m : tensor<3xf64>
    } else {
      %a = "rlx.add"(%h, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
      scf.yield %a : tensor<3xf64>
    }
    scf.yield %n : tensor<3xf64>
  }
  %q = "rlx.multiply"(%r, %r) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %o = "rlx.sum"(%q) : (tensor<3xf64>) -> tensor<f64>
  return %o : tensor<f64>
}
"""

IF_TOP = """
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>) -> tensor<f64> {
  %s = "rlx.sum"(%x) : (tensor<3xf64>) -> tensor<f64>
  %zero = "rlx.zeros"() : () -> tensor<f64>
  %gt = "rlx.greater"(%s, %zero) : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %c = tensor.extract %gt[] : tensor<i1>
  %r = scf.if %c -> (tensor<f64>) {
    %m = "rlx.multiply"(%x, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %e = "rlx.exp"(%m) : (tensor<3xf64>) -> tensor<3xf64>
    %q = "rlx.sum"(%e) : (tensor<3xf64>) -> tensor<f64>
    scf.yield %q : tensor<f64>
  } else {
    %q = "rlx.sum"(%y) : (tensor<3xf64>) -> tensor<f64>
    %q2 = "rlx.multiply"(%q, %s) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    scf.yield %q2 : tensor<f64>
  }
  return %r : tensor<f64>
}
"""

# scf.while: data-dependent condition combined with an index counter.
WHILE = """
func.func @main(%h0: tensor<3xf64>, %w: tensor<3x3xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %lim = arith.constant dense<4.0> : tensor<f64>
  %r:2 = scf.while (%h = %h0, %i = %c0) : (tensor<3xf64>, index) -> (tensor<3xf64>, index) {
    %sq = "rlx.square"(%h) : (tensor<3xf64>) -> tensor<3xf64>
    %n = "rlx.sum"(%sq) : (tensor<3xf64>) -> tensor<f64>
    %lt = "rlx.less"(%n, %lim) : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    %ci = arith.cmpi slt, %i, %c7 : index
    %both = arith.andi %c, %ci : i1
    scf.condition(%both) %h, %i : tensor<3xf64>, index
  } do {
  ^bb0(%h: tensor<3xf64>, %i: index):
    %c1 = arith.constant 1 : index
    %m = "rlx.matmul"(%h, %w) : (tensor<3xf64>, tensor<3x3xf64>) -> tensor<3xf64>
    %a = "rlx.add"(%m, %h) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %in = arith.addi %i, %c1 : index
    scf.yield %a, %in : tensor<3xf64>, index
  }
  %o = "rlx.sum"(%r#0) : (tensor<3xf64>) -> tensor<f64>
  %o2 = "rlx.multiply"(%o, %o) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %o2 : tensor<f64>
}
"""

# Nested loops in a callee; the inner trip count is computed (not constant).
NESTED_CALL = """
func.func @cell(%h: tensor<3xf64>, %w: tensor<3x3xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.addi %c1, %c2 : index
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%a = %h) -> (tensor<3xf64>) {
    %m = "rlx.matmul"(%a, %w) : (tensor<3xf64>, tensor<3x3xf64>) -> tensor<3xf64>
    %p = "rlx.add"(%m, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %t = "rlx.tanh"(%p) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %t : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func @main(%h0: tensor<3xf64>, %w: tensor<3x3xf64>, %b: tensor<3xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<3xf64>) {
    %n = func.call @cell(%h, %w, %b) : (tensor<3xf64>, tensor<3x3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %e = "rlx.exp"(%n) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %e : tensor<3xf64>
  }
  %s = "rlx.sum"(%r) : (tensor<3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}
"""


def args_for(text, rng):
    """Random float64 arguments for @main of ``text`` (shapes from the IR)."""
    import gradir
    from gradir.autodiff.gradient import find_function, function_type
    m = gradir.parse(text)
    ft = function_type(find_function(m.operation, "main"))
    return [rng.normal(size=tuple(t.shape)) * 0.5 for t in ft.inputs]


ALL = {"rnn": rnn(), "two_carried": TWO_CARRIED, "if_in_loop": IF_IN_LOOP, "if_top": IF_TOP,
       "while": WHILE, "nested_call": NESTED_CALL}
del np

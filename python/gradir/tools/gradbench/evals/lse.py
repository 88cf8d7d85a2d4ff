"""GradBench's ``lse`` eval: ``primal(x) = log(sum(exp(x)))`` over a float64
vector and its ``gradient`` (the softmax of x).

rlx has no log-sum-exp op; it is composed the stable way, as GradBench's
reference does: ``m = max(x)`` under ``grad.no_grad`` (its gradient terms
cancel), ``log(sum(exp(x - m))) + m``. The gradient is ``rlx-gradient``'s
adjoint of that function.
"""

import numpy as np

from ..build import function, tensor_type

FUNCTIONS = ("primal", "gradient")


def program(n):
    v, s = tensor_type((n,)), tensor_type(())
    return f"""
func.func @main(%x: {v}) -> {s} {{
  %max = "rlx.max"(%x) : ({v}) -> {s}
  %m = "grad.no_grad"(%max) : ({s}) -> {s}
  %d = "rlx.subtract"(%x, %m) : ({v}, {s}) -> {v}
  %e = "rlx.exp"(%d) : ({v}) -> {v}
  %sum = "rlx.sum"(%e) : ({v}) -> {s}
  %log = "rlx.log"(%sum) : ({s}) -> {s}
  %y = "rlx.add"(%log, %m) : ({s}, {s}) -> {s}
  return %y : {s}
}}
"""


def prepare(name, input):
    x = np.asarray(input["x"], dtype=np.float64)
    text = program(x.shape[0])
    if name == "primal":
        fn = function(text)
        return lambda: fn(x)
    fn = function(text, "builtin.module(rlx-gradient{wrt=0})", "main_adjoint")
    return lambda: fn(x)[1]

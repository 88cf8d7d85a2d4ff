"""GradBench's ``hello`` eval: ``square(x) = x * x`` and its gradient
``double(x) = 2 x``, on one float64 number (no min_runs/min_seconds)."""

import numpy as np

from ..build import function

FUNCTIONS = ("square", "double")

SQUARE = """
func.func @main(%x: tensor<f64>) -> tensor<f64> {
  %y = "rlx.multiply"(%x, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %y : tensor<f64>
}
"""


def prepare(name, input):
    x = np.asarray(float(input), dtype=np.float64)
    if name == "square":
        fn = function(SQUARE)
        return lambda: fn(x)
    fn = function(SQUARE, "builtin.module(rlx-gradient{wrt=0})", "main_adjoint")
    return lambda: fn(x)[1]

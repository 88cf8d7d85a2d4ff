"""GradBench's ``llsq`` eval (cmpad's ``llsq_obj``):
``primal(x) = 1/2 sum_i (s_i - sum_j x_j t_i^j)^2`` with ``t_i = -1 + 2 i / (n - 1)``
and ``s_i = sign(t_i)``, and its ``gradient`` with respect to x.

``t``, ``s`` and the powers ``t_i^j`` depend only on the sizes n and m, so
they are computed with numpy when a shape is first prepared and passed to
the compiled function as constant operands (JAX's jitted tool gets the same
from XLA folding its static ``n``). The objective is then
``1/2 |s - V x|^2`` with ``V[i, j] = t_i^j``, and the gradient is
``rlx-gradient``'s adjoint of it. ``V x`` is a call with a custom VJP
(``grad.vjp``) whose x part is the vector-matrix product ``g @ V``, where
matmul's own rule would transpose V at every call (V is constant: its
part is zeros, which the adjoint drops).
"""

import functools

import numpy as np

from ..build import function, tensor_type

FUNCTIONS = ("primal", "gradient")


@functools.lru_cache(maxsize=8)
def constants(n, m):
    """(V, s): the powers t_i^j (n x m) and the signs s_i, as the reference computes them."""
    i = np.arange(n, dtype=np.float64)
    t = -1.0 + i * 2.0 / (n - 1.0)
    v = np.empty((n, m))
    mul = np.ones(n)
    for j in range(m):      # the reference's running product, so the powers match bitwise
        v[:, j] = mul
        mul = mul * t
    return v, np.sign(t)


def program(n, m):
    mat, vec, s, ns = tensor_type((n, m)), tensor_type((m,)), tensor_type(()), tensor_type((n,))
    return f"""
func.func @main(%x: {vec}, %v: {mat}, %s: {ns}) -> {s} {{
  %vx = func.call @times(%x, %v) {{grad.vjp = @times_vjp}} : ({vec}, {mat}) -> {ns}
  %r = "rlx.subtract"(%s, %vx) : ({ns}, {ns}) -> {ns}
  %sq = "rlx.square"(%r) : ({ns}) -> {ns}
  %sum = "rlx.sum"(%sq) : ({ns}) -> {s}
  %half = arith.constant dense<5.000000e-01> : {s}
  %y = "rlx.multiply"(%sum, %half) : ({s}, {s}) -> {s}
  return %y : {s}
}}
func.func private @times(%x: {vec}, %v: {mat}) -> {ns} {{
  %y = "rlx.matmul"(%v, %x) : ({mat}, {vec}) -> {ns}
  return %y : {ns}
}}
func.func private @times_vjp(%x: {vec}, %v: {mat}, %g: {ns}) -> ({vec}, {mat}) {{
  %gx = "rlx.matmul"(%g, %v) : ({ns}, {mat}) -> {vec}
  %gv = "rlx.zeros"() : () -> {mat}
  return %gx, %gv : {vec}, {mat}
}}
"""


def prepare(name, input):
    x = np.asarray(input["x"], dtype=np.float64)
    n, m = int(input["n"]), x.shape[0]
    v, s = constants(n, m)
    text = program(n, m)
    if name == "primal":
        fn = function(text)
        return lambda: fn(x, v, s)
    fn = function(text, "builtin.module(rlx-gradient{wrt=0})", "main_adjoint")
    return lambda: fn(x, v, s)[1]

"""GradBench's ``kmeans`` eval: the k-means cost and its Newton direction.

``cost``: ``f(P, C) = sum_i min_j |C_j - P_i|^2`` over the ``n`` points
``P`` and ``k`` centroids ``C`` (``d`` dimensions), written as GradBench's
JAX and PyTorch tools write it, ``|P_i|^2 + |C_j|^2 - 2 C_j . P_i`` from one
matrix product, then a min over the centroids and a sum.

``dir``: ``J / diag(H)``, the gradient with respect to ``C`` divided
elementwise by the Hessian's diagonal. The Hessian is diagonal (each
centroid's cost is a sum of squares of its own coordinates), so its
diagonal is the Hessian-vector product with the all-ones vector. Both come
from one function: reverse over reverse, ``rlx-gradient{wrt=1}`` then
``rlx-gradient{func=main_adjoint mode=vjp wrt=1}``, whose
``@main_adjoint_vjp(P, C, 0, ones)`` returns ``(f, J, H ones)``.
"""

import numpy as np

from ..build import function, tensor_type

FUNCTIONS = ("cost", "dir")

HESSIAN_PIPELINE = ("builtin.module(rlx-gradient{func=main wrt=1},"
                    "rlx-gradient{func=main_adjoint mode=vjp wrt=1})")


def cost_text(n, k, d):
    """``@main(points: n x d, centroids: k x d) -> cost``."""
    p, c = tensor_type((n, d)), tensor_type((k, d))
    kn, n1, k1 = tensor_type((k, n)), tensor_type((n,)), tensor_type((k, 1))
    return f"""
func.func @main(%p: {p}, %c: {c}) -> tensor<f64> {{
  %two = arith.constant dense<2.0> : tensor<f64>
  %p2 = "rlx.square"(%p) : ({p}) -> {p}
  %pn = "rlx.sum"(%p2) {{axis = array<i64: 1>}} : ({p}) -> {n1}
  %c2 = "rlx.square"(%c) : ({c}) -> {c}
  %cn = "rlx.sum"(%c2) {{axis = array<i64: 1>, keepdims = true}} : ({c}) -> {k1}
  %pt = "rlx.permute_dims"(%p) {{axes = array<i64: 1, 0>}} : ({p}) -> {tensor_type((d, n))}
  %cp = "rlx.matmul"(%c, %pt) : ({c}, {tensor_type((d, n))}) -> {kn}
  %cp2 = "rlx.multiply"(%cp, %two) : ({kn}, tensor<f64>) -> {kn}
  %sq = "rlx.add"(%cn, %pn) : ({k1}, {n1}) -> {kn}
  %dist = "rlx.subtract"(%sq, %cp2) : ({kn}, {kn}) -> {kn}
  %m = "rlx.min"(%dist) {{axis = array<i64: 0>}} : ({kn}) -> {n1}
  %f = "rlx.sum"(%m) : ({n1}) -> tensor<f64>
  return %f : tensor<f64>
}}
"""


def arrays(input):
    points = np.ascontiguousarray(np.asarray(input["points"], dtype=np.float64))
    centroids = np.ascontiguousarray(np.asarray(input["centroids"], dtype=np.float64))
    if points.ndim != 2 or centroids.ndim != 2 or points.shape[1] != centroids.shape[1]:
        raise ValueError(f"kmeans: points {points.shape} and centroids {centroids.shape} "
                         f"must be n x d and k x d")
    return points, centroids


def prepare(name, input):
    points, centroids = arrays(input)
    (n, d), k = points.shape, centroids.shape[0]
    text = cost_text(n, k, d)
    if name == "cost":
        fn = function(text)
        return lambda: float(fn(points, centroids))
    if name != "dir":
        raise ValueError(f"kmeans has no function {name!r}")
    fn = function(text, HESSIAN_PIPELINE, "main_adjoint_vjp")
    zero, ones = np.zeros((), np.float64), np.ones_like(centroids)

    def run():
        _, grad, hess = fn(points, centroids, zero, ones)
        return grad / hess
    return run

"""GradBench's ``kmeans`` eval: the k-means cost and its Newton direction.

``cost``: ``f(P, C) = sum_i min_j |C_j - P_i|^2`` over the ``n`` points
``P`` and ``k`` centroids ``C`` (``d`` dimensions), written as GradBench's
JAX and PyTorch tools write it, ``|P_i|^2 + |C_j|^2 - 2 C_j . P_i`` from one
matrix product, then a min over the centroids and a sum.

A large cost (``k n`` over ``CHUNK_MIN``) runs over blocks of ``block``
points in an ``scf.for`` (plus the tail), each block's ``k x block``
distances (about 1 MB) reduced while in cache: the whole ``k x n`` matrix
was written to memory and read back (k=1000, n=10000: 80 MB, most of the
call's time).

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


# Costs of more than CHUNK_MIN distances run in blocks of points whose
# distances number about BLOCK_ELEMENTS (k=1000: 128 points, 1 MB).
CHUNK_MIN = 1 << 20
BLOCK_ELEMENTS = 1 << 17


def block_size(n, k):
    """Points per block of the chunked cost (a multiple of 16), or 0: one
    block (the whole k x n matrix)."""
    if k * n <= CHUNK_MIN:
        return 0
    b = max(16, BLOCK_ELEMENTS // k // 16 * 16)
    return b if b < n else 0


def _min_distances(p, c, cn, m, k, d, indent="  "):
    """Lines computing ``%{p}_f = sum_i min_j |C_j - P_i|^2`` over the m
    points ``%{p}`` (m x d), given ``%{cn}`` = |C_j|^2 (k x 1)."""
    pt, km = tensor_type((m, d)), tensor_type((k, m))
    m1, k1, dm = tensor_type((m,)), tensor_type((k, 1)), tensor_type((d, m))
    ct = tensor_type((k, d))
    lines = f"""%{p}_2 = "rlx.square"(%{p}) : ({pt}) -> {pt}
%{p}_n = "rlx.sum"(%{p}_2) {{axis = array<i64: 1>}} : ({pt}) -> {m1}
%{p}_t = "rlx.permute_dims"(%{p}) {{axes = array<i64: 1, 0>}} : ({pt}) -> {dm}
%{p}_cp = "rlx.matmul"(%{c}, %{p}_t) : ({ct}, {dm}) -> {km}
%{p}_cp2 = "rlx.multiply"(%{p}_cp, %two) : ({km}, tensor<f64>) -> {km}
%{p}_sq = "rlx.add"(%{cn}, %{p}_n) : ({k1}, {m1}) -> {km}
%{p}_dist = "rlx.subtract"(%{p}_sq, %{p}_cp2) : ({km}, {km}) -> {km}
%{p}_m = "rlx.min"(%{p}_dist) {{axis = array<i64: 0>}} : ({km}) -> {m1}
%{p}_f = "rlx.sum"(%{p}_m) : ({m1}) -> tensor<f64>"""
    return "\n".join(indent + line for line in lines.splitlines())


def cost_text(n, k, d, block=None):
    """``@main(points: n x d, centroids: k x d) -> cost``; ``block`` points
    at a time in a loop (None: ``block_size``; 0: all at once)."""
    block = block_size(n, k) if block is None else block
    p, c = tensor_type((n, d)), tensor_type((k, d))
    k1 = tensor_type((k, 1))
    head = f"""
func.func @main(%p: {p}, %c: {c}) -> tensor<f64> {{
  %two = arith.constant dense<2.0> : tensor<f64>
  %c2 = "rlx.square"(%c) : ({c}) -> {c}
  %cn = "rlx.sum"(%c2) {{axis = array<i64: 1>, keepdims = true}} : ({c}) -> {k1}
"""
    if not block or block >= n:
        return head + _min_distances("p", "c", "cn", n, k, d) + """
  return %p_f : tensor<f64>
}
"""
    q, r = divmod(n, block)
    pq, pb, pr = tensor_type((q * block, d)), tensor_type((q, block, d)), tensor_type((r, d))
    pc = tensor_type((block, d))
    if r:
        points = f"""  %ph = "rlx.strided_slice"(%p) {{axes = array<i64: 0>, begin = array<i64: 0>, end = array<i64: {q * block}>}} : ({p}) -> {pq}
  %pt = "rlx.strided_slice"(%p) {{axes = array<i64: 0>, begin = array<i64: {q * block}>, end = array<i64: {n}>}} : ({p}) -> {pr}
{_min_distances("pt", "c", "cn", r, k, d)}
"""
        start, head_points = "%pt_f", "%ph"
    else:
        points = "  %zero = arith.constant dense<0.0> : tensor<f64>\n"
        start, head_points = "%zero", "%p"
        pq = p
    return head + points + f"""  %pb = "rlx.reshape"({head_points}) : ({pq}) -> {pb}
  %lo = arith.constant 0 : index
  %hi = arith.constant {q} : index
  %one = arith.constant 1 : index
  %f = scf.for %i = %lo to %hi step %one iter_args(%s = {start}) -> (tensor<f64>) {{
    %i64 = arith.index_cast %i : index to i64
    %it = tensor.from_elements %i64 : tensor<i64>
    %b = "rlx.take"(%pb, %it) {{axis = array<i64: 0>}} : ({pb}, tensor<i64>) -> {pc}
{_min_distances("b", "c", "cn", block, k, d, "    ")}
    %s2 = "rlx.add"(%s, %b_f) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    scf.yield %s2 : tensor<f64>
  }}
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
    if name == "cost":
        fn = function(cost_text(n, k, d))
        return lambda: float(fn(points, centroids))
    if name != "dir":
        raise ValueError(f"kmeans has no function {name!r}")
    # dir differentiates the cost written all at once (its adjoint keeps
    # what the blocks would recompute)
    fn = function(cost_text(n, k, d, block=0), HESSIAN_PIPELINE, "main_adjoint_vjp")
    zero, ones = np.zeros((), np.float64), np.ones_like(centroids)

    def run():
        _, grad, hess = fn(points, centroids, zero, ones)
        return grad / hess
    return run

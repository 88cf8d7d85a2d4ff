"""GradBench's ``gmm`` eval: the log posterior of a Gaussian mixture model
with a Wishart prior on the precision matrices (``objective``) and its
gradient with respect to ``alpha``, ``mu``, ``q`` and ``l`` (``jacobian``),
following the eval's README ("Implementation"):

    F = -N (D/2 log 2 pi + lse(alpha)) + sum_i lse_k(beta_ik)
        + K (nD log(gamma / sqrt 2) - log Gamma_D(n/2))
        - gamma^2 / 2 sum_k |Q_k|_F^2 + m sum_kj q_kj,
    beta_ik = alpha_k + sum_j q_kj - 1/2 |Q_k (x_i - mu_k)|^2,  n = D + m + 1.

How it is written in rlx:

- ``Q_k^T`` for all k at once, (K, D, D): the rows ``(l_k, exp(q_k), 0)``
  gathered (``rlx.take`` with a constant index vector, computed when a shape
  is prepared) into the layout of ``Q_k^T`` (the eval fills Q column by
  column). The gather is a function called with a custom VJP
  (``grad.vjp``): every entry but the 0 lands once in Q, so its VJP is the
  inverse gather, where ``rlx.take``'s own VJP is a dense one-hot matmul.
- ``Q_k (x_i - mu_k)`` is ``x @ Q_k^T - mu_k @ Q_k^T``: one (N, D) x (D, K D)
  matmul of the data against the K matrices side by side, (N, K, D), minus
  the (K, D) means' images.
- log-sum-exp (rlx has no such op) is composed stably: the max along the
  axis under ``grad.no_grad``, ``log(sum(exp(v - max))) + max``.
- ``log Gamma_D`` (no lgamma op either) and the other terms that depend only
  on D, K, N, m and gamma are one float computed with Python's
  ``math.lgamma`` when a shape is prepared, passed in as a 0-d operand, as
  are ``gamma^2 / 2`` and ``m``, so one compiled function serves every
  gamma and m of a shape.

The jacobian is ``rlx-gradient``'s adjoint with respect to alpha, mu, q, l.
D >= 2 (l has D (D - 1) / 2 columns).
"""

import math

import numpy as np

from ..build import Program, axes, function

FUNCTIONS = ("objective", "jacobian")


def log_multigamma(a, p):
    """log Gamma_p(a) = p (p - 1) / 4 log pi + sum_{j=1..p} log Gamma(a + (1 - j) / 2)."""
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a + (1 - j) / 2)
                                                     for j in range(1, p + 1))


def constant_term(d, k, n, m, gamma):
    """The terms of F that no independent variable enters."""
    wn = d + m + 1
    return (-n * d * 0.5 * math.log(2 * math.pi)
            + k * (wn * d * math.log(gamma / math.sqrt(2)) - log_multigamma(0.5 * wn, d)))


def lse(p, v, axis):
    """log(sum(exp(v))) along `axis` of the 1-D or 2-D value v (the max held constant)."""
    shape = tuple(s for i, s in enumerate(v.shape) if i != axis)
    kept = tuple(1 if i == axis else s for i, s in enumerate(v.shape))
    mx = p.op("rlx.max", [v], kept, f"axis = {axes(axis)}, keepdims = true")
    mx = p.op("grad.no_grad", [mx], kept)
    e = p.op("rlx.exp", [p.op("rlx.subtract", [v, mx], v.shape)], v.shape)
    s = p.op("rlx.sum", [e], shape, f"axis = {axes(axis)}")
    flat = p.op("rlx.reshape", [mx], shape)
    return p.op("rlx.add", [p.op("rlx.log", [s], shape), flat], shape)


def program(d, k, n):
    nl = d * (d - 1) // 2
    p = Program()
    x, alpha, mu = p.arg((n, d)), p.arg((k,)), p.arg((k, d))
    q, l = p.arg((k, d)), p.arg((k, nl))
    half_g2, m, const = p.arg(()), p.arg(()), p.arg(())

    qdiag = p.op("rlx.exp", [q], (k, d))
    packed = p.op("rlx.concat", [l, qdiag, p.op("rlx.zeros", [], (k, 1))], (k, nl + d + 1),
                  f"axis = {axes(1)}")
    qt = p.fresh()
    pt, rt = packed.type, f"tensor<{k}x{d * d}xf64>"
    p.raw(f"{qt} = func.call @gather_qt({packed.name}) {{grad.vjp = @gather_qt_vjp}} "
          f": ({pt}) -> {rt}")
    qt = p.op("rlx.reshape", [p.value(qt, (k, d * d))], (k, d, d))

    # Q_k x_i for all i, k: one (N, D) x (D, K D) GEMM, laid out (N, K, D)
    qt2 = p.op("rlx.reshape", [p.op("rlx.permute_dims", [qt], (d, k, d), f"axes = {axes(1, 0, 2)}")],
               (d, k * d))
    qx = p.op("rlx.reshape", [p.op("rlx.matmul", [x, qt2], (n, k * d))], (n, k, d))
    mu3 = p.op("rlx.reshape", [mu], (k, 1, d))
    qmu = p.op("rlx.reshape", [p.op("rlx.matmul", [mu3, qt], (k, 1, d))], (k, d))   # Q_k mu_k
    diff = p.op("rlx.subtract", [qx, qmu], (n, k, d))
    sq = p.op("rlx.sum", [p.op("rlx.square", [diff], (n, k, d))], (n, k), f"axis = {axes(2)}")

    sum_q = p.op("rlx.sum", [q], (k,), f"axis = {axes(1)}")
    a_q = p.op("rlx.add", [alpha, sum_q], (k,))
    beta = p.op("rlx.subtract", [a_q, p.op("rlx.multiply", [sq, p.const(0.5)], (n, k))], (n, k))
    slse = p.op("rlx.sum", [lse(p, beta, 1)], ())

    lse_alpha = lse(p, p.op("rlx.reshape", [alpha], (k, 1)), 0)      # (1,)
    n_lse = p.op("rlx.sum", [p.op("rlx.multiply", [lse_alpha, p.const(float(n))], (1,))], ())

    frob = p.op("rlx.add", [p.op("rlx.sum", [p.op("rlx.square", [qdiag], (k, d))], ()),
                            p.op("rlx.sum", [p.op("rlx.square", [l], (k, nl))], ())], ())
    prior = p.op("rlx.subtract", [p.op("rlx.multiply", [m, p.op("rlx.sum", [sum_q], ())], ()),
                                  p.op("rlx.multiply", [half_g2, frob], ())], ())

    f = p.op("rlx.subtract", [slse, n_lse], ())
    f = p.op("rlx.add", [p.op("rlx.add", [f, prior], ()), const], ())
    return p.text([f]) + gather_functions(d, k)


def gather_indices(d):
    """(idx, inv): Q^T flattened (d * d) as positions in the packed row
    (l, exp(q), 0), and each packed position's place in Q^T (the zero's: any)."""
    nl = d * (d - 1) // 2
    zero = nl + d
    idx = np.full((d, d), zero, np.int64)       # idx[j, i] = where Q[i, j] comes from
    off = 0
    for j in range(d):
        idx[j, j] = nl + j
        for i in range(j + 1, d):
            idx[j, i] = off
            off += 1
    flat = idx.ravel()
    inv = np.zeros(nl + d + 1, np.int64)
    inv[flat] = np.arange(d * d)
    return flat, inv


def gather_functions(d, k):
    """@gather_qt: the packed rows (K, W) gathered into Q^T (K, D * D); its VJP
    @gather_qt_vjp gathers back (every packed entry but the zero appears
    once in Q^T), where take's own VJP would be a one-hot matmul."""
    idx, inv = gather_indices(d)
    w = inv.size
    pt, rt = f"tensor<{k}x{w}xf64>", f"tensor<{k}x{d * d}xf64>"

    def lit(a):
        return ", ".join(map(str, a.tolist()))
    return f"""
func.func private @gather_qt(%p: {pt}) -> {rt} {{
  %idx = arith.constant dense<[{lit(idx)}]> : tensor<{idx.size}xi64>
  %r = "rlx.take"(%p, %idx) {{axis = array<i64: 1>}} : ({pt}, tensor<{idx.size}xi64>) -> {rt}
  return %r : {rt}
}}
func.func private @gather_qt_vjp(%p: {pt}, %g: {rt}) -> {pt} {{
  %inv = arith.constant dense<[{lit(inv)}]> : tensor<{w}xi64>
  %r = "rlx.take"(%g, %inv) {{axis = array<i64: 1>}} : ({rt}, tensor<{w}xi64>) -> {pt}
  return %r : {pt}
}}
"""


def prepare(name, input):
    d, k, n = int(input["d"]), int(input["k"]), int(input["n"])
    m, gamma = int(input["m"]), float(input["gamma"])
    f64 = np.float64
    x = np.asarray(input["x"], f64).reshape(n, d)
    alpha = np.asarray(input["alpha"], f64).reshape(k)
    mu = np.asarray(input["mu"], f64).reshape(k, d)
    q = np.asarray(input["q"], f64).reshape(k, d)
    l = np.asarray(input["l"], f64).reshape(k, d * (d - 1) // 2)
    scalars = (np.asarray(0.5 * gamma * gamma), np.asarray(float(m)),
               np.asarray(constant_term(d, k, n, m, gamma)))
    args = (x, alpha, mu, q, l) + scalars
    text = program(d, k, n)
    if name == "objective":
        fn = function(text)
        return lambda: fn(*args)
    fn = function(text, "builtin.module(rlx-gradient{wrt=1,2,3,4})", "main_adjoint")

    def jacobian():
        _, ga, gm, gq, gl = fn(*args)
        return {"alpha": ga, "mu": gm, "q": gq, "l": gl}
    return jacobian

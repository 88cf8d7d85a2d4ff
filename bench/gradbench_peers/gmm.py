"""gmm: the log posterior of a Gaussian mixture model with a Wishart prior,
and its gradient w.r.t. alpha, mu, q and l. Both GradBench tools have it
(ADBench's vectorized objective): JAX jit (d, k static) of the objective
and of its grad; PyTorch the objective and backward() into the parameters'
.grad. Inputs as GradBench's eval generates them (numpy's default_rng
seeded 31337, n = 1000, m = 0, gamma = 1); (d, k) among its
{2, 10, 20, 32, 64} x {5, 10, 25, 50, 100}."""

import math

from . import f64, jax

NOTES = ["gmm: as GradBench's tools write it (ADBench's vectorized objective: the "
         "lower-triangular L by a scatter, an einsum, logsumexp; JAX jit of it and of its "
         "grad, PyTorch backward())."]
SIZES = [(2, 5), (20, 50), (64, 100)]
N = 1000


def gmm_input(d, k, n=N, m=0, gamma=1.0):
    import numpy as np
    rng = np.random.default_rng(seed=31337)
    return {"d": d, "k": k, "n": n, "x": [list(rng.normal(size=d)) for _ in range(n)],
            "m": m, "gamma": gamma, "alpha": list(rng.normal(size=k)),
            "mu": [list(rng.uniform(size=d)) for _ in range(k)],
            "q": [list(rng.normal(size=d)) for _ in range(k)],
            "l": [list(rng.normal(size=d * (d - 1) // 2)) for _ in range(k)]}


def workloads(quick):
    out = []
    for d, k in SIZES[:1] if quick else SIZES:
        inp = gmm_input(d, k)
        out += [(fn, f"d={d},k={k},n={N}", inp, (d, k) == SIZES[0])
                for fn in ("objective", "jacobian")]
    return out


def _tril(d):
    """(rows, cols) of L's strictly lower entries, column by column (l's order)."""
    import numpy as np
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)])
    return rows, cols


def jax_peer(function, inp):
    import numpy as np
    jx, jnp = jax()
    from jax.scipy.special import logsumexp, multigammaln
    d, k, n, m, gamma = (inp[key] for key in ("d", "k", "n", "m", "gamma"))
    rows, cols = _tril(d)
    x = jnp.asarray(f64(inp["x"]))
    params = {key: jnp.asarray(f64(inp[key])) for key in ("alpha", "mu", "q", "l")}

    def objective(p, x):
        alpha, mu, q, l = p["alpha"], p["mu"], p["q"], p["l"]
        qdiags, sum_qs = jnp.exp(q), jnp.sum(q, axis=1)
        ls = jnp.zeros((k, d, d), dtype=l.dtype).at[:, rows, cols].set(l)
        xc = x[:, None, :] - mu[None, ...]
        lxc = qdiags * xc + jnp.einsum("ijk,mik->mij", ls, xc)
        inner = alpha + sum_qs - 0.5 * jnp.sum(lxc ** 2, axis=2)
        wn = d + m + 1
        prior = -jnp.sum(0.5 * gamma * gamma * (jnp.sum(qdiags ** 2, axis=1)
                                                + jnp.sum(l ** 2, axis=1)) - m * sum_qs)
        prior += k * (wn * d * math.log(gamma / math.sqrt(2)) - multigammaln(0.5 * wn, d))
        return (-n * d * 0.5 * math.log(2 * math.pi) + jnp.sum(logsumexp(inner, axis=1))
                - n * logsumexp(alpha, axis=0) + prior)
    if function == "objective":
        f = jx.jit(objective)
        return lambda: float(f(params, x))
    g = jx.jit(jx.grad(objective))
    return lambda: {key: np.asarray(v) for key, v in g(params, x).items()}


def torch_peer(function, inp):
    import torch
    d, k, n, gamma = (inp[key] for key in ("d", "k", "n", "gamma"))
    m = torch.tensor(inp["m"], dtype=torch.float64)
    rows, cols = (torch.tensor(a) for a in _tril(d))
    x = torch.tensor(f64(inp["x"]))
    params = {key: torch.tensor(f64(inp[key]), requires_grad=function == "jacobian")
              for key in ("alpha", "mu", "q", "l")}

    def objective(alpha, mu, q, l):
        qdiags, sum_qs = torch.exp(q), torch.sum(q, 1)
        ls = torch.zeros((k, d, d), dtype=l.dtype)
        ls[:, rows, cols] = l
        xc = x[:, None, :] - mu[None, ...]
        lxc = qdiags * xc + torch.einsum("ijk,mik->mij", ls, xc)
        inner = alpha + sum_qs - 0.5 * torch.sum(lxc ** 2, 2)
        wn = d + m + 1
        prior = -torch.sum(0.5 * gamma * gamma * (torch.sum(qdiags ** 2, 1)
                                                  + torch.sum(l ** 2, 1)) - m * sum_qs)
        prior += k * (wn * d * math.log(gamma / math.sqrt(2))
                      - torch.special.multigammaln(0.5 * wn, d))
        return (-n * d * 0.5 * math.log(2 * math.pi) + torch.sum(torch.logsumexp(inner, 1))
                - n * torch.logsumexp(alpha, 0) + prior)
    if function == "objective":
        return lambda: float(objective(**params))

    def jacobian():
        for v in params.values():
            v.grad = None
        objective(**params).backward()
        return {key: v.grad.numpy() for key, v in params.items()}
    return jacobian

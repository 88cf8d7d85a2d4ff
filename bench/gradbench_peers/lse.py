"""lse: log-sum-exp and its gradient. Both GradBench tools have it: JAX
jit(logsumexp) and jit(grad(logsumexp)); PyTorch the same function and
torch.autograd.functional.vjp with v = 1. Inputs as GradBench's eval
generates them: numpy's global generator seeded 31337, n uniform numbers
(n from 2500 to 1280000 doubling; three of them here)."""

from . import f64, jax

NOTES = ["lse: as GradBench's tools write it (JAX: jit of logsumexp and of its grad; "
         "PyTorch: vjp with v = 1)."]
SIZES = [2500, 80000, 1280000]


def workloads(quick):
    import numpy as np
    out = []
    for n in SIZES[:1] if quick else SIZES:
        np.random.seed(31337)
        inp = {"x": np.random.rand(n).tolist()}
        out += [(fn, f"n={n}", inp, n == SIZES[0]) for fn in ("primal", "gradient")]
    return out


def jax_peer(function, inp):
    import numpy as np
    jx, jnp = jax()

    def logsumexp(x):
        top = jnp.max(x)
        return jnp.log(jnp.sum(jnp.exp(x - top))) + top
    x = jnp.asarray(f64(inp["x"]))
    if function == "primal":
        f = jx.jit(logsumexp)
        return lambda: float(f(x))
    g = jx.jit(jx.grad(logsumexp))
    return lambda: np.asarray(g(x))


def torch_peer(function, inp):
    import torch
    from torch.autograd.functional import vjp

    def logsumexp(x):
        top = torch.max(x)
        return top + torch.log(torch.sum(torch.exp(x - top)))
    x = torch.tensor(f64(inp["x"]))
    if function == "primal":
        return lambda: float(logsumexp(x))
    one = torch.tensor(1.0, dtype=torch.float64)
    return lambda: vjp(logsumexp, x, v=one)[1].numpy()

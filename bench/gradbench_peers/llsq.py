"""llsq: linear least squares (cmpad's llsq_obj), 1/2 sum_i (sign(t_i) -
sum_j x_j t_i^j)^2 with t_i = -1 + 2 i / (n - 1), and its gradient.
GradBench's JAX tool: jit (n static) of a vmap over i of the cumprod of
t_i's powers; its PyTorch tool has no llsq, so the peer is the same
function in torch (the (n, m) powers by cumprod, one matrix-vector product)
with backward(). Inputs as GradBench's eval: numpy's global generator
seeded 31337, m = 128 uniform x; n from 16 to 16392."""

from . import f64, jax

NOTES = ["llsq: JAX as GradBench's tool writes it; GradBench's PyTorch tool has no llsq, "
         "the peer is the same function in torch (powers by cumprod, one matrix-vector "
         "product, backward())."]
SIZES = [16, 1024, 16392]


def workloads(quick):
    import numpy as np
    out = []
    for n in SIZES[:1] if quick else SIZES:
        np.random.seed(31337)
        inp = {"x": np.random.rand(128).tolist(), "n": n}
        out += [(fn, f"n={n},m=128", inp, n == SIZES[0]) for fn in ("primal", "gradient")]
    return out


def jax_peer(function, inp):
    import functools

    import numpy as np
    jx, jnp = jax()

    @functools.partial(jx.jit, static_argnums=[1])
    def llsq(x, n):
        m = x.shape[0]

        def term(i):
            ti = -1.0 + (i * 2.0) / (n - 1.0)
            muls = jnp.cumprod(jnp.full(m, ti).at[0].set(1))
            return (jnp.sign(ti) + jnp.sum(-x * muls)) ** 2
        return jnp.sum(jx.vmap(term)(jnp.arange(n))) / 2.0

    x, n = jnp.asarray(f64(inp["x"])), int(inp["n"])
    if function == "primal":
        return lambda: float(llsq(x, n))
    g = jx.jit(jx.grad(llsq), static_argnums=[1])
    return lambda: np.asarray(g(x, n))


def torch_peer(function, inp):
    import torch

    def llsq(x, n):
        m = x.shape[0]
        t = -1.0 + torch.arange(n, dtype=torch.float64) * 2.0 / (n - 1.0)
        powers = torch.cumprod(torch.cat([torch.ones(n, 1, dtype=torch.float64),
                                          t[:, None].expand(n, m - 1)], 1), 1)
        return ((torch.sign(t) - powers @ x) ** 2).sum() / 2.0

    x, n = torch.tensor(f64(inp["x"]), requires_grad=function == "gradient"), int(inp["n"])
    if function == "primal":
        return lambda: float(llsq(x, n))

    def gradient():
        x.grad = None
        llsq(x, n).backward()
        return x.grad.numpy()
    return gradient

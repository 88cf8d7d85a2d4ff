"""kmeans: GradBench's tools/jax and tools/pytorch (both have the eval).

Inputs as GradBench's kmeans eval generates them: numpy's global generator
seeded 31337, n random points of d dimensions, the centroids the last k."""

from . import f64, jax

NOTES = ["kmeans: JAX and PyTorch as GradBench's tools write them (JAX: jit of "
         "jvp(grad, ones) for the Hessian's diagonal; PyTorch: vjp and vhp)."]
SIZES = [(10, 1000, 8), (100, 1000, 16), (1000, 10000, 8)]


def kmeans_input(k, n, d):
    import numpy as np
    np.random.seed(31337)
    points = np.random.rand(n, d).tolist()
    return {"points": points, "centroids": points[-k:]}


def workloads(quick):
    sizes = [SIZES[1]] if quick else SIZES
    out = []
    for k, n, d in sizes:
        inp = kmeans_input(k, n, d)
        for fn in ("cost", "dir"):
            out.append((fn, f"k={k},n={n},d={d}", inp, (k, n, d) == sizes[0]))
    return out


def jax_peer(function, inp):
    """GradBench's tools/jax kmeans: all-pairs norms from a matmul; dir is
    jvp(grad, ones) (the Hessian's diagonal) dividing the gradient."""
    import numpy as np
    jx, jnp = jax()
    points, centroids = (jnp.asarray(f64(inp[k])) for k in ("points", "centroids"))

    def costfun(p, c):
        dists = jnp.sum(p ** 2, 1)[None, :] + jnp.sum(c ** 2, 1)[:, None] - 2 * (p @ c.T).T
        return jnp.min(dists, axis=0).sum()
    if function == "cost":
        f = jx.jit(costfun)
        return lambda: float(f(points, centroids))

    @jx.jit
    def direction(p, c):
        d, h = jx.jvp(jx.grad(lambda cs: costfun(p, cs)), (c,), (jnp.ones_like(c),))
        return d / h
    return lambda: np.asarray(direction(points, centroids))


def torch_peer(function, inp):
    """GradBench's tools/pytorch kmeans: vjp for the gradient, vhp with ones
    for the Hessian's diagonal."""
    import torch
    from torch.autograd.functional import vhp, vjp
    points, centroids = (torch.tensor(f64(inp[k])) for k in ("points", "centroids"))

    def costfun(c):
        dists = (points ** 2).sum(1)[None, :] + (c ** 2).sum(1)[:, None] - 2 * (c @ points.T)
        return torch.min(dists, dim=0)[0].sum()
    if function == "cost":
        return lambda: float(costfun(centroids))

    def run():
        _, jac = vjp(costfun, centroids, v=torch.tensor(1.0, dtype=torch.float64))
        _, hes = vhp(costfun, centroids, v=torch.ones_like(centroids))
        return (jac / hes).numpy()
    return run

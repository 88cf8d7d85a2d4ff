"""saddle: neither GradBench's tools/jax nor tools/pytorch has it. JAX: both
solvers as lax.while_loop under jit, the inner gradient by jax.grad (r) or
jax.jvp (f), the outer by jax.jvp: ff and fr only. PyTorch: nested
torch.func over Python loops (``torch_eager``, ``--torch-eager`` only)."""

from . import jax
from ._solver import descent, jax_descent, jax_forward_only, jax_grad_of, torch_grad_of

NOTES = []  # particle's note covers saddle


def workloads(quick):
    return [(fn, "start=(1,1)", {"start": [1.0, 1.0]}, True) for fn in ("rr", "ff", "fr", "rf")]


def solver(xp, grad_of, start):
    def cost(p1, p2):
        return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)

    def norm(g):
        return float(xp.sqrt((g * g).sum()))

    def solve(mode):
        outer, inner = mode

        def argmax_p2(p1, mode):
            f = lambda p2: cost(p1, p2)  # noqa: E731
            return descent(f, grad_of(mode, f), start, norm, maximize=True)
        r1_cost = lambda p1: cost(p1, argmax_p2(p1, inner))  # noqa: E731
        r1 = descent(r1_cost, grad_of(outer, r1_cost), start, norm)
        r2 = argmax_p2(r1, outer)
        return [float(v) for v in list(r1) + list(r2)]
    return solve


def jax_peer(function, inp):
    """Both solvers as lax.while_loop under jit; the inner gradient by
    jax.grad (r) or jax.jvp (f), the outer by jax.jvp: only ff and fr."""
    jx, jnp = jax()
    jax_forward_only(function)
    grad_of = jax_grad_of(jx, jnp)
    start = jnp.asarray(inp["start"], jnp.float64)

    def cost(p1, p2):
        return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)

    def argmax_p2(p1, mode):
        f = lambda p2: cost(p1, p2)  # noqa: E731
        return jax_descent(jx, jnp, f, grad_of(mode, f), start, maximize=True)

    @jx.jit
    def solve(start):
        r1_cost = lambda p1: cost(p1, argmax_p2(p1, function[1]))  # noqa: E731
        r1 = jax_descent(jx, jnp, r1_cost, grad_of("f", r1_cost), start)
        return jnp.concatenate([r1, argmax_p2(r1, "f")])
    return lambda: [float(v) for v in solve(start)]


def torch_eager(function, inp):
    import torch
    solve = solver(torch, torch_grad_of(), torch.tensor(inp["start"], dtype=torch.float64))
    return lambda: solve(function)

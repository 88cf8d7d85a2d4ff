"""particle: neither GradBench's tools/jax nor tools/pytorch has it. JAX:
the Euler loop and the solver as lax.while_loop under jit, the outer
derivative by jax.jvp (JAX cannot reverse-differentiate lax.while_loop:
ff and fr only). PyTorch: nested torch.func over Python loops, eagerly
(tens of seconds per call: ``torch_eager``, ``--torch-eager`` only)."""

from . import jax
from ._solver import descent, jax_descent, jax_forward_only, jax_grad_of, torch_grad_of

NOTES = ["particle and saddle: in neither GradBench tool. JAX: GradBench's loops and "
         "solver as lax.while_loop under jit, the outer derivative by jax.jvp, so rr and rf "
         "are \"-\" (JAX cannot reverse-differentiate lax.while_loop). PyTorch: \"-\" unless "
         "--torch-eager (nested torch.func over Python loops, tens of seconds per call)."]


def workloads(quick):
    return [(fn, "w=0", {"w": 0.0}, True) for fn in ("rr", "ff", "fr", "rf")]


def solver(xp, grad_of, w0, stack):
    """``grad_of(mode, f)`` -> the gradient function of f by mode."""
    def accel(w, x):
        charges = stack([stack([10.0 + 0 * w, 10.0 - w]), stack([10.0 + 0 * w, 0 * w])])
        d = x - charges
        return (1 / xp.sqrt((d * d).sum(1))).sum()

    def euler(w, inner):
        g = grad_of(inner, lambda x: accel(w, x))
        x, v = stack([0 * w, 8.0 + 0 * w]), stack([0.75 + 0 * w, 0 * w])
        while True:
            a = -g(x)
            xn = x + 0.1 * v
            if xn[1] <= 0:
                return (x[0] - x[1] / v[1] * v[0]) ** 2
            x, v = xn, v + 0.1 * a

    def solve(mode):
        outer, inner = mode
        f = lambda wv: euler(wv[0], inner)  # noqa: E731
        return float(descent(f, grad_of(outer, f), w0, lambda g: float(xp.sqrt((g * g).sum())))[0])
    return solve


def jax_peer(function, inp):
    """The Euler loop and the solver as lax.while_loop under jit; the inner
    gradient by jax.grad (r) or jax.jvp per basis vector (f), the outer by
    jax.jvp: only ff and fr (JAX cannot reverse-differentiate lax.while_loop)."""
    jx, jnp = jax()
    jax_forward_only(function)
    grad_of = jax_grad_of(jx, jnp)

    def accel(w, x):
        d = x - jnp.stack([jnp.stack([10.0, 10.0 - w]), jnp.array([10.0, 0.0])])
        return (1 / jnp.sqrt((d * d).sum(1))).sum()

    def euler(wv):
        w = wv[0]
        g = grad_of(function[1], lambda x: accel(w, x))
        x, v = jx.lax.while_loop(lambda s: (s[0] + 0.1 * s[1])[1] > 0,
                                 lambda s: (s[0] + 0.1 * s[1], s[1] - 0.1 * g(s[0])),
                                 (jnp.array([0.0, 8.0]), jnp.array([0.75, 0.0])))
        return (x[0] - x[1] / v[1] * v[0]) ** 2
    solve = jx.jit(lambda w0: jax_descent(jx, jnp, euler, grad_of("f", euler), w0))
    return lambda: float(solve(jnp.asarray([float(inp["w"])]))[0])


def torch_eager(function, inp):
    """Nested torch.func.grad (r) / torch.func.jvp per basis vector (f), over Python loops."""
    import torch
    solve = solver(torch, torch_grad_of(),
                   torch.tensor([float(inp["w"])], dtype=torch.float64), torch.stack)
    return lambda: solve(function)

"""ode: s steps of RK4 from y(0) = 0 to t = 2 on y_0' = x_0, y_i' = x_i
y_{i-1} (cmpad's an_ode); primal is y(2), gradient that of its last
element w.r.t. x. GradBench's JAX tool: the right-hand side a vmap of a
jnp.where over (i, x_i, roll(y)_i), the steps a lax.scan, jit with s
static, jax.grad. Its PyTorch tool has no ode; the peer is the same steps
as a Python loop of tensor ops (the right-hand side x * cat(1, y[:-1])),
with backward(). Inputs as GradBench's eval: numpy's global generator
seeded 31337, n uniform x; (n, s) among its {1000, 10000, 100000} x
{1, 10, 100}."""

from . import f64, jax

NOTES = ["ode: JAX as GradBench's tool writes it (vmap right-hand side, lax.scan, jit); "
         "GradBench's PyTorch tool has no ode, the peer is the same RK4 steps as a Python "
         "loop of tensor ops, with backward()."]
SIZES = [(1000, 10), (10000, 100), (100000, 100)]


def workloads(quick):
    import numpy as np
    out = []
    for n, s in SIZES[:1] if quick else SIZES:
        np.random.seed(31337)
        inp = {"x": np.random.rand(n).tolist(), "s": s}
        out += [(fn, f"n={n},s={s}", inp, (n, s) == SIZES[0]) for fn in ("primal", "gradient")]
    return out


def jax_peer(function, inp):
    import functools

    import numpy as np
    jx, jnp = jax()

    def rhs(x):
        def f(y):
            iota = jnp.arange(x.shape[0])
            return jx.vmap(lambda i, xi, yr: jnp.where(i == 0, xi, xi * yr))(
                iota, x, jnp.roll(y, shift=1))
        return f

    @functools.partial(jx.jit, static_argnums=[1])
    def ode(x, s):
        f, h = rhs(x), 2.0 / s

        def step(y, _):
            k1 = f(y)
            k2 = f(y + h / 2 * k1)
            k3 = f(y + h / 2 * k2)
            k4 = f(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return y, y
        _, ys = jx.lax.scan(step, jnp.zeros_like(x), None, length=s)
        return ys[-1]

    x, s = jnp.asarray(f64(inp["x"])), int(inp["s"])
    if function == "primal":
        return lambda: np.asarray(ode(x, s))
    g = jx.jit(jx.grad(lambda x, s: ode(x, s)[-1]), static_argnums=[1])
    return lambda: np.asarray(g(x, s))


def torch_peer(function, inp):
    import torch
    x, s = torch.tensor(f64(inp["x"]), requires_grad=function == "gradient"), int(inp["s"])
    one = torch.ones(1, dtype=torch.float64)

    def ode(x):
        def f(y):
            return x * torch.cat([one, y[:-1]])
        y, h = torch.zeros_like(x), 2.0 / s
        for _ in range(s):
            k1 = f(y)
            k2 = f(y + h / 2 * k1)
            k3 = f(y + h / 2 * k2)
            k4 = f(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y
    if function == "primal":
        return lambda: ode(x).numpy()

    def gradient():
        x.grad = None
        ode(x)[-1].backward()
        return x.grad.numpy()
    return gradient

"""GradBench's multivariate_argmin (argmax) of the particle and saddle evals,
for eager arrays of any framework and as JAX's lax.while_loop, and the
gradient-by-mode helpers (r: reverse, f: forward, one jvp per basis vector)."""


def descent(f, grad, x, norm, maximize=False):
    """GradBench's multivariate_argmin (argmax), on any framework's arrays."""
    sign = -1.0 if maximize else 1.0
    fx, gx, i, eta = sign * f(x), sign * grad(x), 0, 1e-5
    while True:
        if norm(gx) <= 1e-5:
            return x
        if i == 10:
            eta, i = eta * 2, 0
            continue
        xp = x - eta * gx
        if norm(x - xp) <= 1e-5:
            return x
        fxp = sign * f(xp)
        if fxp < fx:
            x, fx, gx, i = xp, fxp, sign * grad(xp), i + 1
        else:
            eta, i = eta / 2, 0


def jax_grad_of(jax, jnp):
    def grad_of(mode, f):
        if mode == "r":
            return jax.grad(f)

        def forward(x):
            basis = jnp.eye(x.shape[0], dtype=x.dtype)
            return jnp.stack([jax.jvp(f, (x,), (e,))[1] for e in basis])
        return forward
    return grad_of


def jax_descent(jax, jnp, f, grad, x0, maximize=False):
    """GradBench's solver as lax.while_loop / lax.cond (jit-able, forward-differentiable)."""
    lax, sign = jax.lax, -1.0 if maximize else 1.0

    def norm(v):
        return jnp.sqrt(v @ v)

    def body(s):
        x, fx, gx, eta, i, _ = s

        def descend(_):
            xp = x - eta * gx

            def attempt(_):
                fxp = sign * f(xp)
                return lax.cond(fxp < fx,
                                lambda _: (xp, fxp, sign * grad(xp), eta, i + 1, False),
                                lambda _: (x, fx, gx, eta / 2, 0, False), None)
            return lax.cond(norm(x - xp) <= 1e-5, lambda _: (x, fx, gx, eta, i, True),
                            attempt, None)
        return lax.cond(norm(gx) <= 1e-5, lambda _: (x, fx, gx, eta, i, True),
                        lambda _: lax.cond(i == 10, lambda _: (x, fx, gx, eta * 2, 0, False),
                                           descend, None), None)
    init = jax.tree.map(jnp.asarray, (x0, sign * f(x0), sign * grad(x0), 1e-5, 0, False))
    return lax.while_loop(lambda s: jnp.logical_not(s[5]), body, init)[0]


def jax_forward_only(function):
    if function[0] == "r":  # the bench's "-"
        raise NotImplementedError("JAX cannot reverse-differentiate lax.while_loop")


def torch_grad_of():
    import torch
    from torch.func import grad, jvp

    def grad_of(mode, f):
        if mode == "r":
            return grad(f)

        def forward(x):
            basis = torch.eye(x.shape[0], dtype=x.dtype)
            return torch.stack([jvp(f, (x,), (e,))[1] for e in basis])
        return forward
    return grad_of

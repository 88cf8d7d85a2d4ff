"""hello: square(x) = x * x and double(x), its derivative. Both GradBench
tools have it: JAX calls square and grad(square) eagerly (no jit), PyTorch
runs square and y.backward() on a tensor that requires grad. GradBench's
eval sends x = 1, then each output back (square, double, square, ...);
every call costs the same, so one x."""

from . import jax

NOTES = ["hello: as GradBench's tools write it (JAX eager, no jit; PyTorch "
         "backward()), but in float64 where GradBench's JAX tool uses float32."]


def workloads(quick):
    return [(fn, "x=1.5", 1.5, True) for fn in ("square", "double")]


def jax_peer(function, inp):
    jx, jnp = jax()
    x = jnp.array(inp, dtype=jnp.float64)

    def square(x):
        return x * x
    if function == "square":
        return lambda: square(x).item()
    return lambda: jx.grad(square)(x).item()


def torch_peer(function, inp):
    import torch
    x = torch.tensor(inp, dtype=torch.float64, requires_grad=True)

    def square(x):
        return x * x
    if function == "square":
        return lambda: square(x).item()

    def double():
        x.grad = None       # GradBench's tool gets a fresh tensor per call
        square(x).backward()
        return x.grad.item()
    return double

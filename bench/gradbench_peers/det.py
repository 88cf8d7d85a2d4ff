"""det: the determinant by expansion by minors (cmpad's det_by_minor) and
its gradient. Neither GradBench's tools/jax nor tools/pytorch has it. The
recursion is scalar code (ell! leaves: no array framework runs or traces
that at ell = 10), so both peers use the non-recursive formulation
GradBench's det README points array tools to (its tools/futhark/det.fut):
the sum over all ell! permutations p of sign(p) prod_i A[i, p_i], the same
multiplications. The permutations and signs are index tables built with
numpy when a size is prepared (as gradir's eval builds its index vectors);
each call is one gather of the ell! x ell entries, a product along rows
and a dot with the signs; the gradient by jax.grad (under jit) and
backward(). Inputs as GradBench's eval: numpy's global generator seeded
31337, ell * ell uniform numbers; ell from 5 to 11 (at 11 the tables
alone are 40M x 11 entries, so 10 is the largest here)."""

import functools

from . import f64, jax

NOTES = ["det: in neither GradBench tool; both peers sum over all ell! permutations "
         "(sign times the product of A[i, p_i], the formulation of GradBench's "
         "tools/futhark/det.fut), the permutation tables built once per size; gradients by "
         "jax.grad under jit and backward()."]
SIZES = [5, 8, 10]


def workloads(quick):
    import numpy as np
    out = []
    for ell in SIZES[:1] if quick else SIZES:
        np.random.seed(31337)
        inp = {"A": np.random.rand(ell * ell).tolist(), "ell": ell}
        out += [(fn, f"ell={ell}", inp, ell == SIZES[0]) for fn in ("primal", "gradient")]
    return out


@functools.lru_cache(maxsize=4)
def permutations(ell):
    """(flat, signs): every permutation p of range(ell) in lexicographic
    order as the row-major positions i * ell + p_i (ell! x ell, int32), and
    its sign (float64)."""
    import numpy as np
    perms, signs = np.zeros((1, 0), np.int32), np.ones(1)
    for size in range(1, ell + 1):          # permutations of range(size) from size - 1's
        first = np.repeat(np.arange(size, dtype=np.int32), len(perms))
        rest = np.tile(perms, (size, 1))
        rest = rest + (rest >= first[:, None])   # the rest renumbered around the first
        perms = np.concatenate([first[:, None], rest], 1)
        signs = np.where(first % 2 == 1, -1.0, 1.0) * np.tile(signs, size)
    return perms + np.arange(ell, dtype=np.int32) * ell, signs


def jax_peer(function, inp):
    import numpy as np
    jx, jnp = jax()
    flat, signs = (jnp.asarray(a) for a in permutations(int(inp["ell"])))
    a = jnp.asarray(f64(inp["A"]))

    def det(a):
        return jnp.prod(a[flat], axis=1) @ signs
    if function == "primal":
        f = jx.jit(det)
        return lambda: float(f(a))
    g = jx.jit(jx.grad(det))
    return lambda: np.asarray(g(a))


def torch_peer(function, inp):
    import torch
    flat, signs = permutations(int(inp["ell"]))
    flat, signs = torch.tensor(flat.astype("int64")), torch.tensor(signs)
    a = torch.tensor(f64(inp["A"]), requires_grad=function == "gradient")

    def det(a):
        return torch.prod(a[flat], 1) @ signs
    if function == "primal":
        return lambda: float(det(a))

    def gradient():
        a.grad = None
        det(a).backward()
        return a.grad.numpy()
    return gradient

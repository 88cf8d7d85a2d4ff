"""GradBench's kmeans, ba, ht, particle and saddle evals: gradir against JAX and PyTorch.

    build/venv/bin/python bench/gradbench.py                 # every eval and size
    build/venv/bin/python bench/gradbench.py --quick         # the smallest size of each
    build/venv/bin/python bench/gradbench.py --evals kmeans,particle
    build/venv/bin/python bench/gradbench.py --torch-loops   # PyTorch BA/HT as GradBench's
    build/venv/bin/python bench/gradbench.py --torch-eager   # + PyTorch particle/saddle
    build/venv/bin/python bench/gradbench.py --json bench/results/gradbench.json

gradir runs each function through ``gradir-gradbench``'s eval modules
(``gradir.tools.gradbench.evals.<eval>.prepare``: what the GradBench tool
runs). The peers follow GradBench's tools/jax and tools/pytorch where
those have the eval (kmeans: JAX's jit of jvp(grad, ones), PyTorch's vjp +
vhp) and are idiomatic elsewhere: ba as a vmap over observations of one
observation's residual, the blocks by jit(vmap(jacfwd)) (JAX) and
vmap(jacrev) (torch.func); ht's Jacobian by jit(jacfwd) / torch.func.jacfwd
w.r.t. theta and an offset shared by every point's us (the us columns'
block diagonal, as gradir); particle and saddle with the loops and
GradBench's solver as lax.while_loop under jax.jit, the outer derivative by
jax.jvp, the inner by jax.grad or jax.jvp: ff and fr only, since JAX cannot
reverse-differentiate lax.while_loop (rr and rf: "-"). ``--torch-eager``
adds PyTorch's particle and saddle: nested torch.func.grad /
torch.func.jvp over Python loops, eagerly (tens of seconds per call).
``--torch-loops`` runs PyTorch's ba and ht as GradBench's tools/pytorch
writes them instead of vectorized (a Python loop over observations, one
backward per residual: minutes at ba1's size; the first size of each only).

Inputs as GradBench generates them: kmeans (seed 31337, centroids = the
last k points), ba (ADBench ba1's camera, point, weight and feature,
duplicated to ba1/ba2/ba3's n, m, p), ht (a synthetic 22-bone hand of the
small model's size, 544 vertices and 1084 triangles, GradBench's
"complicated" variant with us), particle (w = 0), saddle (start (1, 1)).
Everything in float64, one thread (GradBench's tools run single-threaded
by default): the process is pinned to one core. Each peer's output is
compared with gradir's by GradBench's measure, |x - y| / max(|x| + |y|, 1)
("max diff"; GradBench accepts up to 1e-4). Timings: median of the runs (at least 3, more until
0.5 s; a single run where one takes over 2 s) after a warm-up call,
excluding the input conversion and compilation (GradBench's "evaluate"
timing). Ratios are peer time / gradir time (>1: gradir is faster); "-"
where a peer was not run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance

EVALS = ("kmeans", "ba", "ht", "particle", "saddle")
PEERS = ("jax", "torch")


def timeit(fn, min_time=0.5, slow=2.0):
    """Median seconds of ``fn()`` after one warm-up call (which also gives
    the output): at least 3 runs, more until ``min_time``; one run when the
    warm-up took over ``slow`` seconds."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    if first > slow:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0, out
    runs, start = [], time.perf_counter()
    while len(runs) < 3 or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs), out


def difference(a, b):
    """GradBench's comparison, the largest over every number of two outputs."""
    import numpy as np
    if isinstance(a, dict):
        return max(difference(a[k], b[k]) for k in a)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float((np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), 1.0)).max(initial=0.0))


# --- inputs ---------------------------------------------------------------

# ADBench's ba1 (GradBench's evals/ba/data/ba1_n49_m7776_p31843.txt): one
# camera, point, weight and feature; ba1, ba2 and ba3's (n, m, p).
BA_ONE = {"cam": [-0.758453, -1.109613, -0.845551, 34.556073, 39.676747, 53.881673,
                  419.194514, 5.864426, -8.518870, 0.087812, 0.002739],
          "x": [7.203245, 0.001144, 3.023326], "w": 0.417022, "feat": [271.760969, 834.209256]}
BA_SIZES = [(49, 7776, 31843), (21, 11315, 36455), (161, 48126, 182072)]
HAND_PARENTS = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19, 0]


def kmeans_input(k, n, d):
    import numpy as np
    np.random.seed(31337)
    points = np.random.rand(n, d).tolist()
    return {"points": points, "centroids": points[-k:]}


def ba_input(n, m, p):
    return {"n": n, "m": m, "p": p, **BA_ONE}


def ht_input(npts, nverts=544, ntri=1084):
    """A synthetic hand of the given size (GradBench's complicated variant)."""
    import numpy as np
    rng = np.random.default_rng(0)
    bones = len(HAND_PARENTS)

    def rigid():
        m = np.eye(4)
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        m[:3, :3], m[:3, 3] = q, rng.normal(size=3) * 0.3
        return m.tolist()
    weights = np.zeros((nverts, bones))
    for v in range(nverts):
        weights[v, rng.choice(bones, 3, replace=False)] = rng.dirichlet(np.ones(3))
    base = np.concatenate([rng.normal(size=(nverts, 3)), np.ones((nverts, 1))], axis=1)
    model = {"bone_count": bones, "bone_names": [f"b{b}" for b in range(bones)],
             "parents": HAND_PARENTS, "base_relatives": [rigid() for _ in range(bones)],
             "inverse_base_absolutes": [rigid() for _ in range(bones)],
             "base_positions": base.tolist(), "weights": weights.tolist(),
             "triangles": rng.integers(0, nverts, (ntri, 3)).tolist(), "is_mirrored": False}
    return {"theta": (rng.normal(size=26) * 0.3).tolist(),
            "data": {"model": model, "correspondences": rng.integers(0, ntri, npts).tolist(),
                     "points": rng.normal(size=(npts, 3)).tolist()},
            "us": rng.random((npts, 2)).tolist()}


# --- JAX ------------------------------------------------------------------

def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def jax_kmeans(function, inp):
    """GradBench's tools/jax kmeans: all-pairs norms from a matmul; dir is
    jvp(grad, ones) (the Hessian's diagonal) dividing the gradient."""
    import numpy as np
    jax, jnp = _jax()
    points, centroids = (jnp.asarray(np.asarray(inp[k], np.float64))
                         for k in ("points", "centroids"))

    def costfun(p, c):
        dists = jnp.sum(p ** 2, 1)[None, :] + jnp.sum(c ** 2, 1)[:, None] - 2 * (p @ c.T).T
        return jnp.min(dists, axis=0).sum()
    if function == "cost":
        f = jax.jit(costfun)
        return lambda: float(f(points, centroids))

    @jax.jit
    def direction(p, c):
        d, h = jax.jvp(jax.grad(lambda cs: costfun(p, cs)), (c,), (jnp.ones_like(c),))
        return d / h
    return lambda: np.asarray(direction(points, centroids))


def _rodrigues(xp, rot, pt, cross, where):
    sq = (rot * rot).sum(-1, keepdims=True)
    nz = sq != 0
    theta = xp.sqrt(where(nz, sq, 1.0))
    k = rot / theta
    turned = (pt * xp.cos(theta) + cross(k, pt) * xp.sin(theta)
              + k * (k * pt).sum(-1, keepdims=True) * (1 - xp.cos(theta)))
    return where(nz, turned, pt + cross(rot, pt))


def _ba_arrays(inp):
    from gradir.tools.gradbench.evals import ba
    return ba.arrays(inp)  # ba's duplication of the input (n, m, p, arrays)


def _ba_output(n, m, p, ci, pi, blocks, w_d):
    import numpy as np
    from gradir.tools.gradbench.evals import ba
    rows, cols, vals = ba.sparse(n, m, p, ci, pi, np.asarray(blocks), np.asarray(w_d))
    return {"rows": ba.dedup(rows), "cols": ba.dedup(cols), "vals": ba.dedup(vals)}


def jax_ba(function, inp):
    """vmap over observations of one observation's residual; the blocks by
    vmap(jacfwd) under jit (GradBench has no JAX BA tool)."""
    jax, jnp = _jax()
    n, m, p, (cams, xs, w, feats, ci, pi) = _ba_arrays(inp)

    def residual(cam, x, wi, feat):
        xc = _rodrigues(jnp, cam[0:3], x - cam[3:6], jnp.cross, jnp.where)
        proj = xc[:2] / xc[2]
        rsq = proj @ proj
        proj = proj * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
        return wi * (proj * cam[6] + cam[7:9] - feat)
    args = [jnp.asarray(a) for a in (cams, xs, w, feats, ci, pi)]
    if function == "objective":
        @jax.jit
        def objective(cams, xs, w, feats, ci, pi):
            return jax.vmap(residual)(cams[ci], xs[pi], w, feats), 1 - w * w

        def run():
            r, e = objective(*args)
            return {"reproj_error": {"elements": r[0], "repeated": p},
                    "w_err": {"element": float(e[0]), "repeated": p}}
        return run

    @jax.jit
    def blocks(cams, xs, w, feats, ci, pi):
        jc, jx, jw = jax.vmap(jax.jacfwd(residual, argnums=(0, 1, 2)))(
            cams[ci], xs[pi], w, feats)
        return (jnp.concatenate([jc, jx, jw[:, :, None]], axis=2),
                jax.vmap(jax.grad(lambda wi: 1 - wi * wi))(w))
    return lambda: _ba_output(n, m, p, ci, pi, *blocks(*args))


def _ht_objective(xp, theta, us, model, points, verts, ops):
    """ADBench's hand objective (complicated variant), for numpy-like ``xp``;
    ``ops``: (stack, 3 x 3 identity) of the framework."""
    stack, eye = ops
    rel, inv, base, weights = model
    zero, one = theta[0] * 0, theta[0] * 0 + 1
    pose = [theta[0:3], stack([one, one, one]), theta[3:6], stack([zero] * 3), stack([zero] * 3)]
    i = 6
    for _ in range(5):
        for j in range(3):
            if j == 0:
                pose.append(stack([theta[i], theta[i + 1], zero]))
                i += 2
            else:
                pose.append(stack([theta[i], zero, zero]))
                i += 1
        pose.append(stack([zero] * 3))
    absolutes = []
    for b, parent in enumerate(HAND_PARENTS):
        tx, tz, ty = pose[3 + b][0], pose[3 + b][1], pose[3 + b][2]
        cx, sx, cy, sy, cz, sz = (xp.cos(tx), xp.sin(tx), xp.cos(ty), xp.sin(ty),
                                  xp.cos(tz), xp.sin(tz))
        rx = stack([stack([one, zero, zero]), stack([zero, cx, -sx]), stack([zero, sx, cx])])
        ry = stack([stack([cy, zero, sy]), stack([zero, one, zero]), stack([-sy, zero, cy])])
        rz = stack([stack([cz, -sz, zero]), stack([sz, cz, zero]), stack([zero, zero, one])])
        r = rz @ ry @ rx
        tr = stack([stack([r[0, 0], r[0, 1], r[0, 2], zero]), stack([r[1, 0], r[1, 1], r[1, 2], zero]),
                    stack([r[2, 0], r[2, 1], r[2, 2], zero]), stack([zero, zero, zero, one])])
        m = rel[b] @ tr
        absolutes.append(m if parent < 0 else absolutes[parent] @ m)
    transforms = stack(absolutes) @ inv                                   # B x 4 x 4
    positions = ((transforms @ base.T) * weights.T[:, None, :]).sum(0)[:3]  # 3 x V
    aa = pose[0]
    norm = xp.sqrt((aa * aa).sum())
    k = aa / norm
    kx = stack([stack([zero, -k[2], k[1]]), stack([k[2], zero, -k[0]]), stack([-k[1], k[0], zero])])
    rot = eye + xp.sin(norm) * kx + (1 - xp.cos(norm)) * (kx @ kx)      # norm >= 1e-4 here
    positions = (rot @ positions).T + pose[2]                             # V x 3
    corner = [positions[verts[:, j]] for j in range(3)]
    hand = us[:, 0:1] * corner[0] + us[:, 1:2] * corner[1] + (1 - us[:, 0:1] - us[:, 1:2]) * corner[2]
    return points - hand


def _ht_arrays(inp):
    import numpy as np
    d, mdl = inp["data"], inp["data"]["model"]
    model = [np.asarray(mdl[k], np.float64) for k in
             ("base_relatives", "inverse_base_absolutes", "base_positions", "weights")]
    verts = np.asarray(mdl["triangles"], np.int64)[np.asarray(d["correspondences"])]
    return (np.asarray(inp["theta"], np.float64), np.asarray(inp["us"], np.float64), model,
            np.asarray(d["points"], np.float64), verts)


def jax_ht(function, inp):
    """The objective under jit; the Jacobian by jacfwd w.r.t. theta and an
    offset shared by every point's us (the us columns' block diagonal)."""
    import numpy as np
    jax, jnp = _jax()
    theta, us, model, points, verts = (jax.tree.map(jnp.asarray, a) for a in _ht_arrays(inp))
    ops = (jnp.stack, jnp.eye(3))

    def objective(theta, du):
        return _ht_objective(jnp, theta, us + du, model, points, verts, ops)
    du = jnp.zeros(2)
    if function == "objective":
        f = jax.jit(objective)
        return lambda: np.asarray(f(theta, du)).reshape(-1)
    jac = jax.jit(jax.jacfwd(objective, argnums=(0, 1)))

    def run():
        jt, ju = jac(theta, du)
        rows = jt.shape[0] * 3
        return np.concatenate([np.asarray(ju).reshape(rows, 2), np.asarray(jt).reshape(rows, 26)], 1)
    return run


def _descent(f, grad, x, norm, maximize=False):
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


def _particle(xp, grad_of, w0, stack):
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
        return float(_descent(f, grad_of(outer, f), w0, lambda g: float(xp.sqrt((g * g).sum())))[0])
    return solve


def _saddle(xp, grad_of, start):
    def cost(p1, p2):
        return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)

    def norm(g):
        return float(xp.sqrt((g * g).sum()))

    def solve(mode):
        outer, inner = mode

        def argmax_p2(p1, mode):
            f = lambda p2: cost(p1, p2)  # noqa: E731
            return _descent(f, grad_of(mode, f), start, norm, maximize=True)
        r1_cost = lambda p1: cost(p1, argmax_p2(p1, inner))  # noqa: E731
        r1 = _descent(r1_cost, grad_of(outer, r1_cost), start, norm)
        r2 = argmax_p2(r1, outer)
        return [float(v) for v in list(r1) + list(r2)]
    return solve


def _jax_grad_of(jax, jnp):
    def grad_of(mode, f):
        if mode == "r":
            return jax.grad(f)

        def forward(x):
            basis = jnp.eye(x.shape[0], dtype=x.dtype)
            return jnp.stack([jax.jvp(f, (x,), (e,))[1] for e in basis])
        return forward
    return grad_of


def _jax_descent(jax, jnp, f, grad, x0, maximize=False):
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


def _jax_forward_only(function):
    if function[0] == "r":  # the bench's "-"
        raise NotImplementedError("JAX cannot reverse-differentiate lax.while_loop")


def jax_particle(function, inp):
    """The Euler loop and the solver as lax.while_loop under jit; the inner
    gradient by jax.grad (r) or jax.jvp per basis vector (f), the outer by
    jax.jvp: only ff and fr (JAX cannot reverse-differentiate lax.while_loop)."""
    jax, jnp = _jax()
    _jax_forward_only(function)
    grad_of = _jax_grad_of(jax, jnp)

    def accel(w, x):
        d = x - jnp.stack([jnp.stack([10.0, 10.0 - w]), jnp.array([10.0, 0.0])])
        return (1 / jnp.sqrt((d * d).sum(1))).sum()

    def euler(wv):
        w = wv[0]
        g = grad_of(function[1], lambda x: accel(w, x))
        x, v = jax.lax.while_loop(lambda s: (s[0] + 0.1 * s[1])[1] > 0,
                                  lambda s: (s[0] + 0.1 * s[1], s[1] - 0.1 * g(s[0])),
                                  (jnp.array([0.0, 8.0]), jnp.array([0.75, 0.0])))
        return (x[0] - x[1] / v[1] * v[0]) ** 2
    solve = jax.jit(lambda w0: _jax_descent(jax, jnp, euler, grad_of("f", euler), w0))
    return lambda: float(solve(jnp.asarray([float(inp["w"])]))[0])


def jax_saddle(function, inp):
    """Both solvers as lax.while_loop under jit; the inner gradient by
    jax.grad (r) or jax.jvp (f), the outer by jax.jvp: only ff and fr."""
    jax, jnp = _jax()
    _jax_forward_only(function)
    grad_of = _jax_grad_of(jax, jnp)
    start = jnp.asarray(inp["start"], jnp.float64)

    def cost(p1, p2):
        return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)

    def argmax_p2(p1, mode):
        f = lambda p2: cost(p1, p2)  # noqa: E731
        return _jax_descent(jax, jnp, f, grad_of(mode, f), start, maximize=True)

    @jax.jit
    def solve(start):
        r1_cost = lambda p1: cost(p1, argmax_p2(p1, function[1]))  # noqa: E731
        r1 = _jax_descent(jax, jnp, r1_cost, grad_of("f", r1_cost), start)
        return jnp.concatenate([r1, argmax_p2(r1, "f")])
    return lambda: [float(v) for v in solve(start)]


# --- PyTorch --------------------------------------------------------------

def torch_kmeans(function, inp):
    """GradBench's tools/pytorch kmeans: vjp for the gradient, vhp with ones
    for the Hessian's diagonal."""
    import numpy as np
    import torch
    from torch.autograd.functional import vhp, vjp
    points, centroids = (torch.tensor(np.asarray(inp[k], np.float64))
                         for k in ("points", "centroids"))

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


def _torch_residual(torch):
    def residual(cam, x, wi, feat):
        xc = _rodrigues(torch, cam[0:3], x - cam[3:6], torch.linalg.cross, torch.where)
        proj = xc[:2] / xc[2]
        rsq = (proj ** 2).sum()
        proj = proj * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
        return wi * (proj * cam[6] + cam[7:9] - feat)
    return residual


def torch_ba(function, inp):
    """torch.func: vmap over observations of one observation's residual; the
    blocks by vmap(jacrev). (GradBench's tools/pytorch BA loops over the
    observations in Python instead: ``torch_ba_loop``, run with --torch-loops.)"""
    import torch
    from torch.func import grad, jacrev, vmap
    n, m, p, (cams, xs, w, feats, ci, pi) = _ba_arrays(inp)
    cams, xs, w, feats = (torch.tensor(a) for a in (cams, xs, w, feats))
    cit, pit = torch.tensor(ci), torch.tensor(pi)
    residual = _torch_residual(torch)
    if function == "objective":
        def run():
            r = vmap(residual)(cams[cit], xs[pit], w, feats)
            e = 1 - w * w
            return {"reproj_error": {"elements": r[0].numpy(), "repeated": p},
                    "w_err": {"element": float(e[0]), "repeated": p}}
        return run

    def run():
        jc, jx, jw = vmap(jacrev(residual, argnums=(0, 1, 2)))(cams[cit], xs[pit], w, feats)
        w_d = vmap(grad(lambda wi: 1 - wi * wi))(w)
        return _ba_output(n, m, p, ci, pi, torch.cat([jc, jx, jw[:, :, None]], 2).numpy(),
                          w_d.numpy())
    return run


def torch_ba_loop(function, inp):
    """GradBench's tools/pytorch BA: a Python loop over the observations;
    each Jacobian block by one backward per residual."""
    import numpy as np
    import torch
    n, m, p, (cams, xs, w, feats, ci, pi) = _ba_arrays(inp)
    cams_t = [torch.tensor(c, requires_grad=True) for c in cams]
    xs_t = [torch.tensor(x, requires_grad=True) for x in xs]
    w_t = [torch.tensor(v, requires_grad=True) for v in w]
    feats_t = torch.tensor(feats)
    residual = _torch_residual(torch)
    if function == "objective":
        def run():
            r = torch.stack([residual(cams_t[ci[j]], xs_t[pi[j]], w_t[j], feats_t[j])
                             for j in range(p)]).detach()
            e = torch.stack([1 - v * v for v in w_t]).detach()
            return {"reproj_error": {"elements": r[0].numpy(), "repeated": p},
                    "w_err": {"element": float(e[0]), "repeated": p}}
        return run

    def run():
        blocks, w_d = np.zeros((p, 2, 15)), np.zeros(p)
        for j in range(p):
            ins = (cams_t[ci[j]], xs_t[pi[j]], w_t[j])
            err = residual(*ins, feats_t[j])
            for r in range(2):
                g = torch.autograd.grad(err[r], ins, retain_graph=True)
                blocks[j, r] = torch.cat([g[0], g[1], g[2].view(1)]).numpy()
        for j in range(p):
            w_d[j] = torch.autograd.grad(1 - w_t[j] ** 2, w_t[j])[0]
        return _ba_output(n, m, p, ci, pi, blocks, w_d)
    return run


def torch_ht(function, inp):
    """torch.func.jacfwd w.r.t. theta and an offset shared by every point's
    us, as JAX's. (GradBench's tools/pytorch HT takes one backward per
    residual instead: ``torch_ht_loop``, run with --torch-loops.)"""
    import numpy as np
    import torch
    from torch.func import jacfwd
    theta, us, model, points, verts = _ht_arrays(inp)
    theta, us, points, verts = (torch.tensor(a) for a in (theta, us, points, verts))
    model = [torch.tensor(a) for a in model]
    ops = (torch.stack, torch.eye(3, dtype=torch.float64))

    def objective(theta, du):
        return _ht_objective(torch, theta, us + du, model, points, verts, ops)
    du = torch.zeros(2, dtype=torch.float64)
    if function == "objective":
        return lambda: objective(theta, du).reshape(-1).numpy()

    def run():
        jt, ju = jacfwd(objective, argnums=(0, 1))(theta, du)
        rows = jt.shape[0] * 3
        return np.concatenate([ju.reshape(rows, 2).numpy(), jt.reshape(rows, 26).numpy()], 1)
    return run


def torch_ht_loop(function, inp):
    """GradBench's tools/pytorch HT: the Jacobian w.r.t. (us, theta) by one
    backward per residual, the us columns' block diagonal then picked out."""
    import torch
    theta, us, model, points, verts = _ht_arrays(inp)
    model = [torch.tensor(a) for a in model]
    points_t, verts_t = torch.tensor(points), torch.tensor(verts)
    npts = us.shape[0]
    ops = (torch.stack, torch.eye(3, dtype=torch.float64))
    inputs = torch.tensor(list(us.reshape(-1)) + list(theta), requires_grad=True)

    def objective(all_params):
        return _ht_objective(torch, all_params[2 * npts:], all_params[:2 * npts].reshape(npts, 2),
                             model, points_t, verts_t, ops)
    if function == "objective":
        return lambda: objective(inputs).detach().reshape(-1).numpy()

    def run():
        err = objective(inputs).reshape(-1)
        rows = [torch.autograd.grad(e, inputs, retain_graph=True)[0] for e in err]
        jac = torch.stack(rows)
        us_j = torch.stack([jac[r, 2 * (r // 3):2 * (r // 3) + 2] for r in range(3 * npts)])
        return torch.cat([us_j, jac[:, 2 * npts:]], 1).numpy()
    return run


def _torch_grad_of():
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


def torch_particle_eager(function, inp):
    """Nested torch.func.grad (r) / torch.func.jvp per basis vector (f), over Python loops."""
    import torch
    solve = _particle(torch, _torch_grad_of(),
                      torch.tensor([float(inp["w"])], dtype=torch.float64), torch.stack)
    return lambda: solve(function)


def torch_saddle_eager(function, inp):
    import torch
    solve = _saddle(torch, _torch_grad_of(), torch.tensor(inp["start"], dtype=torch.float64))
    return lambda: solve(function)


# --- the measurements ------------------------------------------------------

def workloads(names, quick):
    """(eval, function, size label, input, whether it is the eval's first size) in order."""
    peers = sys.modules[__name__]
    out = []
    if "kmeans" in names:
        sizes = [(100, 1000, 16)] if quick else [(10, 1000, 8), (100, 1000, 16),
                                                 (1000, 10000, 8)]
        for k, n, d in sizes:
            inp = peers.kmeans_input(k, n, d)
            for fn in ("cost", "dir"):
                out.append(("kmeans", fn, f"k={k},n={n},d={d}", inp, (k, n, d) == sizes[0]))
    if "ba" in names:
        sizes = peers.BA_SIZES[:1] if quick else peers.BA_SIZES
        for i, (n, m, p) in enumerate(sizes):
            inp = peers.ba_input(n, m, p)
            for fn in ("objective", "jacobian"):
                out.append(("ba", fn, f"ba{i + 1} n={n},m={m},p={p}", inp, i == 0))
    if "ht" in names:
        sizes = [100] if quick else [100, 1600]
        for npts in sizes:
            inp = peers.ht_input(npts)
            for fn in ("objective", "jacobian"):
                out.append(("ht", fn, f"c={npts}", inp, npts == sizes[0]))
    for ev, inp in (("particle", {"w": 0.0}), ("saddle", {"start": [1.0, 1.0]})):
        if ev in names:
            for fn in ("rr", "ff", "fr", "rf"):
                out.append((ev, fn, "w=0" if ev == "particle" else "start=(1,1)", inp, True))
    return out


def run_child(names, quick, loops, eager):
    """Measures every workload in this process (pinned to one core); prints rows.
    ``loops``: PyTorch as GradBench's tools/pytorch writes BA and HT (Python
    loops of backward passes, minutes at the larger sizes: the first size only)."""
    import importlib

    peers = sys.modules[__name__]
    from gradir.tools.gradbench.protocol import jsonable
    rows = []
    for ev, fn, size, inp, first in workloads(names, quick):
        mod = importlib.import_module(f"gradir.tools.gradbench.evals.{ev}")
        closure = mod.prepare(fn, inp)
        seconds, out = timeit(closure)
        ref = jsonable(out)
        row = {"eval": ev, "function": fn, "size": size, "gradir": seconds * 1e3}
        for peer in PEERS:
            make = getattr(peers, f"{peer}_{ev}", None)
            if loops and hasattr(peers, f"{peer}_{ev}_loop"):
                make = getattr(peers, f"{peer}_{ev}_loop") if first else None
            if eager and hasattr(peers, f"{peer}_{ev}_eager"):
                make = getattr(peers, f"{peer}_{ev}_eager")
            try:
                run = make(fn, inp) if make is not None else None
            except NotImplementedError:
                run = None
            if run is None:
                row[peer], row[peer + " diff"] = None, None
                continue
            seconds, got = timeit(run)
            row[peer] = seconds * 1e3
            row[peer + " diff"] = difference(ref, jsonable(got))
        rows.append(row)
        print("ROW " + json.dumps(row), flush=True)
    return rows


def print_row(r):
    def ms(v):
        return f"{v:>12.3f}" if v is not None else f"{'-':>12}"

    def ratio(v):
        return f"{v / r['gradir']:>13.2f}" if v is not None else f"{'-':>13}"
    diffs = [r[p + " diff"] for p in PEERS if r[p + " diff"] is not None]
    print(f"{r['eval']:<9}{r['function']:<10}{r['size']:<24}{ms(r['gradir'])}"
          + "".join(ms(r[p]) for p in PEERS) + "".join(ratio(r[p]) for p in PEERS)
          + (f"{max(diffs):>11.1e}" if diffs else f"{'-':>11}"))


def header():
    print(f"{'eval':<9}{'function':<10}{'size':<24}{'gradir ms':>12}"
          + "".join(f"{p + ' ms':>12}" for p in PEERS)
          + "".join(f"{p + '/gradir':>13}" for p in PEERS) + f"{'max diff':>11}")


def table(rows):
    return {"title": "GradBench evals: gradir against JAX and PyTorch, one thread, float64",
            "columns": ["eval", "function", "size", "gradir ms"]
            + [f"{p} ms" for p in PEERS] + [f"{p}/gradir" for p in PEERS]
            + ["max difference"],
            "formats": [None, None, None, ".3f", ".3f", ".3f", ".2f", ".2f", ".1e"],
            "rows": [[r["eval"], r["function"], r["size"], r["gradir"]]
                     + [r[p] for p in PEERS]
                     + [r[p] / r["gradir"] if r[p] is not None else None for p in PEERS]
                     + [max((r[p + " diff"] for p in PEERS if r[p + " diff"] is not None),
                            default=None)]
                     for r in rows]}


def child_env():
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "GRADIR_NUM_THREADS"):
        env[var] = "1"
    env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    env["JAX_PLATFORMS"] = "cpu"
    return env


def main(argv):
    _cli.check(argv, __doc__, flags=("--quick", "--torch-loops", "--torch-eager"),
               valued=("--evals", "--child", "--json"))
    quick, loops = "--quick" in argv, "--torch-loops" in argv
    names = EVALS
    if "--evals" in argv:
        names = tuple(argv[argv.index("--evals") + 1].split(","))
        unknown = [n for n in names if n not in EVALS]
        if unknown:
            print(f"--evals: {', '.join(unknown)} not among {', '.join(EVALS)}",
                  file=sys.stderr)
            return 2
    if "--child" in argv:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:1])
        run_child(names, quick, loops, "--torch-eager" in argv)
        return 0
    import platform
    from gradir.conversion.cpu.host import detect_host
    host = detect_host()
    machine = (f"{host.model or platform.machine()}, {os.cpu_count()} cores, vector ISA "
               f"{host.isa}")
    print(f"# {machine}; one thread; python {platform.python_version()}")
    header()
    sys.stdout.flush()
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "1", "--evals", ",".join(names)]
    cmd += [flag for flag in ("--quick", "--torch-loops", "--torch-eager") if flag in argv]
    proc = subprocess.Popen(cmd, env=child_env(), stdout=subprocess.PIPE, text=True)
    rows = []
    for line in proc.stdout:
        if line.startswith("ROW "):
            rows.append(json.loads(line[4:]))
            print_row(rows[-1])
            sys.stdout.flush()
        else:
            print(line, end="")
    if proc.wait() != 0:
        print("bench/gradbench.py: the measuring process failed", file=sys.stderr)
        return 1
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")
    path = _results.json_option(argv)
    if path:
        notes = [f"gradir's host detection: {machine}.",
                 "One thread, float64; medians after a warm-up call (at least 3 runs, more "
                 "until 0.5 s; one run where a call takes over 2 s); compilation and input "
                 "conversion excluded; ratios are peer time / gradir time (>1: gradir is "
                 "faster); max difference: GradBench's comparison of each peer's output "
                 "with gradir's."]
        if quick:
            notes.append("--quick: the smallest size of each eval.")
        if loops:
            notes.append("--torch-loops: PyTorch's BA and HT as GradBench's tools/pytorch "
                         "writes them (a Python loop of backward passes), first size only.")
        _results.save_results(path, "gradbench", [table(rows)], notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

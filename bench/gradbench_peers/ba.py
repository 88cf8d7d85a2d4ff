"""ba: bundle adjustment. GradBench's tools/jax has no BA; its
tools/pytorch loops over the observations in Python (``torch_loop``,
``--torch-loops``). By default both peers are vectorized: a vmap over
observations of one observation's residual, the Jacobian blocks by
vmap(jacfwd) under jit (JAX) and vmap(jacrev) (torch.func).

Inputs: ADBench's ba1 (GradBench's evals/ba/data/ba1_n49_m7776_p31843.txt):
one camera, point, weight and feature, duplicated to ba1, ba2 and ba3's
(n, m, p), as GradBench's eval does."""

from . import jax

NOTES = ["ba: GradBench's JAX tool has no BA; both peers vmap one observation's "
         "residual (JAX: jit(vmap(jacfwd)); PyTorch: torch.func vmap(jacrev)); "
         "--torch-loops runs GradBench's PyTorch BA (a Python loop of backward passes)."]

BA_ONE = {"cam": [-0.758453, -1.109613, -0.845551, 34.556073, 39.676747, 53.881673,
                  419.194514, 5.864426, -8.518870, 0.087812, 0.002739],
          "x": [7.203245, 0.001144, 3.023326], "w": 0.417022, "feat": [271.760969, 834.209256]}
SIZES = [(49, 7776, 31843), (21, 11315, 36455), (161, 48126, 182072)]


def ba_input(n, m, p):
    return {"n": n, "m": m, "p": p, **BA_ONE}


def workloads(quick):
    sizes = SIZES[:1] if quick else SIZES
    out = []
    for i, (n, m, p) in enumerate(sizes):
        inp = ba_input(n, m, p)
        for fn in ("objective", "jacobian"):
            out.append((fn, f"ba{i + 1} n={n},m={m},p={p}", inp, i == 0))
    return out


def rodrigues(xp, rot, pt, cross, where):
    sq = (rot * rot).sum(-1, keepdims=True)
    nz = sq != 0
    theta = xp.sqrt(where(nz, sq, 1.0))
    k = rot / theta
    turned = (pt * xp.cos(theta) + cross(k, pt) * xp.sin(theta)
              + k * (k * pt).sum(-1, keepdims=True) * (1 - xp.cos(theta)))
    return where(nz, turned, pt + cross(rot, pt))


def _arrays(inp):
    from gradir.tools.gradbench.evals import ba
    return ba.arrays(inp)  # ba's duplication of the input (n, m, p, arrays)


def _output(n, m, p, ci, pi, blocks, w_d):
    import numpy as np
    from gradir.tools.gradbench.evals import ba
    rows, cols, vals = ba.sparse(n, m, p, ci, pi, np.asarray(blocks), np.asarray(w_d))
    return {"rows": ba.dedup(rows), "cols": ba.dedup(cols), "vals": ba.dedup(vals)}


def jax_peer(function, inp):
    """vmap over observations of one observation's residual; the blocks by
    vmap(jacfwd) under jit (GradBench has no JAX BA tool)."""
    jx, jnp = jax()
    n, m, p, (cams, xs, w, feats, ci, pi) = _arrays(inp)

    def residual(cam, x, wi, feat):
        xc = rodrigues(jnp, cam[0:3], x - cam[3:6], jnp.cross, jnp.where)
        proj = xc[:2] / xc[2]
        rsq = proj @ proj
        proj = proj * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
        return wi * (proj * cam[6] + cam[7:9] - feat)
    args = [jnp.asarray(a) for a in (cams, xs, w, feats, ci, pi)]
    if function == "objective":
        @jx.jit
        def objective(cams, xs, w, feats, ci, pi):
            return jx.vmap(residual)(cams[ci], xs[pi], w, feats), 1 - w * w

        def run():
            r, e = objective(*args)
            return {"reproj_error": {"elements": r[0], "repeated": p},
                    "w_err": {"element": float(e[0]), "repeated": p}}
        return run

    @jx.jit
    def blocks(cams, xs, w, feats, ci, pi):
        jc, jxs, jw = jx.vmap(jx.jacfwd(residual, argnums=(0, 1, 2)))(
            cams[ci], xs[pi], w, feats)
        return (jnp.concatenate([jc, jxs, jw[:, :, None]], axis=2),
                jx.vmap(jx.grad(lambda wi: 1 - wi * wi))(w))
    return lambda: _output(n, m, p, ci, pi, *blocks(*args))


def _torch_residual(torch):
    def residual(cam, x, wi, feat):
        xc = rodrigues(torch, cam[0:3], x - cam[3:6], torch.linalg.cross, torch.where)
        proj = xc[:2] / xc[2]
        rsq = (proj ** 2).sum()
        proj = proj * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
        return wi * (proj * cam[6] + cam[7:9] - feat)
    return residual


def torch_peer(function, inp):
    """torch.func: vmap over observations of one observation's residual; the
    blocks by vmap(jacrev). (GradBench's tools/pytorch BA loops over the
    observations in Python instead: ``torch_loop``, run with --torch-loops.)"""
    import torch
    from torch.func import grad, jacrev, vmap
    n, m, p, (cams, xs, w, feats, ci, pi) = _arrays(inp)
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
        return _output(n, m, p, ci, pi, torch.cat([jc, jx, jw[:, :, None]], 2).numpy(),
                       w_d.numpy())
    return run


def torch_loop(function, inp):
    """GradBench's tools/pytorch BA: a Python loop over the observations;
    each Jacobian block by one backward per residual."""
    import numpy as np
    import torch
    n, m, p, (cams, xs, w, feats, ci, pi) = _arrays(inp)
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
        return _output(n, m, p, ci, pi, blocks, w_d)
    return run

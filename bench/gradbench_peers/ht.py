"""ht: hand tracking, GradBench's "complicated" variant (with us). GradBench's
tools/jax has no HT; its tools/pytorch takes one backward per residual
(``torch_loop``, ``--torch-loops``). By default both peers take the
Jacobian by jacfwd w.r.t. theta and an offset shared by every point's us
(the us columns' block diagonal, as gradir).

Inputs: a synthetic 22-bone hand of the small model's size (544 vertices,
1084 triangles), c correspondences."""

from . import jax

NOTES = ["ht: GradBench's JAX tool has no HT; both peers take jacfwd w.r.t. theta and an "
         "offset shared by every point's us (JAX under jit; PyTorch torch.func); "
         "--torch-loops runs GradBench's PyTorch HT (one backward per residual). The hand "
         "is synthetic, of the small model's size (22 bones, 544 vertices, 1084 triangles)."]

HAND_PARENTS = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19, 0]
SIZES = [100, 1600]


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


def workloads(quick):
    sizes = SIZES[:1] if quick else SIZES
    out = []
    for npts in sizes:
        inp = ht_input(npts)
        for fn in ("objective", "jacobian"):
            out.append((fn, f"c={npts}", inp, npts == sizes[0]))
    return out


def objective(xp, theta, us, model, points, verts, ops):
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


def _arrays(inp):
    import numpy as np
    d, mdl = inp["data"], inp["data"]["model"]
    model = [np.asarray(mdl[k], np.float64) for k in
             ("base_relatives", "inverse_base_absolutes", "base_positions", "weights")]
    verts = np.asarray(mdl["triangles"], np.int64)[np.asarray(d["correspondences"])]
    return (np.asarray(inp["theta"], np.float64), np.asarray(inp["us"], np.float64), model,
            np.asarray(d["points"], np.float64), verts)


def jax_peer(function, inp):
    """The objective under jit; the Jacobian by jacfwd w.r.t. theta and an
    offset shared by every point's us (the us columns' block diagonal)."""
    import numpy as np
    jx, jnp = jax()
    theta, us, model, points, verts = (jx.tree.map(jnp.asarray, a) for a in _arrays(inp))
    ops = (jnp.stack, jnp.eye(3))

    def residuals(theta, du):
        return objective(jnp, theta, us + du, model, points, verts, ops)
    du = jnp.zeros(2)
    if function == "objective":
        f = jx.jit(residuals)
        return lambda: np.asarray(f(theta, du)).reshape(-1)
    jac = jx.jit(jx.jacfwd(residuals, argnums=(0, 1)))

    def run():
        jt, ju = jac(theta, du)
        rows = jt.shape[0] * 3
        return np.concatenate([np.asarray(ju).reshape(rows, 2), np.asarray(jt).reshape(rows, 26)], 1)
    return run


def torch_peer(function, inp):
    """torch.func.jacfwd w.r.t. theta and an offset shared by every point's
    us, as JAX's. (GradBench's tools/pytorch HT takes one backward per
    residual instead: ``torch_loop``, run with --torch-loops.)"""
    import numpy as np
    import torch
    from torch.func import jacfwd
    theta, us, model, points, verts = _arrays(inp)
    theta, us, points, verts = (torch.tensor(a) for a in (theta, us, points, verts))
    model = [torch.tensor(a) for a in model]
    ops = (torch.stack, torch.eye(3, dtype=torch.float64))

    def residuals(theta, du):
        return objective(torch, theta, us + du, model, points, verts, ops)
    du = torch.zeros(2, dtype=torch.float64)
    if function == "objective":
        return lambda: residuals(theta, du).reshape(-1).numpy()

    def run():
        jt, ju = jacfwd(residuals, argnums=(0, 1))(theta, du)
        rows = jt.shape[0] * 3
        return np.concatenate([ju.reshape(rows, 2).numpy(), jt.reshape(rows, 26).numpy()], 1)
    return run


def torch_loop(function, inp):
    """GradBench's tools/pytorch HT: the Jacobian w.r.t. (us, theta) by one
    backward per residual, the us columns' block diagonal then picked out."""
    import torch
    theta, us, model, points, verts = _arrays(inp)
    model = [torch.tensor(a) for a in model]
    points_t, verts_t = torch.tensor(points), torch.tensor(verts)
    npts = us.shape[0]
    ops = (torch.stack, torch.eye(3, dtype=torch.float64))
    inputs = torch.tensor(list(us.reshape(-1)) + list(theta), requires_grad=True)

    def residuals(all_params):
        return objective(torch, all_params[2 * npts:], all_params[:2 * npts].reshape(npts, 2),
                         model, points_t, verts_t, ops)
    if function == "objective":
        return lambda: residuals(inputs).detach().reshape(-1).numpy()

    def run():
        err = residuals(inputs).reshape(-1)
        rows = [torch.autograd.grad(e, inputs, retain_graph=True)[0] for e in err]
        jac = torch.stack(rows)
        us_j = torch.stack([jac[r, 2 * (r // 3):2 * (r // 3) + 2] for r in range(3 * npts)])
        return torch.cat([us_j, jac[:, 2 * npts:]], 1).numpy()
    return run

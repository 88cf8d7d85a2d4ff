# RUN: %PYTHON %s | FileCheck %s
# GradBench's ht eval (gradir.tools.gradbench.evals.ht): hand-tracking
# residuals and their Jacobian, simple (us empty: 26 columns) and
# complicated (2 + 26 columns), on a small synthetic hand (ADBench's 22-bone
# tree, 10 vertices, 6 triangles, 5 points) against a numpy implementation
# with loops and central finite differences (Inputs/ht_simple.json,
# Inputs/ht_complicated.json; `python ht.py --regenerate` rewrites them).

import json
import os
import sys

import numpy as np


def run(f):
    """Runs a test (not with --regenerate), printing ``TEST: name`` first."""
    if "--regenerate" not in sys.argv:
        print(f"TEST: {f.__name__}")
        f()
    return f

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")
PARENTS = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19, 0]


def rotation(axis_angle):
    """Rodrigues' rotation matrix (identity below a norm of 1e-4)."""
    n = np.sqrt(axis_angle @ axis_angle)
    if n < 1e-4:
        return np.eye(3)
    k = axis_angle / n
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(n) * kx + (1 - np.cos(n)) * kx @ kx


def euler(tx, ty, tz):
    rx = np.array([[1, 0, 0], [0, np.cos(tx), -np.sin(tx)], [0, np.sin(tx), np.cos(tx)]])
    ry = np.array([[np.cos(ty), 0, np.sin(ty)], [0, 1, 0], [-np.sin(ty), 0, np.cos(ty)]])
    rz = np.array([[np.cos(tz), -np.sin(tz), 0], [np.sin(tz), np.cos(tz), 0], [0, 0, 1]])
    return rz @ ry @ rx


def pose_params(theta, bones):
    pose = np.zeros((bones + 3, 3))
    pose[0], pose[1], pose[2] = theta[0:3], 1.0, theta[3:6]
    i_theta, row = 6, 5
    for _ in range(5):
        for i in range(3):
            pose[row, 0] = theta[i_theta]
            i_theta += 1
            if i == 0:
                pose[row, 1] = theta[i_theta]
                i_theta += 1
            row += 1
        row += 1
    return pose


def vertices(theta, model):
    """ADBench's get_skinned_vertex_positions + apply_global_transform, V x 3."""
    rel, inv = np.asarray(model["base_relatives"]), np.asarray(model["inverse_base_absolutes"])
    base, weights = np.asarray(model["base_positions"]), np.asarray(model["weights"])
    bones = len(model["parents"])
    pose = pose_params(theta, bones)
    absolutes = []
    for b, parent in enumerate(model["parents"]):
        tr = np.eye(4)
        xzy = pose[3 + b]
        tr[:3, :3] = euler(xzy[0], xzy[2], xzy[1])
        r = rel[b] @ tr
        absolutes.append(r if parent < 0 else absolutes[parent] @ r)
    out = np.zeros((base.shape[0], 3))
    for v in range(base.shape[0]):
        for b in range(bones):
            out[v] += weights[v, b] * (absolutes[b] @ inv[b] @ base[v])[:3]
    r = rotation(pose[0]) * pose[1][None, :]
    return out @ r.T + pose[2]


def residuals(theta, us, inp):
    data = inp["data"]
    verts = vertices(theta, data["model"])
    points, corr = np.asarray(data["points"]), data["correspondences"]
    err = []
    for i, c in enumerate(corr):
        if len(us):
            a, b, t = data["model"]["triangles"][c]
            hand = us[i][0] * verts[a] + us[i][1] * verts[b] + (1 - us[i][0] - us[i][1]) * verts[t]
        else:
            hand = verts[c]
        err.append(points[i] - hand)
    return np.concatenate(err)


def jacobian(inp, h=1e-6):
    theta, us = np.asarray(inp["theta"]), np.asarray(inp["us"]).reshape(-1, 2)
    cols = []
    for j in range(2 if len(us) else 0):
        e = np.zeros_like(us)
        e[:, j] = h       # each point's residuals depend on its own us only
        cols.append((residuals(theta, us + e, inp) - residuals(theta, us - e, inp)) / (2 * h))
    for j in range(26):
        e = np.zeros(26)
        e[j] = h
        cols.append((residuals(theta + e, us, inp) - residuals(theta - e, us, inp)) / (2 * h))
    return np.stack(cols, axis=1)


def synthetic(complicated):
    rng = np.random.default_rng(7)
    bones, nverts, ntri, npts = len(PARENTS), 10, 6, 5

    def rigid():
        m = np.eye(4)
        m[:3, :3] = rotation(rng.normal(size=3))
        m[:3, 3] = rng.normal(size=3) * 0.3
        return m
    weights = np.zeros((nverts, bones))
    for v in range(nverts):
        picked = rng.choice(bones, 3, replace=False)
        weights[v, picked] = rng.dirichlet(np.ones(3))
    base = np.concatenate([rng.normal(size=(nverts, 3)), np.ones((nverts, 1))], axis=1)
    model = {"bone_count": bones, "bone_names": [f"b{b}" for b in range(bones)],
             "parents": PARENTS, "base_relatives": [rigid().tolist() for _ in range(bones)],
             "inverse_base_absolutes": [rigid().tolist() for _ in range(bones)],
             "base_positions": base.tolist(), "weights": weights.tolist(),
             "triangles": rng.integers(0, nverts, (ntri, 3)).tolist(), "is_mirrored": False}
    corr = rng.integers(0, ntri if complicated else nverts, npts).tolist()
    return {"theta": (rng.normal(size=26) * 0.3).tolist(),
            "data": {"model": model, "correspondences": corr,
                     "points": rng.normal(size=(npts, 3)).tolist()},
            "us": rng.random((npts, 2)).tolist() if complicated else []}


def fixture(variant):
    return os.path.join(HERE, f"ht_{variant}.json")


def regenerate():
    for variant in ("simple", "complicated"):
        inp = synthetic(variant == "complicated")
        us = np.asarray(inp["us"]).reshape(-1, 2)
        out = {"objective": residuals(np.asarray(inp["theta"]), us, inp).tolist(),
               "jacobian": jacobian(inp).tolist()}
        with open(fixture(variant), "w") as f:
            json.dump({"input": inp, "outputs": out}, f)


@run
def test_ht():
    from gradir.tools.gradbench.evals import ht
    from gradir.tools.gradbench.protocol import jsonable
    print("functions:", ", ".join(ht.FUNCTIONS))
    for variant in ("simple", "complicated"):
        with open(fixture(variant)) as f:
            fx = json.load(f)
        for name in ht.FUNCTIONS:
            run = ht.prepare(name, fx["input"] | {"min_runs": 1, "min_seconds": 0})
            got = json.loads(json.dumps(jsonable(run())))
            want = np.asarray(fx["outputs"][name])
            assert np.shape(got) == want.shape, (variant, name, np.shape(got), want.shape)
            err = (np.abs(np.asarray(got) - want) / np.maximum(np.abs(got) + np.abs(want), 1)).max()
            assert err < 1e-7, (variant, name, err)
            print(f"ht {variant} {name} {list(want.shape)} ok")


if "--regenerate" in sys.argv:
    regenerate()

# CHECK-LABEL: TEST: test_ht
# CHECK-NEXT: functions: objective, jacobian
# CHECK-NEXT: ht simple objective [15] ok
# CHECK-NEXT: ht simple jacobian [15, 26] ok
# CHECK-NEXT: ht complicated objective [15] ok
# CHECK-NEXT: ht complicated jacobian [15, 28] ok

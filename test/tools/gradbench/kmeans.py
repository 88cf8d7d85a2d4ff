# RUN: %PYTHON %s | FileCheck %s
# GradBench's kmeans eval (gradir.tools.gradbench.evals.kmeans): the cost and
# the Newton direction J / diag(H) on a small input, against numpy and
# central finite differences (Inputs/kmeans.json; `python kmeans.py
# --regenerate` rewrites it), through the protocol's JSON conversion.

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

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "kmeans.json")


def cost(points, centroids):
    """sum_i min_j |C_j - P_i|^2, from the differences themselves."""
    d = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    return d.min(axis=1).sum()


def direction(points, centroids, h=1e-3):
    """Central differences: the gradient, and the Hessian's diagonal from
    second differences (the cost is quadratic in each centroid near C)."""
    grad, hess = np.zeros_like(centroids), np.zeros_like(centroids)
    f0 = cost(points, centroids)
    for idx in np.ndindex(centroids.shape):
        e = np.zeros_like(centroids)
        e[idx] = h
        fp, fm = cost(points, centroids + e), cost(points, centroids - e)
        grad[idx] = (fp - fm) / (2 * h)
        hess[idx] = (fp - 2 * f0 + fm) / h ** 2
    return grad / hess


def regenerate():
    rng = np.random.default_rng(45)
    points = rng.random((40, 3))
    centroids = points[-4:]
    out = {"cost": cost(points, centroids), "dir": direction(points, centroids).tolist()}
    with open(FIXTURE, "w") as f:
        json.dump({"input": {"points": points.tolist(), "centroids": centroids.tolist()},
                   "outputs": out}, f)


def difference(x, y):
    """GradBench's comparison: |x - y| / max(|x| + |y|, 1), elementwise."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return np.abs(x - y) / np.maximum(np.abs(x) + np.abs(y), 1.0)


@run
def test_kmeans():
    from gradir.tools.gradbench.evals import kmeans
    from gradir.tools.gradbench.protocol import jsonable
    with open(FIXTURE) as f:
        fixture = json.load(f)
    print("functions:", ", ".join(kmeans.FUNCTIONS))
    for name in kmeans.FUNCTIONS:
        run = kmeans.prepare(name, fixture["input"] | {"min_runs": 1, "min_seconds": 0})
        got = json.loads(json.dumps(jsonable(run())))
        want = fixture["outputs"][name]
        assert type(got) is type(want), (name, type(got), type(want))
        err = difference(got, want).max()
        assert err < 1e-8, (name, err)
        print(f"kmeans {name} ok")
    # Another shape compiles its own program; the first is cached.
    run = kmeans.prepare("cost", {"points": [[0.0, 0.0], [1.0, 1.0], [4.0, 4.0]],
                                  "centroids": [[1.0, 1.0], [4.0, 4.0]]})
    print("cost of another shape:", run())


if "--regenerate" in sys.argv:
    regenerate()

# CHECK-LABEL: TEST: test_kmeans
# CHECK-NEXT: functions: cost, dir
# CHECK-NEXT: kmeans cost ok
# CHECK-NEXT: kmeans dir ok
# CHECK-NEXT: cost of another shape: 2.0

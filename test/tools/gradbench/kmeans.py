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


@run
def test_kmeans_blocks():
    """The cost over blocks of points in a loop (what a large input runs):
    numpy's value and the reference interpreter's, with and without a tail."""
    import gradir
    from gradir.tools.gradbench.build import function
    from gradir.tools.gradbench.evals import kmeans
    with open(FIXTURE) as f:
        fixture = json.load(f)
    points = np.asarray(fixture["input"]["points"])
    centroids = np.asarray(fixture["input"]["centroids"])
    for n, block in ((40, 16), (32, 16), (40, 0)):
        p, (k, d) = points[:n], centroids.shape
        text = kmeans.cost_text(n, k, d, block)
        got = float(function(text)(p, centroids))
        interp = float(gradir.interpret(gradir.parse(text), "main", p, centroids)[0])
        assert difference(got, cost(p, centroids)) < 1e-14, (n, block, got)
        assert difference(got, interp) < 1e-14, (n, block, got, interp)
        print(f"n={n} block={block}: loop {'scf.for' in text}, matches numpy and the interpreter")
    print("block of k=1000, n=10000:", kmeans.block_size(10000, 1000),
          "k=100, n=1000:", kmeans.block_size(1000, 100))


if "--regenerate" in sys.argv:
    regenerate()

# CHECK-LABEL: TEST: test_kmeans
# CHECK-NEXT: functions: cost, dir
# CHECK-NEXT: kmeans cost ok
# CHECK-NEXT: kmeans dir ok
# CHECK-NEXT: cost of another shape: 2.0
# CHECK-LABEL: TEST: test_kmeans_blocks
# CHECK-NEXT: n=40 block=16: loop True, matches numpy and the interpreter
# CHECK-NEXT: n=32 block=16: loop True, matches numpy and the interpreter
# CHECK-NEXT: n=40 block=0: loop False, matches numpy and the interpreter
# CHECK-NEXT: block of k=1000, n=10000: 128 k=100, n=1000: 0

# RUN: %PYTHON %s | FileCheck %s
# GradBench's saddle eval (gradir.tools.gradbench.evals.saddle): the saddle
# point of f(p1, p2) = |p1|^2 - |p2|^2 by gradient descent nested in
# gradient descent, by the four nestings of forward and reverse mode,
# against a numpy implementation (the inner gradient written out, the outer
# one by central differences through the inner solver, GradBench's
# solver) stored in Inputs/saddle.json (`python saddle.py --regenerate`
# rewrites it), and GradBench's expected value, 8.246324826140356e-06 x 4.

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

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "saddle.json")


def argmin(f, grad, x):
    """GradBench's multivariate_argmin (cpp/gradbench/gd.hpp)."""
    x = np.asarray(x, np.float64)
    fx, gx, i, eta = f(x), grad(x), 0, 1e-5
    while True:
        if np.sqrt(gx @ gx) <= 1e-5:
            return x
        if i == 10:
            eta, i = eta * 2, 0
            continue
        xp = x - eta * gx
        if np.sqrt((x - xp) @ (x - xp)) <= 1e-5:
            return x
        fxp = f(xp)
        if fxp < fx:
            x, fx, gx, i = xp, fxp, grad(xp), i + 1
        else:
            eta, i = eta / 2, 0


def argmax(f, grad, x):
    return argmin(lambda y: -f(y), lambda y: -grad(y), x)


def cost(p1, p2):
    return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)


def solve(start, h=1e-6):
    start = np.asarray(start, np.float64)

    def inner(p1):
        return argmax(lambda p2: cost(p1, p2), lambda p2: -2 * p2, start)

    def outer(p1):
        return cost(p1, inner(p1))

    def outer_grad(p1):
        return np.array([(outer(p1 + e) - outer(p1 - e)) / (2 * h) for e in np.eye(2) * h])
    r1 = argmin(outer, outer_grad, start)
    r2 = inner(r1)
    return np.concatenate([r1, r2]).tolist()


def regenerate():
    with open(FIXTURE, "w") as fh:
        json.dump({"input": {"start": [1.0, 1.0]}, "output": solve([1.0, 1.0])}, fh)


@run
def test_saddle():
    from gradir.tools.gradbench.evals import saddle
    from gradir.tools.gradbench.protocol import jsonable
    with open(FIXTURE) as fh:
        fixture = json.load(fh)
    want, gradbench = np.asarray(fixture["output"]), 8.246324826140356e-06
    print("functions:", ", ".join(saddle.FUNCTIONS))
    for name in saddle.FUNCTIONS:
        run = saddle.prepare(name, fixture["input"] | {"min_runs": 1, "min_seconds": 0})
        got = json.loads(json.dumps(jsonable(run())))
        assert len(got) == 4 and all(type(v) is float for v in got), got
        assert np.abs(np.asarray(got) - want).max() < 1e-9, (name, got, want)
        assert np.abs(np.asarray(got) - gradbench).max() < 1e-15, (name, got)
        print(f"saddle {name}: " + " ".join(f"{v:.6e}" for v in got))


if "--regenerate" in sys.argv:
    regenerate()

# CHECK-LABEL: TEST: test_saddle
# CHECK-NEXT: functions: rr, ff, fr, rf
# CHECK-NEXT: saddle rr: 8.246325e-06 8.246325e-06 8.246325e-06 8.246325e-06
# CHECK-NEXT: saddle ff: 8.246325e-06 8.246325e-06 8.246325e-06 8.246325e-06
# CHECK-NEXT: saddle fr: 8.246325e-06 8.246325e-06 8.246325e-06 8.246325e-06
# CHECK-NEXT: saddle rf: 8.246325e-06 8.246325e-06 8.246325e-06 8.246325e-06

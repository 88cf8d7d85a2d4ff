# RUN: %PYTHON %s | FileCheck %s
# GradBench's particle eval (gradir.tools.gradbench.evals.particle): the
# control w that steers the particle through the origin, by the four
# nestings of forward and reverse mode (ff, fr, rf, rr), against a numpy
# implementation (the field's gradient written out, the outer derivative by
# central differences, GradBench's gradient-descent solver) stored in
# Inputs/particle.json (`python particle.py --regenerate` rewrites it), and
# GradBench's own expected value, 0.2071918746486116.

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

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "particle.json")


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


def naive_euler(w):
    charges = np.array([[10.0, 10.0 - w], [10.0, 0.0]])
    x, v, dt = np.array([0.0, 8.0]), np.array([0.75, 0.0]), 0.1
    while True:
        d = x - charges
        # -grad_x sum 1/|x - c| = sum (x - c) / |x - c|^3
        accel = (d / (np.sqrt((d * d).sum(axis=1)) ** 3)[:, None]).sum(axis=0)
        xn = x + dt * v
        if xn[1] <= 0:
            t = -x[1] / v[1]
            return (x + t * v)[0] ** 2
        x, v = xn, v + dt * accel


def solve(w0, h=1e-6):
    f = lambda x: naive_euler(x[0])  # noqa: E731
    grad = lambda x: np.array([(f(x + h) - f(x - h)) / (2 * h)])  # noqa: E731
    return float(argmin(f, grad, [w0])[0])


def regenerate():
    with open(FIXTURE, "w") as fh:
        json.dump({"input": {"w": 0.0}, "output": solve(0.0)}, fh)


@run
def test_particle():
    from gradir.tools.gradbench.evals import particle
    with open(FIXTURE) as fh:
        fixture = json.load(fh)
    want, gradbench = fixture["output"], 0.2071918746486116
    print("functions:", ", ".join(particle.FUNCTIONS))
    for name in particle.FUNCTIONS:
        got = particle.prepare(name, fixture["input"] | {"min_runs": 1, "min_seconds": 0})()
        assert type(got) is float
        assert abs(got - want) < 1e-6, (name, got, want)
        assert abs(got - gradbench) < 1e-12, (name, got, gradbench)
        print(f"particle {name}: {got:.10f}")


if "--regenerate" in sys.argv:
    regenerate()

# CHECK-LABEL: TEST: test_particle
# CHECK-NEXT: functions: rr, ff, fr, rf
# CHECK-NEXT: particle rr: 0.2071918746
# CHECK-NEXT: particle ff: 0.2071918746
# CHECK-NEXT: particle fr: 0.2071918746
# CHECK-NEXT: particle rf: 0.2071918746

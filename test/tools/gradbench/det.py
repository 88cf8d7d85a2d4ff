# RUN: %PYTHON %s | FileCheck %s
# GradBench's det eval (gradir.tools.gradbench.evals.det): the determinant by
# expansion by minors and its gradient. The 8 x 8 fixture (Inputs/det.json;
# `python det.py --regenerate` rewrites it) takes the split path (the top
# row's column choices, then a batch of 7 x 7 minors) and is checked against
# a recursive Laplace expansion in Python and central differences; small
# sizes (the unsplit path) against numpy.linalg.det and det(A) inv(A)^T.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import gb_check  # noqa: E402


def laplace(a):
    """Expansion by minors along the first row."""
    n = a.shape[0]
    if n == 1:
        return float(a[0, 0])
    total = 0.0
    for j in range(n):
        minor = np.delete(a[1:], j, axis=1)
        total += (-1) ** j * a[0, j] * laplace(minor)
    return total


def regenerate():
    ell = 8
    a = np.random.default_rng(45).random(ell * ell)
    f = lambda v: laplace(v.reshape(ell, ell))  # noqa: E731
    gb_check.save("det", {"A": a.tolist(), "ell": ell},
                  {"primal": f(a), "gradient": gb_check.central_differences(f, a).tolist()})


def main():
    from gradir.tools.gradbench.evals import det as module
    gb_check.check("det", module, 1e-8)
    rng = np.random.default_rng(0)
    for ell in (1, 2, 3, 5):
        a = rng.random((ell, ell))
        inp = {"A": a.ravel().tolist(), "ell": ell}
        d = module.prepare("primal", inp)()
        g = module.prepare("gradient", inp)()
        want = np.linalg.det(a)
        assert abs(d - want) < 1e-12, (ell, d, want)
        np.testing.assert_allclose(g, (want * np.linalg.inv(a).T).ravel(), rtol=1e-9, atol=1e-12)
        print(f"ell={ell} ok")


if __name__ == "__main__":
    regenerate() if "--regenerate" in sys.argv else main()

# CHECK: functions: primal, gradient
# CHECK-NEXT: det primal ok
# CHECK-NEXT: det gradient ok
# CHECK-NEXT: ell=1 ok
# CHECK-NEXT: ell=2 ok
# CHECK-NEXT: ell=3 ok
# CHECK-NEXT: ell=5 ok

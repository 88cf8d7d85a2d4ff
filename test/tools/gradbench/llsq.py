# RUN: %PYTHON %s | FileCheck %s
# GradBench's llsq eval (gradir.tools.gradbench.evals.llsq): the least-squares
# objective and its gradient, against a direct numpy loop and central
# differences (Inputs/llsq.json; `python llsq.py --regenerate` rewrites it).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import gb_check  # noqa: E402


def objective(x, n):
    total = 0.0
    for i in range(n):
        t = -1 + i * 2 / (n - 1)
        r = np.sign(t) - sum(x[j] * t ** j for j in range(len(x)))
        total += r * r
    return float(total / 2)


def regenerate():
    x, n = np.random.default_rng(45).random(5), 21
    gb_check.save("llsq", {"x": x.tolist(), "n": n},
                  {"primal": objective(x, n),
                   "gradient": gb_check.central_differences(lambda v: objective(v, n), x).tolist()})


def main():
    from gradir.tools.gradbench.evals import llsq as module
    gb_check.check("llsq", module, 1e-8)


if __name__ == "__main__":
    regenerate() if "--regenerate" in sys.argv else main()

# CHECK: functions: primal, gradient
# CHECK-NEXT: llsq primal ok
# CHECK-NEXT: llsq gradient ok

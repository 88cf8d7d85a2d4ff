# RUN: %PYTHON %s | FileCheck %s
# GradBench's lse eval (gradir.tools.gradbench.evals.lse): log-sum-exp and
# its gradient on a vector whose entries reach 800 (exp overflows without the
# max), against numpy and central differences (Inputs/lse.json;
# `python lse.py --regenerate` rewrites it).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import gb_check  # noqa: E402


def lse(x):
    m = np.max(x)
    return float(m + np.log(np.sum(np.exp(x - m))))


def regenerate():
    rng = np.random.default_rng(45)
    x = np.concatenate([rng.uniform(-3, 3, 9), [800.0, 799.5]])
    gb_check.save("lse", {"x": x.tolist()},
                  {"primal": lse(x), "gradient": gb_check.central_differences(lse, x).tolist()})


def main():
    from gradir.tools.gradbench.evals import lse as module
    gb_check.check("lse", module, 1e-7)
    run = module.prepare("gradient", {"x": [0.0, 0.0]})
    print("gradient of another shape:", run().tolist())


if __name__ == "__main__":
    regenerate() if "--regenerate" in sys.argv else main()

# CHECK: functions: primal, gradient
# CHECK-NEXT: lse primal ok
# CHECK-NEXT: lse gradient ok
# CHECK-NEXT: gradient of another shape: [0.5, 0.5]

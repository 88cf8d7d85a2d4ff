# RUN: %PYTHON %s | FileCheck %s
# GradBench's ode eval (gradir.tools.gradbench.evals.ode): RK4 steps and the
# gradient of the last component, against numpy and central differences
# (Inputs/ode.json; `python ode.py --regenerate` rewrites it).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import gb_check  # noqa: E402


def solve(x, s):
    def f(y):
        z = np.empty_like(y)
        z[0] = x[0]
        z[1:] = x[1:] * y[:-1]
        return z
    h, y = 2.0 / s, np.zeros_like(x)
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h * k1 / 2)
        k3 = f(y + h * k2 / 2)
        k4 = f(y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return y


def regenerate():
    x, s = np.random.default_rng(45).random(6), 4
    gb_check.save("ode", {"x": x.tolist(), "s": s},
                  {"primal": solve(x, s).tolist(),
                   "gradient": gb_check.central_differences(lambda v: solve(v, s)[-1], x).tolist()})


def main():
    from gradir.tools.gradbench.evals import ode as module
    gb_check.check("ode", module, 1e-8)
    padded()


def padded():
    """The primal's padded program (y behind four ones) against numpy, the
    reference interpreter, and ``program``'s steps (bitwise)."""
    import gradir
    from gradir.tools.gradbench.build import function
    from gradir.tools.gradbench.evals import ode
    for n, s in ((6, 4), (1, 3), (37, 5)):
        x = np.random.default_rng(n).random(n)
        text = ode.primal_program(n, s)
        got = function(text)(x)
        interp = np.asarray(gradir.interpret(gradir.parse(text), "main", x)[0])
        assert np.allclose(got, solve(x, s), rtol=1e-14, atol=1e-15), (n, s, got)
        assert np.allclose(got, interp, rtol=1e-15, atol=0), (n, s, got, interp)
        assert np.array_equal(got, function(ode.program(n, s, False))(x)), (n, s)
        print(f"padded primal n={n} s={s}: matches numpy, the interpreter and program")


if __name__ == "__main__":
    regenerate() if "--regenerate" in sys.argv else main()

# CHECK: functions: primal, gradient
# CHECK-NEXT: ode primal ok
# CHECK-NEXT: ode gradient ok
# CHECK-NEXT: padded primal n=6 s=4: matches numpy, the interpreter and program
# CHECK-NEXT: padded primal n=1 s=3: matches numpy, the interpreter and program
# CHECK-NEXT: padded primal n=37 s=5: matches numpy, the interpreter and program

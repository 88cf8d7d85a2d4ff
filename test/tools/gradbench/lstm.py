# RUN: %PYTHON %s | FileCheck %s
# GradBench's lstm eval (gradir.tools.gradbench.evals.lstm): the loss over a
# short sequence through two layers and its gradient (main_params then
# extra_params, row-major), against a numpy loop and central differences
# (Inputs/lstm.json; `python lstm.py --regenerate` rewrites it).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import gb_check  # noqa: E402


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def objective(main, extra, state, seq):
    l, b = main.shape[0] // 2, seq.shape[1]
    state = state.copy()
    total = 0.0
    for t in range(seq.shape[0] - 1):
        x = seq[t] * extra[0]
        for i in range(l):
            w, v = main[2 * i].reshape(4, b), main[2 * i + 1].reshape(4, b)
            h, c = state[2 * i], state[2 * i + 1]
            forget = sigmoid(x * w[0] + v[0])
            ingate = sigmoid(h * w[1] + v[1])
            outgate = sigmoid(x * w[2] + v[2])
            change = np.tanh(h * w[3] + v[3])
            c = c * forget + ingate * change
            h = outgate * np.tanh(c)
            state[2 * i], state[2 * i + 1] = h, c
            x = h
        y = x * extra[1] + extra[2]
        ynorm = y - np.log(np.sum(np.exp(y)) + 2)
        total += np.sum(seq[t + 1] * ynorm)
    return float(-total / ((seq.shape[0] - 1) * b))


def regenerate():
    rng = np.random.default_rng(45)
    l, c, b = 2, 6, 3
    main, extra = rng.random((2 * l, 4 * b)), rng.random((3, b))
    state, seq = rng.random((2 * l, b)), rng.integers(0, 2, (c, b)).astype(np.float64)
    params = np.concatenate([main.ravel(), extra.ravel()])

    def f(p):
        return objective(p[:main.size].reshape(main.shape), p[main.size:].reshape(extra.shape),
                         state, seq)
    gb_check.save("lstm", {"main_params": main.tolist(), "extra_params": extra.tolist(),
                           "state": state.tolist(), "sequence": seq.tolist()},
                  {"objective": f(params),
                   "jacobian": gb_check.central_differences(f, params).tolist()})


def main():
    from gradir.tools.gradbench.evals import lstm as module
    gb_check.check("lstm", module, 1e-8)


if __name__ == "__main__":
    regenerate() if "--regenerate" in sys.argv else main()

# CHECK: functions: objective, jacobian
# CHECK-NEXT: lstm objective ok
# CHECK-NEXT: lstm jacobian ok

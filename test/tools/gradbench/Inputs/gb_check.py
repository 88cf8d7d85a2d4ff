"""Helpers of the GradBench eval tests: fixtures (an eval's input and the
outputs numpy and central differences give for it, in Inputs/<eval>.json),
GradBench's comparison, and one eval checked against its fixture through the
protocol's JSON conversion."""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def fixture_path(name):
    return os.path.join(HERE, f"{name}.json")


def save(name, input, outputs):
    with open(fixture_path(name), "w") as f:
        json.dump({"input": input, "outputs": outputs}, f)


def load(name):
    with open(fixture_path(name)) as f:
        return json.load(f)


def central_differences(f, x, h=1e-6):
    """The gradient of the scalar function f at the float64 array x."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def difference(x, y):
    """GradBench's comparison: |x - y| / max(|x| + |y|, 1), elementwise."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return np.abs(x - y) / np.maximum(np.abs(x) + np.abs(y), 1.0)


def leaves(value, path=""):
    """(path, number or list of numbers) of a JSON value, dicts by key."""
    if isinstance(value, dict):
        for k in sorted(value):
            yield from leaves(value[k], f"{path}.{k}")
    else:
        yield path, value


def check(eval_name, module, tolerance):
    """Runs every function of `module` on the fixture's input and compares
    its JSON output with the fixture's (same JSON types, GradBench's
    difference below `tolerance`); prints one line per function."""
    from gradir.tools.gradbench.protocol import jsonable
    fixture = load(eval_name)
    print("functions:", ", ".join(module.FUNCTIONS))
    for name in module.FUNCTIONS:
        run = module.prepare(name, fixture["input"] | {"min_runs": 1, "min_seconds": 0})
        got = json.loads(json.dumps(jsonable(run())))
        want = fixture["outputs"][name]
        got_leaves, want_leaves = dict(leaves(got)), dict(leaves(want))
        assert got_leaves.keys() == want_leaves.keys(), (name, got_leaves.keys())
        worst = 0.0
        for path, w in want_leaves.items():
            g = got_leaves[path]
            assert type(g) is type(w), (name, path, type(g), type(w))
            assert np.shape(g) == np.shape(w), (name, path, np.shape(g), np.shape(w))
            worst = max(worst, float(np.max(difference(g, w))))
        assert worst < tolerance, (name, worst)
        print(f"{eval_name} {name} ok")

# RUN: %PYTHON %s | FileCheck %s
# GradBench's ba eval (gradir.tools.gradbench.evals.ba): the reprojection and
# weight errors and their sparse Jacobian in GradBench's compressed form, on
# a small input (the camera, point, weight and feature of ADBench's ba1,
# n=3 cameras, m=5 points, p=16 observations), against a numpy
# implementation and central finite differences, the sparse matrix
# assembled in ADBench's row order by a loop (Inputs/ba.json; `python ba.py
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

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "ba.json")
INPUT = {"n": 3, "m": 5, "p": 16,
         "cam": [-0.758453, -1.109613, -0.845551, 34.556073, 39.676747, 53.881673,
                 419.194514, 5.864426, -8.518870, 0.087812, 0.002739],
         "x": [7.203245, 0.001144, 3.023326], "w": 0.417022, "feat": [271.760969, 834.209256]}


def residual(cam, x, w, feat):
    """One observation's two reprojection errors (ADBench's computeReprojError)."""
    rot, centre = cam[0:3], cam[3:6]
    pt = x - centre
    theta = np.sqrt(rot @ rot)
    if theta != 0:
        k = rot / theta
        pt = (pt * np.cos(theta) + np.cross(k, pt) * np.sin(theta)
              + k * (k @ pt) * (1 - np.cos(theta)))
    else:
        pt = pt + np.cross(rot, pt)
    proj = pt[:2] / pt[2]
    rsq = proj @ proj
    proj = proj * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
    return w * (proj * cam[6] + cam[7:9] - feat)


def expected(inp):
    n, m, p = inp["n"], inp["m"], inp["p"]
    cam, x, w, feat = (np.asarray(inp[k], np.float64) for k in ("cam", "x", "w", "feat"))
    reproj = [residual(cam, x, w, feat) for _ in range(p)]
    objective = {"reproj_error": {"elements": reproj[0].tolist(), "repeated": p},
                 "w_err": {"element": float(1 - w * w), "repeated": p}}
    rows, cols, vals = [0], [], []
    h = 1e-6
    for i in range(p):
        ci, pi = i % n, i % m
        params = np.concatenate([cam, x, [w]])
        block = np.zeros((2, 15))
        for j in range(15):
            e = np.zeros(15)
            e[j] = h
            up, dn = params + e, params - e
            block[:, j] = (residual(up[:11], up[11:14], up[14], feat)
                           - residual(dn[:11], dn[11:14], dn[14], feat)) / (2 * h)
        column = ([11 * ci + k for k in range(11)] + [11 * n + 3 * pi + k for k in range(3)]
                  + [11 * n + 3 * m + i])
        for r in range(2):
            rows.append(rows[-1] + 15)
            cols += column
            vals += block[r].tolist()
    for i in range(p):
        rows.append(rows[-1] + 1)
        cols.append(11 * n + 3 * m + i)
        vals.append(float(-2 * w))
    short = lambda a: a[:30] + a[-1:]  # noqa: E731
    return {"objective": objective,
            "jacobian": {"rows": short(rows), "cols": short(cols), "vals": short(vals)}}


def regenerate():
    with open(FIXTURE, "w") as f:
        json.dump({"input": INPUT, "outputs": expected(INPUT)}, f)


def compare(got, want, path=""):
    """GradBench's comparison (types, keys, lengths; numbers to 1e-4 of
    |x| + |y| or 1), here with 1e-7."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (path, got)
        for k in want:
            compare(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got)
        for i, (g, w) in enumerate(zip(got, want)):
            compare(g, w, f"{path}[{i}]")
    elif isinstance(want, int):
        assert type(got) is int and got == want, (path, got, want)
    else:
        assert type(got) is float, (path, got)
        assert abs(got - want) / max(abs(got) + abs(want), 1.0) < 1e-7, (path, got, want)


@run
def test_ba():
    from gradir.tools.gradbench.evals import ba
    from gradir.tools.gradbench.protocol import jsonable
    with open(FIXTURE) as f:
        fixture = json.load(f)
    print("functions:", ", ".join(ba.FUNCTIONS))
    for name in ba.FUNCTIONS:
        run = ba.prepare(name, fixture["input"] | {"min_runs": 1, "min_seconds": 0})
        got = json.loads(json.dumps(jsonable(run())))
        compare(got, fixture["outputs"][name], name)
        print(f"ba {name} ok")
    # The whole sparse matrix, not only what GradBench keeps: ADBench's CSR layout.
    n, m, p, args = ba.arrays(fixture["input"])
    blocks = np.arange(p * 2 * 15, dtype=np.float64).reshape(p, 2, 15)
    rows, cols, vals = ba.sparse(n, m, p, args[4], args[5], blocks, -np.arange(p, dtype=np.float64))
    print("rows", len(rows), rows[:3].tolist(), rows[-3:].tolist())
    print("cols", len(cols), cols[11:16].tolist(), cols[-2:].tolist())
    print("vals", len(vals), vals[28:32].tolist())


@run
def test_ba_objective_blocks():
    """The objective over blocks of observations in a loop (what a large
    input runs), with and without a tail: numpy's errors, the reference
    interpreter's, and all observations at once (bitwise)."""
    import gradir
    from gradir.tools.gradbench.build import function
    from gradir.tools.gradbench.evals import ba
    n, m, p, args = ba.arrays(INPUT)
    want = np.asarray([residual(*(np.asarray(INPUT[k], np.float64) for k in ("cam", "x", "w",
                                                                           "feat")))] * p)
    whole = function(ba.objective_text(n, m, p, 0))(*args)
    for block in (5, 8, 0):
        text = ba.objective_text(n, m, p, block)
        got = function(text)(*args)
        interp = gradir.interpret(gradir.parse(text), "main", *args)
        # GradBench's measure (the errors cancel features of ~800: 1e-13 apart)
        assert (abs(got[0] - want) / np.maximum(abs(got[0]) + abs(want), 1)).max() < 1e-10, \
            (block, got[0] - want)
        for g, i, w in zip(got, interp, whole):
            assert np.allclose(g, np.asarray(i), rtol=1e-13, atol=1e-13), (block, g, i)
            assert np.array_equal(g, w), (block, g, w)
        print(f"p={p} block={block}: loop {'scf.for' in text}, tail {'residual_tail' in text}, "
              "matches numpy, the interpreter and one block")


if "--regenerate" in sys.argv:
    regenerate()

# CHECK-LABEL: TEST: test_ba
# CHECK-NEXT: functions: objective, jacobian
# CHECK-NEXT: ba objective ok
# CHECK-NEXT: ba jacobian ok
# 2p + p + 1 row offsets; 15 nonzeros per reprojection row, 1 per weight row
# CHECK-NEXT: rows 49 [0, 15, 30] [494, 495, 496]
# observation 0: camera 0's 11 columns, then point 0 (33, 34, 35), then weight 0 (48)
# CHECK-NEXT: cols 496 [33, 34, 35, 48, 0] [62, 63]
# CHECK-NEXT: vals 496 [28.0, 29.0, 30.0, 31.0]

# CHECK-LABEL: TEST: test_ba_objective_blocks
# CHECK-NEXT: p=16 block=5: loop True, tail True, matches numpy, the interpreter and one block
# CHECK-NEXT: p=16 block=8: loop True, tail False, matches numpy, the interpreter and one block
# CHECK-NEXT: p=16 block=0: loop False, tail False, matches numpy, the interpreter and one block

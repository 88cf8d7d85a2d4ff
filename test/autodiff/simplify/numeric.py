# RUN: %PYTHON %s %gradir_src | FileCheck %s
# Safety of rlx-simplify-gradient: on every gradient test program reachable
# from here (the VJP-rule tests' programs, rlx-gradient's feature tests, the
# MLP, the seed's transpose/matmul forms) the simplified adjoint
# (rlx-gradient, simplify=true) and the raw one (simplify=false) agree in
# float64 through the reference interpreter, and the simplified one has no
# more ops.
#
# The Gradient tests are re-run with their gradient check replaced by this
# comparison (no finite differences: the Gradient suite itself does those).

import contextlib
import io
import os
import runpy
import sys

import numpy as np

import gradir.testing as testing
import gradir.testing.oracle  # noqa: F401  (compiled-code oracle)
from gradir import interpret
from gradir.ir import find_function
from gradir.autodiff.simplify import count_ops

SRC = sys.argv[1]
GRADIENT = os.path.join(SRC, "test", "autodiff")
STATS = {"programs": 0, "raw": 0, "simplified": 0, "fewer": 0}


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def compare(text, args, wrt=None, func="main", target_index=0, rtol=None, atol=None,
            eps=None, **options):
    """Stands in for ``check_gradient``: raw and simplified adjoints agree."""
    args = [np.asarray(a) for a in args]
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.floating)]
    opts = dict(func=func, target_index=target_index, wrt=list(wrt), **options)
    opts.pop("simplify", None)
    raw = testing.gradient_module(text, simplify=False, **opts)
    simplified = testing.gradient_module(text, simplify=True, **opts)
    name = f"{func}_adjoint"
    n_raw = count_ops(find_function(raw.operation, name))
    n_simple = count_ops(find_function(simplified.operation, name))
    assert n_simple <= n_raw, f"simplified adjoint has {n_simple} ops > {n_raw}:\n{text}"
    want = interpret(raw, name, *args)
    got = interpret(simplified, name, *args)
    testing.oracle.record(simplified, name, args)     # compiled too, at exit
    assert len(want) == len(got)
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.shape(g) == np.shape(w), (k, np.shape(g), np.shape(w))
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10,
                                   err_msg=f"output {k} differs after simplification:\n{text}")
    STATS["programs"] += 1
    STATS["raw"] += n_raw
    STATS["simplified"] += n_simple
    STATS["fewer"] += n_simple < n_raw
    return list(got[len(got) - len(wrt):])


testing.check_gradient = compare
sys.path.insert(0, os.path.join(GRADIENT, "rules", "Inputs"))
import grad_helpers  # noqa: E402

grad_helpers.check_gradient = compare


def rerun(path):
    """Runs a Gradient test file (its own assertions included), quietly."""
    before = STATS["programs"]
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(path, run_name="__main__")
    return STATS["programs"] - before


@run
def rule_programs():
    total = 0
    for name in ("unary", "binary", "shape", "reduce", "nn", "misc"):
        n = rerun(os.path.join(GRADIENT, "rules", f"{name}.py"))
        assert n > 0, f"rules/{name}.py reached no program"
        total += n
    print(f"rules: {total} programs agree")
# CHECK-LABEL: TEST: rule_programs
# CHECK: rules: {{[0-9]+}} programs agree


@run
def feature_programs():
    n = rerun(os.path.join(GRADIENT, "features.py"))
    m = rerun(os.path.join(GRADIENT, "mlp.py"))
    assert n > 0 and m > 0
    print("features and mlp agree")
# CHECK-LABEL: TEST: feature_programs
# CHECK: features and mlp agree


SEED_FORMS = {
    "a_bt": ('"rlx.matmul"(%a, %bt)', "3x4", "5x4"),
    "at_b": ('"rlx.matmul"(%at, %b)', "4x3", "4x5"),
    "at_bt": ('"rlx.matmul"(%at, %bt)', "4x3", "5x4"),
}


def seed_text(expr, sa, sb):
    ta, tb = f"tensor<{sa}xf64>", f"tensor<{sb}xf64>"
    ra, rb = "x".join(reversed(sa.split("x"))), "x".join(reversed(sb.split("x")))
    return f"""
func.func @main(%a: {ta}, %b: {tb}, %w: tensor<3x5xf64>) -> tensor<f64> {{
  %at = "rlx.permute_dims"(%a) {{axes = array<i64: 1, 0>}} : ({ta}) -> tensor<{ra}xf64>
  %bt = "rlx.permute_dims"(%b) {{axes = array<i64: 1, 0>}} : ({tb}) -> tensor<{rb}xf64>
  %m = {expr} : (tensor<3x4xf64>, tensor<4x5xf64>) -> tensor<3x5xf64>
  %p = "rlx.multiply"(%m, %w) : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
  %s = "rlx.sum"(%p) : (tensor<3x5xf64>) -> tensor<f64>
  return %s : tensor<f64>
}}"""


@run
def seed_forms():
    rng = np.random.default_rng(7)
    for key, (expr, sa, sb) in SEED_FORMS.items():
        text = seed_text(expr, sa, sb)
        shapes = [tuple(int(d) for d in sa.split("x")), tuple(int(d) for d in sb.split("x")),
                  (3, 5)]
        args = [rng.standard_normal(s) for s in shapes]
        ga, gb = compare(text, args, wrt=[0, 1])
        a, b, w = args
        at = a.T if key.startswith("at") else a
        bt = b.T if key.endswith("bt") else b
        ga_want, gb_want = w @ bt.T, at.T @ w
        if key.startswith("at"):
            ga_want = ga_want.T
        if key.endswith("bt"):
            gb_want = gb_want.T
        np.testing.assert_allclose(ga, ga_want, rtol=1e-12)
        np.testing.assert_allclose(gb, gb_want, rtol=1e-12)
        print(f"{key} ok")
# CHECK-LABEL: TEST: seed_forms
# CHECK: a_bt ok
# CHECK: at_b ok
# CHECK: at_bt ok


@run
def pass_cases():
    """Every function of the pattern test file computes the same values
    before and after rlx-simplify-gradient (random inputs, float32)."""
    import gradir
    from gradir.autodiff.simplify import simplify_function
    from mlir import ir
    path = os.path.join(SRC, "test", "transforms", "rlx-simplify-gradient.mlir")
    with open(path) as f:
        text = f.read()
    before, after = gradir.parse(text), gradir.parse(text)
    rng = np.random.default_rng(3)
    names = []
    for op in after.body.operations:
        op = op.operation
        name = ir.StringAttr(op.attributes["sym_name"]).value
        simplify_function(op)
        args = []
        for t in ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).inputs:
            t = ir.RankedTensorType(t)
            shape = list(t.shape)
            if str(t.element_type) == "i1":
                args.append(rng.random(shape) < 0.5)
            else:
                args.append(rng.standard_normal(shape).astype(np.float32))
        want = interpret(before, name, *args)
        got = interpret(after, name, *args)
        for k, (g, w) in enumerate(zip(got, want)):
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"@{name} result {k}")
        names.append(name)
    assert len(names) >= 25, names
    print(f"{len(names)} pattern cases keep their values")
# CHECK-LABEL: TEST: pass_cases
# CHECK: {{[0-9]+}} pattern cases keep their values


@run
def summary():
    assert STATS["programs"] >= 100, STATS
    assert STATS["simplified"] < STATS["raw"], STATS
    print(f"compared {STATS['programs']} programs; {STATS['fewer']} got smaller; ops "
          f"{STATS['raw']} -> {STATS['simplified']}")
# CHECK-LABEL: TEST: summary
# CHECK: compared {{[0-9]+}} programs; {{[0-9]+}} got smaller; ops {{[0-9]+}} -> {{[0-9]+}}

# RUN: %PYTHON %s %gradir_src | FileCheck %s
# The simplifier's two engines give byte-identical IR: gradir's worklist
# driver (``_driver``, the default for straight-line functions) against
# MLIR's greedy driver followed by rlx-cse and rlx-dce (the reference), on
# every gradient test program reachable from here (the VJP-rule tests'
# programs, rlx-gradient's feature tests, the MLP), every function of the
# transform tests' .mlir files (raw and as rlx-gradient's input), and deep
# dense-tanh chains.

import contextlib
import glob
import io
import os
import runpy
import sys

import numpy as np

import gradir
import gradir.testing as testing
from gradir.autodiff.gradient import find_function
from gradir.autodiff.simplify import simplify_function
from gradir.testing.chains import dense_tanh

SRC = sys.argv[1]
GRADIENT = os.path.join(SRC, "test", "autodiff")
STATS = {"functions": 0, "worklist": 0}


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def same_both_ways(module, name):
    """Simplifies ``@name`` of two copies of ``module``, one per engine,
    and asserts the printed modules are identical."""
    text = gradir.print_module(module)
    outs = []
    for engine in ("greedy", "worklist"):
        m = gradir.parse(text)
        fn = find_function(m.operation, name)
        try:
            simplify_function(fn, engine=engine)
        except ValueError:          # not a straight-line function of rlx ops
            assert engine == "worklist"
            return
        outs.append(gradir.print_module(m))
    assert outs[0] == outs[1], f"engines differ on @{name}:\n{text}\n--- greedy\n{outs[0]}" \
                               f"\n--- worklist\n{outs[1]}"
    STATS["functions"] += 1
    STATS["worklist"] += 1


def compare(text, args, wrt=None, func="main", target_index=0, rtol=None, atol=None,
            eps=None, **options):
    """Stands in for ``check_gradient``."""
    args = [np.asarray(a) for a in args]
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.floating)]
    opts = dict(func=func, target_index=target_index, wrt=list(wrt), **options)
    opts.pop("simplify", None)
    raw = testing.gradient_module(text, simplify=False, **opts)
    same_both_ways(raw, f"{func}_adjoint")
    return [np.zeros(np.shape(args[i])) for i in wrt]


testing.check_gradient = compare
sys.path.insert(0, os.path.join(GRADIENT, "rules", "Inputs"))
import grad_helpers  # noqa: E402

grad_helpers.check_gradient = compare


def rerun(path):
    before = STATS["functions"]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            runpy.run_path(path, run_name="__main__")
        except AssertionError as err:       # the stand-in's zero gradients fail checks
            if "engines differ" in str(err):
                raise
    return STATS["functions"] - before


@run
def rule_and_feature_programs():
    total = 0
    for name in ("rules/unary", "rules/binary", "rules/shape", "rules/reduce", "rules/nn",
                 "rules/misc", "features", "mlp"):
        total += rerun(os.path.join(GRADIENT, f"{name}.py"))
    assert total >= 100, total
    print(f"{total} adjoints identical")
# CHECK-LABEL: TEST: rule_and_feature_programs
# CHECK: {{[0-9]+}} adjoints identical


def chunks():
    for path in sorted(glob.glob(os.path.join(SRC, "test", "transforms", "*.mlir"))):
        with open(path) as f:
            for chunk in f.read().split("// -----"):
                try:
                    yield gradir.parse(chunk)
                except Exception:       # noqa: BLE001 - invalid-input tests
                    continue


def functions(module):
    from mlir import ir
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and len(op.regions[0].blocks):
            yield ir.StringAttr(op.attributes["sym_name"]).value


@run
def transform_test_functions():
    n = 0
    for module in chunks():
        for name in list(functions(module)):
            before = STATS["functions"]
            same_both_ways(module, name)
            n += STATS["functions"] - before
            try:
                raw = gradir.parse(gradir.print_module(module))
                gradir.run_pipeline(raw, f"builtin.module(rlx-gradient{{func={name} "
                                         "simplify=false}})")
            except Exception:   # noqa: BLE001 - not differentiable as it is
                continue
            before = STATS["functions"]
            same_both_ways(raw, f"{name}_adjoint")
            n += STATS["functions"] - before
    assert n >= 60, n
    print(f"{n} functions identical")
# CHECK-LABEL: TEST: transform_test_functions
# CHECK: {{[0-9]+}} functions identical


def chain(n):
    return dense_tanh(n, elt="f64")


@run
def deep_chains():
    for n in (1, 2, 40):
        m = gradir.parse(chain(n))
        gradir.run_pipeline(m, "builtin.module(rlx-gradient{simplify=false})")
        same_both_ways(m, "main_adjoint")
        m = gradir.parse(chain(n))
        gradir.run_pipeline(m, "builtin.module(rlx-gradient{simplify=false wrt=1})")
        same_both_ways(m, "main_adjoint")
    print("chains identical")
# CHECK-LABEL: TEST: deep_chains
# CHECK: chains identical

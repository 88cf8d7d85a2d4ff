# RUN: %PYTHON %s | FileCheck %s
# scf.for nested 40 deep (hostile-input review: 95 deep took 27 s, 190 deep
# 264 s; the tidying after the gradient walked every loop for every loop
# around it).  The gradient against central finite differences (float64,
# interpreter), and what the tidying must still do at that depth: a loop-
# invariant op of the innermost body leaves every loop, and a value an inner
# loop carries (updated in place) stays where it is computed.

import re

import numpy as np

import gradir
from gradir.testing import check_gradient, gradient_module

rng = np.random.default_rng(0)


def nest(n):
    """Level i: %a{i} = %h{i} * %w, then level i+1 carries %a{i}; after it,
    sin of its result is yielded.  The innermost body adds exp(%w), loop-
    invariant, and the result of a loop of two trips that starts from
    -%w (loop-invariant too, but that loop updates it in place).  Every level runs one trip but the outermost two (two
    trips)."""
    lines = ["func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<f64> {",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             "  %c2 = arith.constant 2 : index"]
    prev = "x"
    for i in range(n):
        ub = "c2" if i < 2 else "c1"
        lines.append(f"  %r{i} = scf.for %i{i} = %c0 to %{ub} step %c1 iter_args(%h{i} = %{prev}) "
                     "-> (tensor<3xf64>) {")
        lines.append(f'  %a{i} = "rlx.multiply"(%h{i}, %w) : (tensor<3xf64>, tensor<3xf64>) '
                     "-> tensor<3xf64>")
        prev = f"a{i}"
    lines.append('  %e = "rlx.exp"(%w) : (tensor<3xf64>) -> tensor<3xf64>')
    lines.append('  %z = "rlx.negative"(%w) : (tensor<3xf64>) -> tensor<3xf64>')
    lines.append("  %g = scf.for %j = %c0 to %c2 step %c1 iter_args(%gj = %z) -> (tensor<3xf64>) {")
    lines.append('  %gc = "rlx.cos"(%gj) : (tensor<3xf64>) -> tensor<3xf64>')
    lines.append("  scf.yield %gc : tensor<3xf64>\n  }")
    lines.append(f'  %m0 = "rlx.add"(%{prev}, %e) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>')
    lines.append('  %m = "rlx.add"(%m0, %g) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>')
    inner = "m"
    for i in reversed(range(n)):
        lines.append(f'  %s{i} = "rlx.sin"(%{inner}) : (tensor<3xf64>) -> tensor<3xf64>')
        lines.append(f"  scf.yield %s{i} : tensor<3xf64>")
        lines.append("  }")
        inner = f"r{i}"
    lines.append('  %t = "rlx.sum"(%r0) : (tensor<3xf64>) -> tensor<f64>')
    lines.append("  return %t : tensor<f64>\n}")
    return "\n".join(lines)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


@run
def forty_deep():
    text = nest(40)
    check_gradient(text, [rng.normal(size=3), rng.normal(size=3) * 0.9])
    print("gradient ok")
    adjoint = gradir.print_module(gradient_module(text)).split("@main_adjoint(")[1]
    lines = adjoint.splitlines()
    first_loop = next(k for k, s in enumerate(lines) if "scf.for" in s)
    exps = [k for k, s in enumerate(lines) if re.search(r'"rlx.exp"\(%arg1\)', s)]
    assert exps and max(exps) < first_loop, (exps, first_loop)
    print("invariant hoisted")
    # -%w starts the innermost loop, which updates it in place: it stays
    # in the body (of the forward loop and of each reverse loop recomputing it)
    negs = [k for k, s in enumerate(lines) if re.search(r'"rlx.negative"\(%arg1\)', s)]
    assert negs and min(negs) > first_loop, (negs, first_loop)
    print("carried init stays")
# CHECK-LABEL: TEST: forty_deep
# CHECK: gradient ok
# CHECK: invariant hoisted
# CHECK: carried init stays

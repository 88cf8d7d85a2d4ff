# RUN: %PYTHON %s | FileCheck %s
# A loop whose carried value enters straight from another loop's result
# (hostile-input review: test/conversion/cpu/rlx-lower-to-llvm-step-checks.mlir,
# a run-time step loop then a constant step one, stopped rlx-gradient with
# "internal error: scf.for reached the backward without recording its
# iterations").  Recording the first loop replaced its results, and the
# activity the PREPARE hook read still named the old ones, so the second
# loop was left unrecorded.  Every pairing of scf.for (constant or run-time
# step) and scf.while, at the top and inside a loop body, against central
# finite differences in float64 through the interpreter; every mode.

import numpy as np

from gradir import interpret
from gradir.testing import check_gradient, gradient_module

rng = np.random.default_rng(0)

# {A} and {B}: the two loops; %x -> A -> %r -> B -> %q; the step %s comes
# from the run-time argument %n.
TOP = """
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: tensor<i64>) -> tensor<f64> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %e = tensor.extract %n[] : tensor<i64>
  %s = arith.index_cast %e : i64 to index
  {A}
  {B}
  %t = "rlx.sum"(%q) : (tensor<3xf64>) -> tensor<f64>
  return %t : tensor<f64>
}}
"""


def _scale(res, h):
    # the first loop (%r) multiplies by the captured %w; the second only
    # reads its carried value, so it is active through %r alone
    if res == "r":
        return (f"    %m{res} = \"rlx.multiply\"(%{h}, %w) : (tensor<3xf64>, tensor<3xf64>) "
                f"-> tensor<3xf64>\n")
    return f"    %m{res} = \"rlx.cos\"(%{h}) : (tensor<3xf64>) -> tensor<3xf64>\n"


def for_loop(res, init, step, op):
    return (f"%{res} = scf.for %i{res} = %c1 to %c7 step %{step} iter_args(%h{res} = %{init}) "
            f"-> (tensor<3xf64>) {{\n"
            + _scale(res, f"h{res}") +
            f"    %y{res} = \"rlx.{op}\"(%m{res}) : (tensor<3xf64>) -> tensor<3xf64>\n"
            f"    scf.yield %y{res} : tensor<3xf64>\n  }}")


def while_loop(res, init, op):
    # three trips, counted in an index carried beside the tensor
    return (f"%{res}, %k{res} = scf.while (%h{res} = %{init}, %j{res} = %c0) "
            f": (tensor<3xf64>, index) -> (tensor<3xf64>, index) {{\n"
            f"    %b{res} = arith.cmpi slt, %j{res}, %c2 : index\n"
            f"    scf.condition(%b{res}) %h{res}, %j{res} : tensor<3xf64>, index\n"
            f"  }} do {{\n"
            f"  ^bb0(%a{res}: tensor<3xf64>, %u{res}: index):\n"
            + _scale(res, f"a{res}") +
            f"    %y{res} = \"rlx.{op}\"(%m{res}) : (tensor<3xf64>) -> tensor<3xf64>\n"
            f"    %v{res} = arith.addi %u{res}, %c1 : index\n"
            f"    scf.yield %y{res}, %v{res} : tensor<3xf64>, index\n  }}")


def loop(kind, res, init, op):
    if kind == "while":
        return while_loop(res, init, op)
    return for_loop(res, init, {"const": "c2", "dyn": "s"}[kind], op)


def top(first, second):
    return TOP.format(A=loop(first, "r", "x", "sin"), B=loop(second, "q", "r", "tanh"))


# The same pair inside an outer loop's body (the body's backward prepares
# its loops through the same hook).
NESTED = """
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: tensor<i64>) -> tensor<f64> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %e = tensor.extract %n[] : tensor<i64>
  %s = arith.index_cast %e : i64 to index
  %o = scf.for %io = %c0 to %c3 step %c1 iter_args(%x2 = %x) -> (tensor<3xf64>) {{
  {A}
  {B}
    scf.yield %q : tensor<3xf64>
  }}
  %t = "rlx.sum"(%o) : (tensor<3xf64>) -> tensor<f64>
  return %t : tensor<f64>
}}
"""


def nested(first, second):
    return NESTED.format(A=loop(first, "r", "x2", "sin"), B=loop(second, "q", "r", "tanh"))


def args(step):
    return [rng.normal(size=3), rng.normal(size=3) * 0.8, np.array(step, dtype=np.int64)]


KINDS = ("const", "dyn", "while")


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


@run
def pairs_at_top():
    for first in KINDS:
        for second in KINDS:
            for step in (1, 3):
                check_gradient(top(first, second), args(step))
            print(first, second, "ok")
# CHECK-LABEL: TEST: pairs_at_top
# CHECK: const const ok
# CHECK: const dyn ok
# CHECK: const while ok
# CHECK: dyn const ok
# CHECK: dyn dyn ok
# CHECK: dyn while ok
# CHECK: while const ok
# CHECK: while dyn ok
# CHECK: while while ok


@run
def pairs_in_a_loop_body():
    for first in KINDS:
        for second in KINDS:
            check_gradient(nested(first, second), args(2))
            print(first, second, "ok")
# CHECK-LABEL: TEST: pairs_in_a_loop_body
# CHECK: const const ok
# CHECK: const dyn ok
# CHECK: const while ok
# CHECK: dyn const ok
# CHECK: dyn dyn ok
# CHECK: dyn while ok
# CHECK: while const ok
# CHECK: while dyn ok
# CHECK: while while ok


@run
def modes():
    # the reduced reported case (run-time step, then constant step): the
    # vector-Jacobian product and the split forward/backward equal the
    # adjoint; forward mode's tangent equals the adjoint's directional
    # derivative; the Hessian-vector product against differences of the
    # adjoint
    text = top("dyn", "const")
    a = args(2)
    ref = interpret(gradient_module(text, wrt=[0, 1]), "main_adjoint", *a)
    vjp = interpret(gradient_module(text, mode="vjp", wrt=[0, 1]), "main_vjp", *a,
                    np.array(1.0))
    m = gradient_module(text, split=True, wrt=[0, 1])
    fwd = interpret(m, "main_fwd", *a)
    bwd = interpret(m, "main_bwd", *fwd[1:], np.array(1.0))
    for want, got_v, got_b in zip(ref[1:], vjp[1:], bwd):
        np.testing.assert_allclose(got_v, want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got_b, want, rtol=1e-12, atol=1e-14)
    dx, dw = rng.normal(size=3), rng.normal(size=3)
    jvp = interpret(gradient_module(text, mode="jvp", wrt=[0, 1]), "main_jvp", *a, dx, dw)
    np.testing.assert_allclose(jvp[1], ref[1] @ dx + ref[2] @ dw, rtol=1e-12)
    hvp = interpret(gradient_module(text, mode="hvp", wrt=[0, 1]), "main_hvp", *a, dx, dw)
    eps = 1e-6
    adj = gradient_module(text, wrt=[0, 1])
    plus = interpret(adj, "main_adjoint", a[0] + eps * dx, a[1] + eps * dw, a[2])
    minus = interpret(adj, "main_adjoint", a[0] - eps * dx, a[1] - eps * dw, a[2])
    for k in (1, 2):
        np.testing.assert_allclose(hvp[k], (plus[k] - minus[k]) / (2 * eps),
                                   rtol=1e-6, atol=1e-8)
    print("modes ok")
# CHECK-LABEL: TEST: modes
# CHECK: modes ok

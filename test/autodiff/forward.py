# RUN: %PYTHON %s | FileCheck %s
# Forward mode (rlx-gradient{mode=jvp}) and its compositions (mode=jacobian,
# hvp, hessian) against central finite differences (float64, reference
# interpreter): straight-line code, tuples, calls (a grad.vjp override too),
# checkpoint markers and grad.no_grad, integer results, scf.for / scf.if /
# scf.while (the control-flow programs of the reverse-mode tests), forward
# columns and reverse rows, and nesting (the generated functions are input
# to every mode again).

import os
import sys

import numpy as np

from gradir import interpret
from gradir.testing import (check_gradient, check_jacobian, check_jvp, gradient_module,
                            jacobian_difference)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "scf", "Inputs"))
from programs import ALL, args_for  # noqa: E402

rng = np.random.default_rng(3)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


TWO = """
func.func @main(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>, %k: tensor<2xi64>)
    -> (tensor<2x4xf64>, tensor<f64>, tensor<2xi64>) {
  %m = "rlx.matmul"(%x, %w) : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  %t = "rlx.tanh"(%m) : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %c = "grad.start_checkpoint"(%t) : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %e = "rlx.exp"(%c) : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %d = "grad.end_checkpoint"(%e) : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %n = "grad.no_grad"(%x) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %ns = "rlx.sum"(%n) : (tensor<2x3xf64>) -> tensor<f64>
  %s = "rlx.sum"(%d) : (tensor<2x4xf64>) -> tensor<f64>
  %l = "rlx.multiply"(%s, %ns) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %d, %l, %k : tensor<2x4xf64>, tensor<f64>, tensor<2xi64>
}
"""


@run
def straight_line():
    x, w = rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(3, 4)) * 0.5
    k = np.array([3, 4])
    # grad.no_grad stops the tangent (which finite differences do not see):
    # checked with %n's tangent against the program where %n is a constant.
    plain = TWO.replace('"grad.no_grad"(%x)', '"rlx.sin"(%k0)').replace(
        "%k: tensor<2xi64>)", "%k: tensor<2xi64>, %k0: tensor<2x3xf64>)")
    k0 = np.sin(x)
    module = gradient_module(TWO, mode="jvp", wrt=[0, 1])
    tx, tw = rng.normal(size=x.shape), rng.normal(size=w.shape)
    got = interpret(module, "main_jvp", x, w, k, tx, tw)
    want = check_jvp(plain.replace('"rlx.sin"(%k0)', '"rlx.negative"(%k0)'),
                     [x, w, k, -x], wrt=[0, 1])
    tangents = check_jvp(plain, [x, w, k, np.arcsin(np.clip(x, -1, 1))], wrt=[0, 1])
    assert tangents[2].dtype == np.int64 and not tangents[2].any()
    assert got[5].dtype == np.int64 and not got[5].any()
    ref = interpret(gradient_module(plain.replace('"rlx.sin"(%k0)', '"rlx.negative"(%k0)'),
                                    mode="jvp", wrt=[0, 1]), "main_jvp", x, w, k, -x, tx, tw)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12)
    del want
    check_jvp(plain, [x, w, k, k0], wrt=[1])
    check_jacobian(plain, [x, w, k, k0])
    check_jacobian(plain, [x, w, k, k0], jacobian_mode="reverse")
    check_jacobian(plain, [x, w, k, k0], wrt=[0], jacobian_mode="forward")
    print("straight line ok")
# CHECK-LABEL: TEST: straight_line
# CHECK: straight line ok


TUPLES_CALLS = """
func.func private @pair(%a: tensor<3xf64>, %b: tensor<3xf64>) -> tuple<tensor<3xf64>, tensor<3xf64>> {
  %p = "rlx.multiply"(%a, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %q = "rlx.sin"(%a) : (tensor<3xf64>) -> tensor<3xf64>
  %t = "rlx.tuple"(%p, %q) : (tensor<3xf64>, tensor<3xf64>) -> tuple<tensor<3xf64>, tensor<3xf64>>
  return %t : tuple<tensor<3xf64>, tensor<3xf64>>
}
func.func private @sq(%a: tensor<3xf64>) -> tensor<3xf64> {
  %s = "rlx.square"(%a) : (tensor<3xf64>) -> tensor<3xf64>
  return %s : tensor<3xf64>
}
func.func private @sq_vjp(%a: tensor<3xf64>, %g: tensor<3xf64>) -> tensor<3xf64> {
  %z = "rlx.zeros_like"(%a) : (tensor<3xf64>) -> tensor<3xf64>
  return %z : tensor<3xf64>
}
func.func @main(%a: tensor<3xf64>, %b: tensor<3xf64>) -> (tuple<tensor<3xf64>, tensor<3xf64>>, tensor<3xf64>) {
  %t = func.call @pair(%a, %b) : (tensor<3xf64>, tensor<3xf64>) -> tuple<tensor<3xf64>, tensor<3xf64>>
  %q = "rlx.tuple_get_item"(%t) {index = 1 : i64} : (tuple<tensor<3xf64>, tensor<3xf64>>) -> tensor<3xf64>
  %s = func.call @sq(%q) {grad.vjp = @sq_vjp} : (tensor<3xf64>) -> tensor<3xf64>
  return %t, %s : tuple<tensor<3xf64>, tensor<3xf64>>, tensor<3xf64>
}
"""


@run
def tuples_and_calls():
    # The tuple result gets a tuple tangent; the call with a (deliberately
    # wrong) grad.vjp is differentiated through: a VJP says nothing of JVPs.
    a, b = rng.normal(size=3), rng.normal(size=3)
    module = gradient_module(TUPLES_CALLS, mode="jvp")
    ta, tb = rng.normal(size=3), rng.normal(size=3)
    outs = interpret(module, "main_jvp", a, b, ta, tb)
    (dp, dq), ds = outs[2], outs[3]
    np.testing.assert_allclose(dp, ta * b + a * tb, rtol=1e-12)
    np.testing.assert_allclose(dq, np.cos(a) * ta, rtol=1e-12)
    np.testing.assert_allclose(ds, 2 * np.sin(a) * np.cos(a) * ta, rtol=1e-12)
    assert "func.call" not in str(module).split("@main_jvp")[1]
    print("tuples and calls ok")
# CHECK-LABEL: TEST: tuples_and_calls
# CHECK: tuples and calls ok


@run
def control_flow():
    for name, text in ALL.items():
        args = args_for(text, rng)
        check_jvp(text, args)
        print(name, "jvp ok")
# CHECK-LABEL: TEST: control_flow
# CHECK: rnn jvp ok
# CHECK: two_carried jvp ok
# CHECK: if_in_loop jvp ok
# CHECK: if_top jvp ok
# CHECK: while jvp ok
# CHECK: nested_call jvp ok


@run
def control_flow_jacobians():
    for name in ("rnn", "if_top", "while"):
        text = ALL[name]
        args = args_for(text, rng)
        check_jacobian(text, args, jacobian_mode="forward")
        check_jacobian(text, args, jacobian_mode="reverse")   # through the VJP's stacks
        check_jacobian(text, args)
        print(name, "jacobian ok")
# CHECK-LABEL: TEST: control_flow_jacobians
# CHECK: rnn jacobian ok
# CHECK: if_top jacobian ok
# CHECK: while jacobian ok


def _hessian_fd(text, args, wrt):
    """d2 target / d arg_i d arg_j by central differences of the adjoint."""
    module = gradient_module(text, wrt=list(wrt))
    n = len(interpret(module, "main", *args))
    out = {}
    for k, i in enumerate(wrt):
        for j in wrt:
            out[(i, j)] = jacobian_difference(module, "main_adjoint", args, j, n + k)
    return out


@run
def hvp_and_hessian():
    for name in ("rnn", "two_carried", "if_top", "while"):
        text = ALL[name]
        args = args_for(text, rng)
        wrt = [i for i, a in enumerate(args) if np.issubdtype(np.asarray(a).dtype, np.floating)]
        fd = _hessian_fd(text, args, wrt)
        module = gradient_module(text, mode="hvp")
        vs = [rng.normal(size=np.shape(args[i])) for i in wrt]
        outs = interpret(module, "main_hvp", *args, *vs)
        n = len(interpret(module, "main", *args))
        for k, i in enumerate(wrt):
            want = sum(np.tensordot(fd[(i, j)], v, axes=v.ndim) for j, v in zip(wrt, vs))
            np.testing.assert_allclose(outs[n + k], want, rtol=1e-5, atol=1e-7)
        module = gradient_module(text, mode="hessian")
        outs = interpret(module, "main_hessian", *args)
        k = n
        for i in wrt:
            for j in wrt:
                np.testing.assert_allclose(outs[k], fd[(i, j)], rtol=1e-5, atol=1e-7)
                k += 1
        print(name, "hvp and hessian ok")
# CHECK-LABEL: TEST: hvp_and_hessian
# CHECK: rnn hvp and hessian ok
# CHECK: two_carried hvp and hessian ok
# CHECK: if_top hvp and hessian ok
# CHECK: while hvp and hessian ok


NEST = """
func.func @main(%x: tensor<3xf64>) -> tensor<f64> {
  %e = "rlx.exp"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %p = "rlx.multiply"(%e, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "rlx.sum"(%p) : (tensor<3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}
"""


@run
def nesting():
    # The JVP function is input to reverse mode (reverse over forward), and
    # the adjoint to forward mode: both give the Hessian's action.
    x, v = rng.normal(size=3), rng.normal(size=3)
    h = np.diag(np.exp(x) * (x + 2))          # d2/dx2 sum(x e^x)
    module = gradient_module(NEST, mode="jvp")
    from gradir import run_pipeline
    run_pipeline(module, "builtin.module(rlx-gradient{func=main_jvp target-index=1 wrt=0})")
    outs = interpret(module, "main_jvp_adjoint", x, v)
    np.testing.assert_allclose(outs[-1], h @ v, rtol=1e-12)
    module = gradient_module(NEST)
    run_pipeline(module, "builtin.module(rlx-gradient{func=main_adjoint mode=jvp wrt=0})")
    outs = interpret(module, "main_adjoint_jvp", x, v)
    np.testing.assert_allclose(outs[-1], h @ v, rtol=1e-12)
    # a Jacobian of a JVP function
    check_jacobian(str(gradient_module(NEST, mode="jvp")), [x, v], func="main_jvp")
    # forward over the adjoint of loops: a while loop's adjoint keeps a stack
    # of run-time size, whose tangent the JVP carries
    for name in ("while", "nested_call", "rnn"):
        args = args_for(ALL[name], rng)
        check_jvp(str(gradient_module(ALL[name])), args, func="main_adjoint")
    print("nesting ok")
# CHECK-LABEL: TEST: nesting
# CHECK: nesting ok


CUSTOM = """
func.func private @softplus(%x: tensor<3xf64>) -> tensor<3xf64> {
  %e = "rlx.exp"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %one = arith.constant dense<1.0> : tensor<f64>
  %a = "rlx.add"(%e, %one) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %l = "rlx.log"(%a) : (tensor<3xf64>) -> tensor<3xf64>
  return %l : tensor<3xf64>
}
func.func private @softplus_jvp(%x: tensor<3xf64>, %t: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %y = func.call @softplus(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %s = "rlx.sigmoid"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %d = "rlx.multiply"(%s, %t) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %y, %d : tensor<3xf64>, tensor<3xf64>
}
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %m = "rlx.multiply"(%x, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %y = func.call @softplus(%m) {grad.jvp = @softplus_jvp} : (tensor<3xf64>) -> tensor<3xf64>
  return %y : tensor<3xf64>
}
"""


@run
def custom_jvp():
    # The call's grad.jvp function gives the tangent (JAX's custom_jvp):
    # unbatched, once per basis vector in a Jacobian, and (a formula that
    # is the true derivative) against central differences; reverse mode
    # differentiates through the callee.
    x, w = rng.normal(size=3), rng.normal(size=3)
    check_jvp(CUSTOM, [x, w])
    check_jacobian(CUSTOM, [x, w], jacobian_mode="forward")
    check_jacobian(CUSTOM, [x, w], jacobian_mode="reverse")
    text = str(gradient_module(CUSTOM, mode="jvp")).split("@main_jvp")[1]
    assert "call @softplus_jvp" in text and "call @softplus(" not in text, text
    wrong = CUSTOM.replace('"rlx.sigmoid"(%x)', '"rlx.cos"(%x)')
    module = gradient_module(wrong, mode="jvp")
    tx, tw = rng.normal(size=3), rng.normal(size=3)
    got = interpret(module, "main_jvp", x, w, tx, tw)[1]
    np.testing.assert_allclose(got, np.cos(x * w) * (tx * w + x * tw), rtol=1e-12)
    print("custom jvp ok")
# CHECK-LABEL: TEST: custom_jvp
# CHECK: custom jvp ok


DECLARED = """
func.func private @h(%a: tensor<3xf64>) -> tensor<3xf64>
func.func private @h_jvp(%a: tensor<3xf64>, %t: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %s = "rlx.sin"(%a) : (tensor<3xf64>) -> tensor<3xf64>
  %c = "rlx.cos"(%a) : (tensor<3xf64>) -> tensor<3xf64>
  %d = "rlx.multiply"(%c, %t) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %s, %d : tensor<3xf64>, tensor<3xf64>
}
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %a = func.call @h(%x) {grad.jvp = @h_jvp} : (tensor<3xf64>) -> tensor<3xf64>
  return %a : tensor<3xf64>
}
"""


@run
def edge_cases():
    # A Jacobian through a grad.jvp call whose callee has no body: the
    # results come from the grad.jvp function (one call per basis vector).
    x = rng.normal(size=3)
    module = gradient_module(DECLARED, mode="jacobian", jacobian_mode="forward")
    y, jac = interpret(module, "main_jacobian", x)
    np.testing.assert_allclose(y, np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(jac, np.diag(np.cos(x)), rtol=1e-12)
    # Forward mode through a call of a generated while-loop adjoint (its
    # dynamically sized stacks): forward over reverse from another function.
    text = str(gradient_module(ALL["while"])).rstrip()[:-1] + """
func.func @outer(%h0: tensor<3xf64>, %w: tensor<3x3xf64>) -> tensor<3xf64> {
  %r:3 = func.call @main_adjoint(%h0, %w) : (tensor<3xf64>, tensor<3x3xf64>) -> (tensor<f64>, tensor<3xf64>, tensor<3x3xf64>)
  return %r#1 : tensor<3xf64>
}
}
"""
    args = args_for(ALL["while"], rng)
    check_jvp(text, args, func="outer")
    check_jacobian(text, args, func="outer", jacobian_mode="forward")
    # Mixed precision: a Jacobian block has its result's element type,
    # whichever way it is built.
    mixed = """
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf64>) -> tensor<3xf64> {
  %e = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %c = "rlx.astype"(%e) : (tensor<3xf32>) -> tensor<3xf64>
  %p = "rlx.multiply"(%c, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %p : tensor<3xf64>
}
"""
    sigs = {how: str(gradient_module(mixed, mode="jacobian", jacobian_mode=how)).split(
        "@main_jacobian")[1].split("{")[0] for how in ("forward", "reverse")}
    assert sigs["forward"] == sigs["reverse"], sigs
    # A loop's attributes (its checkpoint policy) survive the rebuild.
    from programs import rnn
    out = str(gradient_module(rnn(5, '"sqrt"'), mode="jvp")).split("@main_jvp")[1]
    assert 'grad.checkpoint = "sqrt"' in out, out
    # Scratch names never collide and never stay behind, also on failure.
    taken = NEST + """
func.func @main__rev_adjoint(%x: tensor<3xf64>) -> tensor<3xf64> {
  return %x : tensor<3xf64>
}
"""
    module = gradient_module(taken, mode="hvp")
    names = sorted(f.split("(")[0] for f in str(module).split("func.func @")[1:])
    assert names == ["main", "main__rev_adjoint", "main_hvp"], names
    from gradir import parse, run_pipeline
    bad = parse(NEST.replace('%s = "rlx.sum"(%p)', '%q = "rlx.sum"(%p)').replace(
        "return %s", """%i = tensor.extract %q[] : tensor<f64>
  %s = tensor.from_elements %i : tensor<f64>
  return %s"""))
    for mode in ("jvp", "hvp"):
        m = parse(str(bad))
        try:
            run_pipeline(m, f"builtin.module(rlx-gradient{{mode={mode}}})")
        except Exception:
            pass
        left = sorted(f.split("(")[0] for f in str(m).split("func.func @")[1:])
        assert left == ["main"], (mode, left)
    print("edge cases ok")
# CHECK-LABEL: TEST: edge_cases
# CHECK: edge cases ok

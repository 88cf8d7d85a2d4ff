# RUN: %PYTHON %s | FileCheck %s
# Gradients through scf control flow against central finite differences
# (float64, reference interpreter): scf.for (several carried values, lb/step,
# captured weights), scf.if (both branches, inside loops), scf.while (data-
# dependent trip count), nested loops in a callee; mode=vjp and split=true
# agree with the adjoint; second derivatives; every checkpointing policy
# gives the same gradients.

import os
import sys

import numpy as np

import gradir
from gradir import interpret
from gradir.testing import check_gradient, gradient_module

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from programs import ALL, args_for, rnn, rnn_args  # noqa: E402

rng = np.random.default_rng(0)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


@run
def finite_differences():
    for name, text in ALL.items():
        args = args_for(text, rng)
        check_gradient(text, args)
        print(name, "ok")
# CHECK-LABEL: TEST: finite_differences
# CHECK: rnn ok
# CHECK: two_carried ok
# CHECK: if_in_loop ok
# CHECK: if_top ok
# CHECK: while ok
# CHECK: nested_call ok


@run
def both_branches():
    # if_top takes the other branch when sum(x) < 0
    text = ALL["if_top"]
    for sign in (1.0, -1.0):
        x = np.abs(rng.normal(size=3)) * sign
        y = rng.normal(size=3)
        check_gradient(text, [x, y])
    print("branches ok")
# CHECK-LABEL: TEST: both_branches
# CHECK: branches ok


@run
def while_trip_counts():
    # the same program runs 0, a few and the maximum (7) trips
    text = ALL["while"]
    w = rng.normal(size=(3, 3)) * 0.3
    trips = set()
    for scale in (3.0, 0.9, 0.01):
        h0 = np.ones(3) * scale
        check_gradient(text, [h0, w])
        trips.add(scale)
    print("trips ok", len(trips))
# CHECK-LABEL: TEST: while_trip_counts
# CHECK: trips ok 3


@run
def modes_agree():
    for name, text in ALL.items():
        args = args_for(text, rng)
        ref = interpret(gradient_module(text), "main_adjoint", *args)
        vjp = interpret(gradient_module(text, mode="vjp"), "main_vjp", *args, np.array(1.0))
        m = gradient_module(text, split=True)
        fwd = interpret(m, "main_fwd", *args)
        bwd = interpret(m, "main_bwd", *fwd[1:], np.array(1.0))
        raw = interpret(gradient_module(text, simplify=False), "main_adjoint", *args)
        for a, b, c, d in zip(ref[1:], vjp[1:], bwd, raw[1:]):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(c, a, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(d, a, rtol=1e-12, atol=1e-14)
        print(name, "modes ok")
# CHECK-LABEL: TEST: modes_agree
# CHECK: rnn modes ok
# CHECK: two_carried modes ok
# CHECK: if_in_loop modes ok
# CHECK: if_top modes ok
# CHECK: while modes ok
# CHECK: nested_call modes ok


@run
def checkpoint_policies():
    # 13 steps: segments do not divide the trip count
    T = 13
    args = rnn_args(rng, T)
    ref = interpret(gradient_module(rnn(T)), "main_adjoint", *args)
    # 2^63 - 1: a period past the trip count is one segment (it made a stack
    # type past int64, an internal error)
    for policy in ('"all"', '"sqrt"', "3", "1", "13", "20", '"revolve"', "9223372036854775807"):
        text = rnn(T, policy)
        got = interpret(gradient_module(text), "main_adjoint", *args)
        for a, b in zip(ref, got):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
        check_gradient(text, args)
        print(policy, "ok")
# CHECK-LABEL: TEST: checkpoint_policies
# CHECK: "all" ok
# CHECK: "sqrt" ok
# CHECK: 3 ok
# CHECK: 1 ok
# CHECK: 13 ok
# CHECK: 20 ok
# CHECK: "revolve" ok
# CHECK: 9223372036854775807 ok


def _second_order(text, args, wrt):
    """Gradient of <grad f, v> through rlx-gradient applied twice, against
    finite differences of the first adjoint."""
    m = gradient_module(text, wrt=wrt)
    gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=main_adjoint mode=vjp})")
    outs = interpret(m, "main_adjoint", *args)
    cots = [rng.normal(size=np.shape(o)) for o in outs]
    got = interpret(m, "main_adjoint_vjp", *args, *cots)[len(outs):]

    def f(*a):
        return sum(float((x * c).sum()) for x, c in zip(interpret(m, "main_adjoint", *a), cots))
    for i, a in enumerate(args):
        num = np.zeros_like(a)
        it = np.nditer(a, flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            p = [x.copy() for x in args]
            q = [x.copy() for x in args]
            p[i][idx] += 1e-5
            q[i][idx] -= 1e-5
            num[idx] = (f(*p) - f(*q)) / 2e-5
        np.testing.assert_allclose(got[i], num, rtol=1e-5, atol=1e-7)


@run
def second_order():
    _second_order(rnn(4), rnn_args(rng, 4), [1, 2])
    _second_order(rnn(7, '"sqrt"'), rnn_args(rng, 7), [1, 2])
    _second_order(ALL["if_top"], args_for(ALL["if_top"], rng), [0, 1])
    _second_order(ALL["two_carried"], args_for(ALL["two_carried"], rng), [0, 1])
    print("second order ok")
# CHECK-LABEL: TEST: second_order
# CHECK: second order ok


@run
def interpreter_control_flow():
    # the interpreter itself, against numpy
    T = 6
    x, h0, w = rnn_args(rng, T)
    (got,) = interpret(gradir.parse(rnn(T)), "main", x, h0, w)
    h = h0
    for t in range(T):
        h = np.tanh(h @ w + x[t])
    np.testing.assert_allclose(got, (h * h).sum(), rtol=1e-13)
    h0, wt = np.ones(3) * 0.5, rng.normal(size=(3, 3)) * 0.3
    (got,) = interpret(gradir.parse(ALL["while"]), "main", h0, wt)
    h, i = h0, 0
    while (h * h).sum() < 4.0 and i < 7:
        h, i = h @ wt + h, i + 1
    np.testing.assert_allclose(got, h.sum() ** 2, rtol=1e-13)
    print("interpreter ok")
# CHECK-LABEL: TEST: interpreter_control_flow
# CHECK: interpreter ok


@run
def loop_in_branch():
    # a loop inside each branch; the else loop runs zero trips and yields a
    # captured value; compiled too
    path = os.path.join(os.path.dirname(__file__), "Inputs", "loop_in_branch.mlir")
    text = open(path).read()
    for taken in (True, False):
        args = [rng.normal(size=3), rng.normal(size=3), np.array(taken)]
        check_gradient(text, args, wrt=[0, 1])
        m = gradient_module(text, wrt=[0, 1])
        want = interpret(m, "main_adjoint", *args)
        got = gradir.compile(m)["main_adjoint"](*args)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
        print("taken" if taken else "not taken", "ok")
# CHECK-LABEL: TEST: loop_in_branch
# CHECK: taken ok
# CHECK: not taken ok


@run
def remat_captured_stack():
    # remat=auto recomputes the first loop in the backward, whose loop
    # captures the stack that loop records (Inputs/two_loops_captured.mlir,
    # f32: the plan differs in f64): the gradients equal those of the plan
    # that stores everything, interpreted and compiled
    path = os.path.join(os.path.dirname(__file__), "Inputs", "two_loops_captured.mlir")
    text = open(path).read()
    args = [rng.normal(size=3).astype(np.float32), rng.normal(size=3).astype(np.float32)]
    plain = interpret(gradient_module(text), "main_adjoint", *args)
    m = gradient_module(text, remat="auto", budget="0.5")
    assert "grad.recomputed" in gradir.print_module(m)
    got = interpret(m, "main_adjoint", *args)
    for w, g in zip(plain, got):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    compiled = gradir.compile(m)["main_adjoint"](*args)
    for w, g in zip(got, compiled):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    print("remat captured ok")
# CHECK-LABEL: TEST: remat_captured_stack
# CHECK: remat captured ok


@run
def empty_states():
    # Stacks that hold nothing (hostile-input review: rlx-gradient emitted
    # slices at static offset 0 into a size-0 dimension, which MLIR's
    # verifier refused): a loop carrying an empty tensor, and the second
    # derivative of a loop of no trip.  Against finite differences, and
    # compiled against the interpreter.
    path = os.path.join(os.path.dirname(__file__), "Inputs", "loop_carries_empty.mlir")
    text = open(path).read()
    args = [rng.normal(size=3), np.zeros((0,))]
    check_gradient(text, args, wrt=[0])     # (no difference quotient of an empty tensor)
    m = gradient_module(text)
    for w, g in zip(interpret(m, "main_adjoint", *args),
                    gradir.compile(m)["main_adjoint"](*args)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
    print("empty carried ok")
    zero_trip = """func.func @main(%x: tensor<f64>, %h0: tensor<f64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c0 step %c1 iter_args(%h = %h0) -> (tensor<f64>) {
    %m = "rlx.multiply"(%h, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %hn = "rlx.sin"(%m) : (tensor<f64>) -> tensor<f64>
    scf.yield %hn : tensor<f64>
  }
  return %r : tensor<f64>
}"""
    m = gradient_module(zero_trip)
    gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=main_adjoint target-index=1})")
    a = [np.array(0.3), np.array(0.7)]
    print("second order of no trip:", [float(v) for v in interpret(m, "main_adjoint_adjoint", *a)])
# CHECK-LABEL: TEST: empty_states
# CHECK: empty carried ok
# CHECK: second order of no trip: [0.7, 0.0, 1.0, 0.0, 0.0]

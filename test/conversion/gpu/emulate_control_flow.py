# RUN: %PYTHON %s | FileCheck %s
# Every control-flow program of the CPU and autodiff tests compiled for the
# GPU (gradir.compile(target="cuda"): kernels to PTX, no GPU needed) and run
# by the SIMT emulator against the reference interpreter (f64 to rounding):
# loops and branches stay on the host and launch their bodies' kernels, a
# condition is copied from the device first.  The scf programs of
# test/autodiff/scf (for with carried values, lb and step, if in a loop and
# at the top with both branches, while with 0, some and the most trips,
# nested loops in a callee through func.call; forward, adjoint, vjp, split
# forward/backward, unsimplified; second derivatives), every checkpointing
# policy of a 13-step RNN, a loop in each branch, a recomputed loop
# capturing a stack (remat=auto), an empty carried tensor, the second
# derivative of a loop of no trip, numeric_loop_steps' run-time steps
# (index, i32, i64 loops), examples/lstm.py's checkpointed LSTM, the
# interpreter's scf and func.call programs (test/interp) and
# test/autodiff/features.py's calls (a custom grad.vjp callee, an adjoint
# called and differentiated again).  Each
# line: the kernels one call launched.

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "autodiff", "scf", "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))
from emulate_helpers import compare, constant, definitions, emulated  # noqa: E402
from lstm import lstm_ir, random_inputs  # noqa: E402
from programs import ALL, args_for, rnn, rnn_args  # noqa: E402

import gradir  # noqa: E402
from gradir.runtime import ExecutionError  # noqa: E402
from gradir.runtime.signature import CompileError  # noqa: E402
from gradir.testing import gradient_module  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
rng = np.random.default_rng(0)
SCF_INPUTS = os.path.join(HERE, "..", "..", "autodiff", "scf", "Inputs")


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def check(name, module, calls, rtol=1e-12, atol=1e-14):
    """``calls``: (function, arguments) pairs, all run on one emulated build."""
    try:
        exe = emulated(module)
    except Exception as err:
        message = str(err).splitlines()[0]
        try:
            gradir.compile(module, target="cpu")
        except CompileError as cpu_err:
            if str(cpu_err).splitlines()[0] == message:
                print(f"{name}: not compiled, for the cpu either: {message}", flush=True)
                return
        print(f"{name}: FAIL {type(err).__name__}: {message}", flush=True)
        return
    for fn, args in calls:
        try:
            problem, launches = compare(exe, module, fn, args, rtol, atol)
            result = f"FAIL {problem}" if problem else f"ok, {launches} launches"
        except Exception as err:     # the next calls still run
            result = f"FAIL {type(err).__name__}: {str(err).splitlines()[0]}"
        print(f"{name} {fn}: {result}", flush=True)


@run
def programs():
    for name, text in ALL.items():
        args = args_for(text, rng)
        check(name, gradir.parse(text), [("main", args)])
        check(name, gradient_module(text), [("main_adjoint", args)])
    for name in ("rnn", "two_carried", "if_in_loop", "if_top", "while", "nested_call"):
        text = ALL[name].replace("f64", "f32")
        args = [a.astype(np.float32) for a in args_for(text, rng)]
        check(name + " f32", gradient_module(text), [("main_adjoint", args)], 1e-4, 1e-6)
# CHECK-LABEL: TEST: programs
# CHECK-NEXT: rnn main: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: rnn main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: two_carried main: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: two_carried main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: if_in_loop main: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: if_in_loop main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: if_top main: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: if_top main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: while main: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: while main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: nested_call main: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: nested_call main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: rnn f32 main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: two_carried f32 main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: if_in_loop f32 main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: if_top f32 main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: while f32 main_adjoint: ok, {{[1-9][0-9]*}} launches
# CHECK-NEXT: nested_call f32 main_adjoint: ok, {{[1-9][0-9]*}} launches


@run
def branches_and_trips():
    # if_top takes the else branch when sum(x) < 0; while runs 0, a few and
    # the most (7) trips; one build each, so the launches differ per call
    text = ALL["if_top"]
    y = rng.normal(size=3)
    calls = [("main_adjoint", [np.abs(rng.normal(size=3)) * sign, y]) for sign in (1.0, -1.0)]
    check("if_top then/else", gradient_module(text), calls)
    w = rng.normal(size=(3, 3)) * 0.3
    calls = [(fn, [np.ones(3) * scale, w]) for fn in ("main", "main_adjoint")
             for scale in (3.0, 0.9, 0.01)]
    check("while 0/some/7 trips", gradient_module(ALL["while"]), calls)
# CHECK-LABEL: TEST: branches_and_trips
# CHECK-NEXT: if_top then/else main_adjoint: ok, {{[0-9]+}} launches
# CHECK-NEXT: if_top then/else main_adjoint: ok, {{[0-9]+}} launches
# CHECK-NEXT: while 0/some/7 trips main: ok, {{[0-9]+}} launches
# CHECK-NEXT: while 0/some/7 trips main: ok, {{[0-9]+}} launches
# CHECK-NEXT: while 0/some/7 trips main: ok, {{[0-9]+}} launches
# CHECK-NEXT: while 0/some/7 trips main_adjoint: ok, {{[0-9]+}} launches
# CHECK-NEXT: while 0/some/7 trips main_adjoint: ok, {{[0-9]+}} launches
# CHECK-NEXT: while 0/some/7 trips main_adjoint: ok, {{[0-9]+}} launches


@run
def modes():
    # vjp (a cotangent argument), split (the backward takes the forward's
    # residuals; an i1 or index residual does not cross the numpy boundary,
    # on the cpu either) and the unsimplified adjoint
    for name, text in ALL.items():
        args = args_for(text, rng)
        check(name + " vjp", gradient_module(text, mode="vjp"),
              [("main_vjp", args + [np.array(1.0)])])
        m = gradient_module(text, split=True)
        fwd = gradir.interpret(m, "main_fwd", *args)
        check(name + " split", m,
              [("main_fwd", args), ("main_bwd", list(fwd[1:]) + [np.array(1.0)])])
        check(name + " unsimplified", gradient_module(text, simplify=False),
              [("main_adjoint", args)])
# CHECK-LABEL: TEST: modes
# CHECK-NEXT: rnn vjp main_vjp: ok
# CHECK-NEXT: rnn split main_fwd: ok
# CHECK-NEXT: rnn split main_bwd: ok
# CHECK-NEXT: rnn unsimplified main_adjoint: ok
# CHECK-NEXT: two_carried vjp main_vjp: ok
# CHECK-NEXT: two_carried split main_fwd: ok
# CHECK-NEXT: two_carried split main_bwd: ok
# CHECK-NEXT: two_carried unsimplified main_adjoint: ok
# CHECK-NEXT: if_in_loop vjp main_vjp: ok
# CHECK-NEXT: if_in_loop split main_fwd: ok
# CHECK-NEXT: if_in_loop split main_bwd: ok
# CHECK-NEXT: if_in_loop unsimplified main_adjoint: ok
# CHECK-NEXT: if_top vjp main_vjp: ok
# CHECK-NEXT: if_top split: not compiled, for the cpu either: cannot compile @main_fwd: result 1 has type i1; only statically shaped tensors (and tuples of them) cross the numpy boundary
# CHECK-NEXT: if_top unsimplified main_adjoint: ok
# CHECK-NEXT: while vjp main_vjp: ok
# CHECK-NEXT: while split: not compiled, for the cpu either: cannot compile @main_fwd: result 2 has type index; only statically shaped tensors (and tuples of them) cross the numpy boundary
# CHECK-NEXT: while unsimplified main_adjoint: ok
# CHECK-NEXT: nested_call vjp main_vjp: ok
# CHECK-NEXT: nested_call split main_fwd: ok
# CHECK-NEXT: nested_call split main_bwd: ok
# CHECK-NEXT: nested_call unsimplified main_adjoint: ok


@run
def checkpoint_policies():
    # 13 steps: segments that do not divide the trip count; 2^63 - 1: one
    # segment
    T = 13
    args = rnn_args(rng, T)
    for policy in ('"all"', '"sqrt"', "3", "1", "13", "20", '"revolve"', "9223372036854775807"):
        check(f"rnn{T} {policy}", gradient_module(rnn(T, policy)), [("main_adjoint", args)])
# CHECK-LABEL: TEST: checkpoint_policies
# CHECK-NEXT: rnn13 "all" main_adjoint: ok
# CHECK-NEXT: rnn13 "sqrt" main_adjoint: ok
# CHECK-NEXT: rnn13 3 main_adjoint: ok
# CHECK-NEXT: rnn13 1 main_adjoint: ok
# CHECK-NEXT: rnn13 13 main_adjoint: ok
# CHECK-NEXT: rnn13 20 main_adjoint: ok
# CHECK-NEXT: rnn13 "revolve" main_adjoint: ok
# CHECK-NEXT: rnn13 9223372036854775807 main_adjoint: ok


@run
def second_order():
    # rlx-gradient twice: the vjp of the adjoint
    for name, text, args, wrt in (("rnn4", rnn(4), rnn_args(rng, 4), [1, 2]),
                                  ("rnn7 sqrt", rnn(7, '"sqrt"'), rnn_args(rng, 7), [1, 2]),
                                  ("if_top", ALL["if_top"], args_for(ALL["if_top"], rng), [0, 1]),
                                  ("two_carried", ALL["two_carried"],
                                   args_for(ALL["two_carried"], rng), [0, 1])):
        m = gradient_module(text, wrt=wrt)
        gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=main_adjoint mode=vjp})")
        outs = gradir.interpret(m, "main_adjoint", *args)
        cots = [rng.normal(size=np.shape(o)) for o in outs]
        check(name, m, [("main_adjoint_vjp", list(args) + cots)])
# CHECK-LABEL: TEST: second_order
# CHECK-NEXT: rnn4 main_adjoint_vjp: ok
# CHECK-NEXT: rnn7 sqrt main_adjoint_vjp: ok
# CHECK-NEXT: if_top main_adjoint_vjp: ok
# CHECK-NEXT: two_carried main_adjoint_vjp: ok


@run
def loops_in_branches_and_stacks():
    with open(os.path.join(SCF_INPUTS, "loop_in_branch.mlir")) as f:
        text = f.read()
    calls = [("main_adjoint", [rng.normal(size=3), rng.normal(size=3), np.array(taken)])
             for taken in (True, False)]
    check("loop_in_branch taken/not", gradient_module(text, wrt=[0, 1]), calls)
    with open(os.path.join(SCF_INPUTS, "two_loops_captured.mlir")) as f:
        text = f.read()
    args = [rng.normal(size=3).astype(np.float32), rng.normal(size=3).astype(np.float32)]
    m = gradient_module(text, remat="auto", budget="0.5")
    assert "grad.recomputed" in gradir.print_module(m)
    check("two_loops_captured remat=auto", m, [("main_adjoint", args)], 1e-5, 1e-6)
    with open(os.path.join(SCF_INPUTS, "loop_carries_empty.mlir")) as f:
        text = f.read()
    check("loop_carries_empty", gradient_module(text),
          [("main_adjoint", [rng.normal(size=3), np.zeros((0,))])])
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
    check("zero trips second order", m,
          [("main_adjoint_adjoint", [np.array(0.3), np.array(0.7)])])
# CHECK-LABEL: TEST: loops_in_branches_and_stacks
# CHECK-NEXT: loop_in_branch taken/not main_adjoint: ok
# CHECK-NEXT: loop_in_branch taken/not main_adjoint: ok
# CHECK-NEXT: two_loops_captured remat=auto main_adjoint: ok
# CHECK-NEXT: loop_carries_empty main_adjoint: ok
# CHECK-NEXT: zero trips second order main_adjoint_adjoint: ok


@run
def run_time_steps():
    # numeric_loop_steps: the inner loop's step is an input (positive steps;
    # a step <= 0 is an ExecutionError on the CPU, see the note at the end)
    S = definitions(os.path.join(HERE, "..", "cpu", "numeric_loop_steps.py"))
    x, w = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.5
    calls = [(fn, [x, w, np.array(step)]) for fn in ("main", "main_adjoint")
             for step in (1, 2, 5, 9)]
    check("loop steps 1/2/5/9", gradient_module(S.PROGRAM), calls)
    for width, dtype in ((32, np.int32), (64, np.int64)):
        m = gradir.parse(S.INTEGER_LOOP.replace("iN", f"i{width}"))
        check(f"i{width} loop step 2", m, [("main", [x[0, :3], np.array(2, dtype)])])
    # a step <= 0 is the CPU's ExecutionError, at the loop's location (the
    # cuda build checks the step on the host, runtime_checks.add_step_checks)
    exe = emulated(gradient_module(S.PROGRAM))
    for fn in ("main", "main_adjoint"):
        for step in (0, -1):
            try:
                exe[fn](x, w, np.array(step))
                print(f"{fn} step {step}: no error")
            except ExecutionError as err:
                print(f"{fn} step {step}: ExecutionError {err.location.split(':', 1)[1]}: "
                      f"{err.message}")
# CHECK-LABEL: TEST: run_time_steps
# CHECK-NEXT: loop steps 1/2/5/9 main: ok
# CHECK-NEXT: loop steps 1/2/5/9 main: ok
# CHECK-NEXT: loop steps 1/2/5/9 main: ok
# CHECK-NEXT: loop steps 1/2/5/9 main: ok
# CHECK-NEXT: loop steps 1/2/5/9 main_adjoint: ok
# CHECK-NEXT: loop steps 1/2/5/9 main_adjoint: ok
# CHECK-NEXT: loop steps 1/2/5/9 main_adjoint: ok
# CHECK-NEXT: loop steps 1/2/5/9 main_adjoint: ok
# CHECK-NEXT: i32 loop step 2 main: ok
# CHECK-NEXT: i64 loop step 2 main: ok
# CHECK-NEXT: main step 0: ExecutionError {{[0-9]+}}:{{[0-9]+}}: 'scf.for' op step must be positive, got 0
# CHECK-NEXT: main step -1: ExecutionError {{.*}} got -1
# CHECK-NEXT: main_adjoint step 0: ExecutionError {{.*}} got 0
# CHECK-NEXT: main_adjoint step -1: ExecutionError {{.*}} got -1


@run
def lstm():
    # examples/lstm.py (test/integration/lstm.py): scf.for over the time
    # steps, every checkpointing policy
    args = random_inputs(2, 6, 5)
    for policy in (None, "sqrt", "revolve", 2):
        check(f"lstm {policy}", gradient_module(lstm_ir(2, 6, 5, policy), wrt=[0, 1]),
              [("main_adjoint", args)], 1e-11, 1e-14)
# CHECK-LABEL: TEST: lstm
# CHECK-NEXT: lstm None main_adjoint: ok
# CHECK-NEXT: lstm sqrt main_adjoint: ok
# CHECK-NEXT: lstm revolve main_adjoint: ok
# CHECK-NEXT: lstm 2 main_adjoint: ok


@run
def interpreter_and_call_programs():
    interp = os.path.join(HERE, "..", "..", "interp")
    scf = os.path.join(interp, "scf.py")
    loop = gradir.parse(constant(scf, "LOOP"))
    check("interp LOOP", loop, [("main", [rng.normal(size=3)])])
    check("interp LOOP vjp", gradient_module(constant(scf, "LOOP"), mode="vjp"),
          [("main_vjp", [rng.normal(size=3), rng.normal(size=3), np.array(1.0)])])
    check("interp BRANCH", gradir.parse(constant(scf, "BRANCH")),
          [("main", [np.array(0.5)]), ("main", [np.array(-0.5)])])
    check("interp WHILE", gradir.parse(constant(scf, "WHILE")),
          [("main", [np.array(3.0)]), ("main", [np.array(300.0)])])
    check("interp SLICES", gradir.parse(constant(scf, "SLICES")),
          [("main", [rng.normal(size=3)])])
    text = constant(os.path.join(interp, "misc.py"), "CALL_IR")
    text = text[:text.index("func.func @bad")] + "\n"     # (an interpreter error's input)
    args = [rng.normal(size=3), rng.normal(size=3)]
    check("interp CALL_IR", gradir.parse(text), [("main", args), ("square_sum", args[:1])])
    features = os.path.join(HERE, "..", "..", "autodiff", "features.py")
    m = gradient_module(constant(features, "CALLS"))
    args = [rng.normal(size=(2, 3)), rng.normal(size=(3, 4))]
    check("features CALLS grad.vjp", m, [("main", args), ("main_adjoint", args)])
    # an adjoint called from another function, differentiated again
    main, first = constant(features, "SECOND_MAIN"), constant(features, "SECOND_FIRST")
    printed = gradir.print_module(gradient_module(main)).rstrip()
    m = gradir.parse(printed[:-1] + first + "\n}")
    gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=first})")
    check("features adjoint of a called adjoint", m, [("first_adjoint", [rng.normal(size=4)])])
# CHECK-LABEL: TEST: interpreter_and_call_programs
# CHECK-NEXT: interp LOOP main: ok
# CHECK-NEXT: interp LOOP vjp main_vjp: ok
# CHECK-NEXT: interp BRANCH main: ok
# CHECK-NEXT: interp BRANCH main: ok
# CHECK-NEXT: interp WHILE main: ok
# CHECK-NEXT: interp WHILE main: ok
# CHECK-NEXT: interp SLICES: not compiled, for the cpu either: cannot compile @main: result 0 has type tensor<?x3xf64>
# CHECK-NEXT: interp CALL_IR main: ok
# CHECK-NEXT: interp CALL_IR square_sum: ok
# CHECK-NEXT: features CALLS grad.vjp main: ok
# CHECK-NEXT: features CALLS grad.vjp main_adjoint: ok
# CHECK-NEXT: features adjoint of a called adjoint first_adjoint: ok

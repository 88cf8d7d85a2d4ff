# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=0 %PYTHON %s | FileCheck %s
# RUN: env GRADIR_PARALLEL_COMPILE=1 %PYTHON %s | FileCheck %s
# scf control flow compiled (rlx-to-linalg + the CPU pipeline) against the
# reference interpreter: the forward programs and their adjoints (for, if,
# while, nested loops in a callee, every checkpointing policy), f64 and f32;
# each compiled module exported and loaded gives the same results.

import os
import sys

import numpy as np

import gradir
from gradir import interpret
from gradir.testing import gradient_module
from gradir.testing.oracle import export_differences

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "autodiff", "scf",
                                "Inputs"))
from programs import ALL, args_for, rnn, rnn_args  # noqa: E402

OPT = int(os.environ.get("GRADIR_TEST_OPT_LEVEL", "2"))
rng = np.random.default_rng(0)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def compare(module, fn, args, rtol):
    want = interpret(module, fn, *args)
    exe = gradir.compile(module, target="cpu", opt_level=OPT)
    got = exe[fn](*args)
    # the exported library too (a loop's adjoint compiled in parts did not link)
    problems = export_differences(exe, [(fn, fn, args, got)])
    assert not problems, "\n".join(problems)
    if not isinstance(got, tuple):
        got = (got,)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 1e-2)


@run
def programs_f64():
    for name, text in ALL.items():
        args = args_for(text, rng)
        compare(gradir.parse(text), "main", args, 1e-12)
        compare(gradient_module(text), "main_adjoint", args, 1e-12)
        print(name, "ok")
# CHECK-LABEL: TEST: programs_f64
# CHECK: rnn ok
# CHECK: two_carried ok
# CHECK: if_in_loop ok
# CHECK: if_top ok
# CHECK: while ok
# CHECK: nested_call ok


@run
def programs_f32():
    for name in ("rnn", "if_in_loop", "while"):
        text = ALL[name].replace("f64", "f32")
        args = [a.astype(np.float32) for a in args_for(text, rng)]
        compare(gradient_module(text), "main_adjoint", args, 1e-4)
        print(name, "f32 ok")
# CHECK-LABEL: TEST: programs_f32
# CHECK: rnn f32 ok
# CHECK: if_in_loop f32 ok
# CHECK: while f32 ok


@run
def policies():
    T = 11
    args = rnn_args(rng, T)
    for policy in ('"all"', '"sqrt"', "4", '"revolve"'):
        compare(gradient_module(rnn(T, policy)), "main_adjoint", args, 1e-12)
        print(policy, "ok")
# CHECK-LABEL: TEST: policies
# CHECK: "all" ok
# CHECK: "sqrt" ok
# CHECK: 4 ok
# CHECK: "revolve" ok

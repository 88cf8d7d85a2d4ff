# RUN: %PYTHON %s | FileCheck %s
# examples/lstm.py (ADBench's LSTM objective, scf.for over time steps): the
# interpreter matches the numpy transcription, the gradient matches finite
# differences, and the compiled gradient of every checkpointing policy
# matches the interpreter's.

import os
import sys

import numpy as np

import gradir
from gradir.testing import check_gradient, gradient_module

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from lstm import lstm_ir, lstm_objective, random_inputs  # noqa: E402

args = random_inputs(2, 14, 4)
(loss,) = gradir.interpret(gradir.parse(lstm_ir(2, 14, 4)), "main", *args)
np.testing.assert_allclose(loss, lstm_objective(*args), rtol=1e-13)
check_gradient(lstm_ir(2, 14, 4), args, wrt=[0, 1])
print("lstm: objective and finite differences ok")
# CHECK: lstm: objective and finite differences ok

args = random_inputs(2, 14, 23)
ref = None
for policy in (None, "sqrt", "revolve", 5):
    module = gradient_module(lstm_ir(2, 14, 23, policy), wrt=[0, 1])
    want = gradir.interpret(module, "main_adjoint", *args)
    got = gradir.compile(module)["main_adjoint"](*args)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-14)
    if ref is None:
        ref = want
    for w, r in zip(want, ref):
        np.testing.assert_allclose(w, r, rtol=1e-12, atol=1e-15)
    print("lstm compiled", policy, "ok")
# CHECK: lstm compiled None ok
# CHECK: lstm compiled sqrt ok
# CHECK: lstm compiled revolve ok
# CHECK: lstm compiled 5 ok

# RUN: %PYTHON %s | FileCheck %s
# scf programs and their adjoints compiled for the GPU (the NVVM pipeline up
# to its kernels stage) and run by the SIMT emulator: loops and branches stay
# on the host and launch the kernels of their bodies; a condition is copied
# from the device first (gpu-host-conditions); results against the reference
# interpreter (f32).

import os
import sys

import numpy as np

import gradir
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "autodiff", "scf",
                                "Inputs"))
from programs import ALL, args_for, rnn  # noqa: E402

rng = np.random.default_rng(0)
gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

for name, text in (("rnn", ALL["rnn"]), ("two_carried", ALL["two_carried"]),
                   ("nested_call", ALL["nested_call"]), ("rnn_sqrt", rnn(9, '"sqrt"')),
                   ("if_top", ALL["if_top"]), ("if_in_loop", ALL["if_in_loop"]),
                   ("while", ALL["while"])):
    text = text.replace("f64", "f32")
    args = [a.astype(np.float32) for a in args_for(text, rng)]
    for fn, module in (("main", gradir.parse(text)), ("main_adjoint", gradient_module(text))):
        want = gradir.interpret(module, fn, *args)
        got = Emulated(module)[fn](*args)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
    print(name, "ok")
# CHECK: rnn ok
# CHECK: two_carried ok
# CHECK: nested_call ok
# CHECK: rnn_sqrt ok
# CHECK: if_top ok
# CHECK: if_in_loop ok
# CHECK: while ok

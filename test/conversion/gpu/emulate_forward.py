# RUN: %PYTHON %s | FileCheck %s
# Forward mode on the GPU: rlx-gradient{mode=jvp|jacobian|hvp|hessian} of
# straight-line code and of the scf programs of test/autodiff/scf (for, if,
# while), compiled with gradir.compile(target="cuda") (kernels to PTX, no
# GPU needed) and run by the SIMT emulator against the reference
# interpreter (f64, to rounding).  Each line: the kernels one call launched.

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "autodiff", "scf", "Inputs"))
from emulate_helpers import check  # noqa: E402
from programs import ALL, args_for  # noqa: E402

import gradir  # noqa: E402
from gradir.testing import gradient_module  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)
rng = np.random.default_rng(0)

MLP = """
func.func @main(%x: tensor<4x3xf64>, %w: tensor<3x5xf64>, %b: tensor<5xf64>) -> (tensor<4x5xf64>, tensor<f64>) {
  %m = "rlx.matmul"(%x, %w) : (tensor<4x3xf64>, tensor<3x5xf64>) -> tensor<4x5xf64>
  %a = "rlx.add"(%m, %b) : (tensor<4x5xf64>, tensor<5xf64>) -> tensor<4x5xf64>
  %t = "rlx.tanh"(%a) : (tensor<4x5xf64>) -> tensor<4x5xf64>
  %s = "rlx.softmax"(%t) {axis = array<i64: -1>} : (tensor<4x5xf64>) -> tensor<4x5xf64>
  %l = "rlx.sum"(%s) : (tensor<4x5xf64>) -> tensor<f64>
  %q = "rlx.multiply"(%t, %t) : (tensor<4x5xf64>, tensor<4x5xf64>) -> tensor<4x5xf64>
  %r = "rlx.mean"(%q) : (tensor<4x5xf64>) -> tensor<f64>
  return %s, %r : tensor<4x5xf64>, tensor<f64>
}
"""


def tangents(args, wrt):
    return [rng.uniform(-1, 1, size=np.shape(args[i])) for i in wrt]


def run_modes(name, text, args, modes=("jvp", "jacobian", "hvp", "hessian"), target=0):
    wrt = [i for i, a in enumerate(args) if np.issubdtype(np.asarray(a).dtype, np.floating)]
    for mode in modes:
        opts = {"mode": mode} if mode in ("jvp", "jacobian") else {"mode": mode,
                                                                      "target_index": target}
        module = gradient_module(text, **opts)
        extra = tangents(args, wrt) if mode in ("jvp", "hvp") else []
        check(f"{name} {mode}", module, f"main_{mode}", list(args) + extra, rtol=1e-10,
              atol=1e-12)


x, w, b = rng.normal(size=(4, 3)), rng.normal(size=(3, 5)), rng.normal(size=5)
run_modes("mlp", MLP, [x, w, b], target=1)
# CHECK: mlp jvp: ok, {{[0-9]+}} launches
# CHECK-NEXT: mlp jacobian: ok, {{[0-9]+}} launches
# CHECK-NEXT: mlp hvp: ok, {{[0-9]+}} launches
# CHECK-NEXT: mlp hessian: ok, {{[0-9]+}} launches
for name in ("rnn", "if_top", "while"):
    run_modes(name, ALL[name], args_for(ALL[name], rng))
# CHECK-NEXT: rnn jvp: ok
# CHECK-NEXT: rnn jacobian: ok
# CHECK-NEXT: rnn hvp: ok
# CHECK-NEXT: rnn hessian: ok
# CHECK-NEXT: if_top jvp: ok
# CHECK-NEXT: if_top jacobian: ok
# CHECK-NEXT: if_top hvp: ok
# CHECK-NEXT: if_top hessian: ok
# CHECK-NEXT: while jvp: ok
# CHECK-NEXT: while jacobian: ok
# CHECK-NEXT: while hvp: ok
# CHECK-NEXT: while hessian: ok

# RUN: %PYTHON %s | FileCheck %s
# VJP rules of astype, full and collapse_sum_to.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import check_op, check_text, rand, run, ttype  # noqa: E402


@run
def test_astype():
    # f64 -> f32 -> f64 round trip: the adjoint is cast back at each step.
    # f32 rounding limits the finite differences: larger eps, looser rtol.
    t64, t32 = ttype((2, 3)), ttype((2, 3), np.float32)
    text = f"""
func.func @main(%x: {t64}, %w: {t64}) -> tensor<f64> {{
  %a = "rlx.astype"(%x) : ({t64}) -> {t32}
  %e = "rlx.exp"(%a) : ({t32}) -> {t32}
  %b = "rlx.astype"(%e) : ({t32}) -> {t64}
  %p = "rlx.multiply"(%b, %w) : ({t64}, {t64}) -> {t64}
  %s = "rlx.sum"(%p) : ({t64}) -> tensor<f64>
  return %s : tensor<f64>
}}
"""
    check_text(text, [rand((2, 3)), rand((2, 3))], wrt=[0], eps=1e-3, rtol=1e-3, atol=1e-4)
    check_op('"rlx.astype"(%a0)', [rand((2, 3))], (2, 3))        # same type
    print("astype ok")
# CHECK-LABEL: TEST: test_astype
# CHECK: astype ok


@run
def test_astype_to_integer():
    # A cast to an integer type blocks the gradient: zeros.
    t64, ti = ttype((3,)), ttype((3,), np.int64)
    text = f"""
func.func @main(%x: {t64}) -> tensor<f64> {{
  %i = "rlx.astype"(%x) : ({t64}) -> {ti}
  %f = "rlx.astype"(%i) : ({ti}) -> {t64}
  %y = "rlx.multiply"(%f, %x) : ({t64}, {t64}) -> {t64}
  %s = "rlx.sum"(%y) : ({t64}) -> tensor<f64>
  return %s : tensor<f64>
}}
"""
    from gradir import interpret
    from gradir.testing import gradient_module
    x = np.array([1.5, 2.25, -3.75])
    got = interpret(gradient_module(text, wrt=[0]), "main_adjoint", x)[1]
    np.testing.assert_array_equal(got, np.trunc(x))
    print("astype integer ok")
# CHECK-LABEL: TEST: test_astype_to_integer
# CHECK: astype integer ok


@run
def test_full():
    check_op('"rlx.full"(%a0)', [rand(())], (2, 3))
    check_op('"rlx.full"(%a0)', [rand(())], ())
    print("full ok")
# CHECK-LABEL: TEST: test_full
# CHECK: full ok


@run
def test_collapse_sum_to():
    check_op('"rlx.collapse_sum_to"(%a0)', [rand((2, 3, 4))], (3, 1))
    check_op('"rlx.collapse_sum_to"(%a0)', [rand((2, 3))], ())
    check_op('"rlx.collapse_sum_to"(%a0)', [rand((2, 3))], (2, 3))
    print("collapse_sum_to ok")
# CHECK-LABEL: TEST: test_collapse_sum_to
# CHECK: collapse_sum_to ok

# RUN: %PYTHON %s | FileCheck %s
# VJP and JVP rules of astype, full and collapse_sum_to (JVP rules: along
# random tangents and, batched, as the whole Jacobian).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import (check_op, check_op_jvp, check_text, op_text, rand, run,  # noqa: E402
                          ttype)


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


@run
def test_astype_jvp():
    # f64 -> f32 -> f64: the tangent is cast with the value at each step
    # (f32 rounding: larger eps, looser tolerances).
    from gradir.testing import check_jacobian, check_jvp
    t64, t32 = ttype((2, 3)), ttype((2, 3), np.float32)
    text = f"""
func.func @main(%x: {t64}) -> ({t64}, {t32}) {{
  %a = "rlx.astype"(%x) : ({t64}) -> {t32}
  %e = "rlx.exp"(%a) : ({t32}) -> {t32}
  %b = "rlx.astype"(%e) : ({t32}) -> {t64}
  return %b, %e : {t64}, {t32}
}}
"""
    tol = dict(eps=1e-3, rtol=1e-3, atol=1e-4)
    check_jvp(text, [rand((2, 3))], wrt=[0], **tol)
    check_jacobian(text, [rand((2, 3))], wrt=[0], jacobian_mode="forward", **tol)
    check_op_jvp('"rlx.astype"(%a0)', [rand((2, 3))], (2, 3))        # same type
    print("astype jvp ok")
# CHECK-LABEL: TEST: test_astype_jvp
# CHECK: astype jvp ok


@run
def test_astype_to_integer_jvp():
    # A cast to an integer type has no tangent: d(trunc(x) x) = trunc(x) dx.
    from gradir import interpret
    from gradir.testing import gradient_module
    t64, ti = ttype((3,)), ttype((3,), np.int64)
    text = f"""
func.func @main(%x: {t64}) -> ({t64}, {ti}) {{
  %i = "rlx.astype"(%x) : ({t64}) -> {ti}
  %f = "rlx.astype"(%i) : ({ti}) -> {t64}
  %y = "rlx.multiply"(%f, %x) : ({t64}, {t64}) -> {t64}
  return %y, %i : {t64}, {ti}
}}
"""
    x, t = np.array([1.5, 2.25, -3.75]), np.array([1.0, -2.0, 0.5])
    outs = interpret(gradient_module(text, mode="jvp", wrt=[0]), "main_jvp", x, t)
    np.testing.assert_array_equal(outs[2], np.trunc(x) * t)
    np.testing.assert_array_equal(outs[3], np.zeros(3, np.int64))
    print("astype integer jvp ok")
# CHECK-LABEL: TEST: test_astype_to_integer_jvp
# CHECK: astype integer jvp ok


@run
def test_full_jvp():
    check_op_jvp('"rlx.full"(%a0)', [rand(())], (2, 3))
    check_op_jvp('"rlx.full"(%a0)', [rand(())], ())
    check_op_jvp('"rlx.full"(%a0)', [rand(())], (1,))
    print("full jvp ok")
# CHECK-LABEL: TEST: test_full_jvp
# CHECK: full jvp ok


@run
def test_collapse_sum_to_jvp():
    # the target keeps the tangent's batch dims in front of it: lower ranks
    # than the operand, unit dims, 0-d, and no collapse at all
    for sx, sy in (((2, 3, 4), (3, 1)), ((2, 3), ()), ((2, 3), (2, 3)), ((2, 3), (1, 3)),
                   ((4, 2, 3), (2, 1)), ((2, 3), (3,))):
        check_op_jvp('"rlx.collapse_sum_to"(%a0)', [rand(sx)], sy)
    print("collapse_sum_to jvp ok")
# CHECK-LABEL: TEST: test_collapse_sum_to_jvp
# CHECK: collapse_sum_to jvp ok

# RUN: %PYTHON %s | FileCheck %s
# JVP rules of tensor.extract_slice / tensor.insert_slice (the ops loop
# adjoints record iteration states with), checked against finite differences
# along random tangents and, batched, as the whole Jacobian (forward columns): static and
# dynamic offsets, strides, rank-reducing slices, one tensor without tangent.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import rand, run, ttype  # noqa: E402

from gradir.testing import check_jacobian, check_jvp  # noqa: E402


def check(text, args, wrt):
    check_jvp(text, args, wrt=wrt)
    check_jacobian(text, args, wrt=wrt, jacobian_mode="forward")


@run
def test_extract_slice_jvp():
    t46, t23, t43, t3 = ttype((4, 6)), ttype((2, 3)), ttype((4, 3)), ttype((3,))
    strided = f"""
func.func @main(%x: {t46}) -> {t23} {{
  %s = tensor.extract_slice %x[1, 0] [2, 3] [1, 2] : {t46} to {t23}
  return %s : {t23}
}}
"""
    check(strided, [rand((4, 6))], [0])
    print("extract_slice strided ok")
    # rank-reducing, at an offset read from a tensor (a dynamic offset operand)
    dynamic = f"""
func.func @main(%x: {t43}, %i: tensor<i64>) -> {t3} {{
  %e = tensor.extract %i[] : tensor<i64>
  %k = arith.index_cast %e : i64 to index
  %s = tensor.extract_slice %x[%k, 0] [1, 3] [1, 1] : {t43} to {t3}
  return %s : {t3}
}}
"""
    check(dynamic, [rand((4, 3)), np.array(2, np.int64)], [0])
    print("extract_slice dynamic offset ok")
# CHECK-LABEL: TEST: test_extract_slice_jvp
# CHECK: extract_slice strided ok
# CHECK: extract_slice dynamic offset ok


@run
def test_insert_slice_jvp():
    t43, t3, t46, t22 = ttype((4, 3)), ttype((3,)), ttype((4, 6)), ttype((2, 2))
    dynamic = f"""
func.func @main(%x: {t3}, %d: {t43}, %i: tensor<i64>) -> {t43} {{
  %e = tensor.extract %i[] : tensor<i64>
  %k = arith.index_cast %e : i64 to index
  %s = tensor.insert_slice %x into %d[%k, 0] [1, 3] [1, 1] : {t3} into {t43}
  return %s : {t43}
}}
"""
    args = [rand((3,)), rand((4, 3)), np.array(1, np.int64)]
    for wrt in ([0, 1], [0], [1]):      # one tensor without tangent: zeros
        check(dynamic, args, wrt)
    print("insert_slice dynamic offset ok")
    strided = f"""
func.func @main(%x: {t22}, %d: {t46}) -> {t46} {{
  %s = tensor.insert_slice %x into %d[1, 1] [2, 2] [2, 3] : {t22} into {t46}
  return %s : {t46}
}}
"""
    for wrt in ([0, 1], [0], [1]):
        check(strided, [rand((2, 2)), rand((4, 6))], wrt)
    print("insert_slice strided ok")
# CHECK-LABEL: TEST: test_insert_slice_jvp
# CHECK: insert_slice dynamic offset ok
# CHECK: insert_slice strided ok


@run
def test_stack_round_trip_jvp():
    # a state pushed onto a zero stack and read back, as a loop adjoint does
    t43, t3 = ttype((4, 3)), ttype((3,))
    text = f"""
func.func @main(%x: {t3}) -> ({t3}, {t43}) {{
  %z = "rlx.zeros"() : () -> {t43}
  %y = "rlx.exp"(%x) : ({t3}) -> {t3}
  %st = tensor.insert_slice %y into %z[2, 0] [1, 3] [1, 1] : {t3} into {t43}
  %r = tensor.extract_slice %st[2, 0] [1, 3] [1, 1] : {t43} to {t3}
  %s = "rlx.sin"(%r) : ({t3}) -> {t3}
  return %s, %st : {t3}, {t43}
}}
"""
    check(text, [rand((3,))], [0])
    print("stack round trip ok")
# CHECK-LABEL: TEST: test_stack_round_trip_jvp
# CHECK: stack round trip ok

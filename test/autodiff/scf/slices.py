# RUN: %PYTHON %s | FileCheck %s
# Loops that fill their result with tensor.insert_slice, read their input
# with tensor.extract_slice and use a loop-invariant op, against central
# finite differences (float64, reference interpreter; every adjoint also runs
# compiled through the oracle): the forward loop records no carried state the
# backward does not read, the reverse loop adds each slice's adjoint into
# only that slice of its accumulator, and the invariant ops leave the loops.
# Trip counts 0, 1 and several; nested loops; two slices of one input per
# iteration; checkpointed loops (their segments' reverse loops).

import numpy as np

from gradir.testing import check_gradient, gradient_module

rng = np.random.default_rng(7)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


# Rows [lb, ub) of x in blocks of 2: tanh(x_rows @ w^T) into the same rows of
# the carried b (rows outside [lb, ub) keep b's values); x's first two rows
# are read every iteration too (a second slice of x, loop-invariant).
FILL = """
func.func @main(%x: tensor<6x4xf64>, %w: tensor<3x4xf64>, %b: tensor<6x3xf64>) -> tensor<f64> {{
  %lb = arith.constant {LB} : index
  %ub = arith.constant {UB} : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %lb to %ub step %c2 iter_args(%acc = %b) -> (tensor<6x3xf64>) {{
    %xs = tensor.extract_slice %x[%i, 0] [2, 4] [1, 1] : tensor<6x4xf64> to tensor<2x4xf64>
    %x0 = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<6x4xf64> to tensor<2x4xf64>
    %xx = "rlx.multiply"(%xs, %x0) : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
    %wt = "rlx.permute_dims"(%w) {{axes = array<i64: 1, 0>}} : (tensor<3x4xf64>) -> tensor<4x3xf64>
    %m = "rlx.matmul"(%xx, %wt) : (tensor<2x4xf64>, tensor<4x3xf64>) -> tensor<2x3xf64>
    %t = "rlx.tanh"(%m) : (tensor<2x3xf64>) -> tensor<2x3xf64>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<6x3xf64>
    scf.yield %ins : tensor<6x3xf64>
  }} {POLICY}
  %q = "rlx.multiply"(%r, %r) : (tensor<6x3xf64>, tensor<6x3xf64>) -> tensor<6x3xf64>
  %s = "rlx.sum"(%q) : (tensor<6x3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}}
"""


def fill(lb, ub, policy=""):
    pol = f"{{grad.checkpoint = {policy}}}" if policy else ""
    return FILL.format(LB=lb, UB=ub, POLICY=pol)


def fill_args():
    return [rng.normal(size=(6, 4)), rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(6, 3))]


@run
def trip_counts():
    for lb, ub in ((0, 0), (2, 4), (0, 6), (2, 6)):
        check_gradient(fill(lb, ub), fill_args())
        print("trips", (ub - lb) // 2, "ok")
# CHECK-LABEL: TEST: trip_counts
# CHECK: trips 0 ok
# CHECK: trips 1 ok
# CHECK: trips 3 ok
# CHECK: trips 2 ok


@run
def checkpointed():
    for policy in ('"sqrt"', "2", '"revolve"'):
        check_gradient(fill(0, 6, policy), fill_args())
    print("policies ok")
# CHECK-LABEL: TEST: checkpointed
# CHECK: policies ok


@run
def recorded_and_hoisted():
    # what the gradient keeps: no stack of the carried 6x3 result, no
    # full-size add into x's accumulator, the permute_dims outside the loops
    text = str(gradient_module(fill(0, 6)))
    adjoint = text[text.index("@main_adjoint"):]
    print("stack of the result:", "tensor<3x6x3xf64>" in adjoint)
    print("full-size adds:", "(tensor<6x4xf64>, tensor<6x4xf64>) -> tensor<6x4xf64>" in adjoint)
    loops = adjoint.split("scf.for")
    print("permute_dims in a loop:", any('"rlx.permute_dims"(%arg1)' in part.split("scf.yield")[0]
                                         for part in loops[1:]))
# CHECK-LABEL: TEST: recorded_and_hoisted
# CHECK-NEXT: stack of the result: False
# CHECK-NEXT: full-size adds: False
# CHECK-NEXT: permute_dims in a loop: False


# Blocks of 2x2 of x, rows [0, R) by columns [0, 4): an outer loop over row
# blocks, an inner one over column blocks, both carrying the result; exp(w)
# is invariant in both loops.
NESTED = """
func.func @main(%x: tensor<4x4xf64>, %w: tensor<2x2xf64>, %b: tensor<4x4xf64>) -> tensor<f64> {{
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %cr = arith.constant {R} : index
  %r = scf.for %i = %c0 to %cr step %c2 iter_args(%acc = %b) -> (tensor<4x4xf64>) {{
    %in = scf.for %j = %c0 to %c4 step %c2 iter_args(%acc2 = %acc) -> (tensor<4x4xf64>) {{
      %xs = tensor.extract_slice %x[%i, %j] [2, 2] [1, 1] : tensor<4x4xf64> to tensor<2x2xf64>
      %we = "rlx.exp"(%w) : (tensor<2x2xf64>) -> tensor<2x2xf64>
      %m = "rlx.matmul"(%xs, %we) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
      %t = "rlx.sin"(%m) : (tensor<2x2xf64>) -> tensor<2x2xf64>
      %ins = tensor.insert_slice %t into %acc2[%i, %j] [2, 2] [1, 1] : tensor<2x2xf64> into tensor<4x4xf64>
      scf.yield %ins : tensor<4x4xf64>
    }}
    scf.yield %in : tensor<4x4xf64>
  }}
  %q = "rlx.multiply"(%r, %b) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %s = "rlx.sum"(%q) : (tensor<4x4xf64>) -> tensor<f64>
  return %s : tensor<f64>
}}
"""


@run
def nested():
    for rows in (0, 2, 4):
        args = [rng.normal(size=(4, 4)), rng.normal(size=(2, 2)) * 0.3, rng.normal(size=(4, 4))]
        check_gradient(NESTED.format(R=rows), args)
    text = str(gradient_module(NESTED.format(R=4)))
    adjoint = text[text.index("@main_adjoint"):]
    first_loop = adjoint.index("scf.for")
    print("exp(w) before the loops:", adjoint.count('"rlx.exp"(%arg1)') >= 1
          and adjoint.index('"rlx.exp"(%arg1)') < first_loop)
    print("nested ok")
# CHECK-LABEL: TEST: nested
# CHECK-NEXT: exp(w) before the loops: True
# CHECK-NEXT: nested ok

# RUN: %PYTHON %s | FileCheck %s
# Creation, type, tuple and grad ops, arith.constant, func.call and argument
# checking of the reference interpreter.

import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from interp_helpers import (FLOATS, InterpreterError, check, parse, rand, run,  # noqa: E402
                            run_op, segment_attrs)
from gradir.interp import interpret, supported_ops  # noqa: E402


def expect_error(fn, *args):
    try:
        fn(*args)
    except InterpreterError as e:
        return str(e)
    raise AssertionError("expected an InterpreterError")


@run
def test_create():
    for dt in FLOATS:
        x = rand((2, 3), dt)
        (z,) = run_op("rlx.zeros", [], [((2, 3), dt)])
        check(z, [[0.0] * 3] * 2, dt)
        (o,) = run_op("rlx.ones", [], [((4,), dt)])
        check(o, [1.0] * 4, dt)
        (f,) = run_op("rlx.full", [np.array(2.5, dt)], [((3, 2), dt)])
        check(f, [[2.5] * 2] * 3, dt)
        (zl,) = run_op("rlx.zeros_like", [x], [((2, 3), dt)])
        check(zl, [[0.0] * 3] * 2, dt)
        (ol,) = run_op("rlx.ones_like", [x], [((2, 3), dt)])
        check(ol, [[1.0] * 3] * 2, dt)
    (fi,) = run_op("rlx.full", [np.array(1.75, np.float32)], [((2,), np.int64)])
    check(fi, [1, 1], np.int64)
    print("create ok")
# CHECK-LABEL: TEST: test_create
# CHECK: create ok


@run
def test_astype():
    x = np.array([-1.75, -0.5, 0.0, 0.5, 2.25], np.float32)
    (a,) = run_op("rlx.astype", [x], [((5,), np.float64)])
    check(a, [-1.75, -0.5, 0.0, 0.5, 2.25], np.float64)
    (b,) = run_op("rlx.astype", [x.astype(np.float64) + 1e-10], [((5,), np.float32)])
    check(b, [-1.75, -0.5, 0.0, 0.5, 2.25], np.float32)
    (c,) = run_op("rlx.astype", [x], [((5,), np.int32)])
    check(c, [-1, 0, 0, 0, 2], np.int32)             # truncation toward zero
    (d,) = run_op("rlx.astype", [x], [((5,), "i1")])
    check(d, [True, True, False, True, True], np.bool_)
    (e,) = run_op("rlx.astype", [np.array([True, False])], [((2,), np.float32)])
    check(e, [1.0, 0.0], np.float32)
    (h,) = run_op("rlx.astype", [x], [((5,), np.float16)])
    check(h, [-1.75, -0.5, 0.0, 0.5, 2.25], np.float16)
    print("astype ok")
# CHECK-LABEL: TEST: test_astype
# CHECK: astype ok


TUPLE_IR = """
func.func @main(%a: tensor<2xf32>, %b: tensor<3x2xf64>)
    -> (tuple<tensor<2xf32>, tuple<tensor<3x2xf64>, tensor<2xf32>>>, tensor<3x2xf64>) {
  %inner = "rlx.tuple"(%b, %a) {SEG2} : (tensor<3x2xf64>, tensor<2xf32>) -> tuple<tensor<3x2xf64>, tensor<2xf32>>
  %t = "rlx.tuple"(%a, %inner) {SEG2} : (tensor<2xf32>, tuple<tensor<3x2xf64>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tuple<tensor<3x2xf64>, tensor<2xf32>>>
  %i = "rlx.tuple_get_item"(%t) {index = 1 : i64} : (tuple<tensor<2xf32>, tuple<tensor<3x2xf64>, tensor<2xf32>>>) -> tuple<tensor<3x2xf64>, tensor<2xf32>>
  %x = "rlx.tuple_get_item"(%i) {index = 0 : i64} : (tuple<tensor<3x2xf64>, tensor<2xf32>>) -> tensor<3x2xf64>
  %y = "rlx.negative"(%x) : (tensor<3x2xf64>) -> tensor<3x2xf64>
  return %t, %y : tuple<tensor<2xf32>, tuple<tensor<3x2xf64>, tensor<2xf32>>>, tensor<3x2xf64>
}
func.func @take_tuple(%t: tuple<tensor<2xf32>, tensor<f64>>) -> tensor<f64> {
  %s = "rlx.tuple_get_item"(%t) {index = 1 : i64} : (tuple<tensor<2xf32>, tensor<f64>>) -> tensor<f64>
  return %s : tensor<f64>
}
""".replace("{SEG2}", "{" + segment_attrs("rlx.tuple", 2, 1) + "}"
            if segment_attrs("rlx.tuple", 2, 1) else "")


@run
def test_tuples():
    m = parse(TUPLE_IR)
    a, b = rand((2,), np.float32), rand((3, 2), np.float64)
    t, y = interpret(m, "main", a, b)
    assert isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], tuple)
    check(t[0], a, np.float32)
    check(t[1][0], b, np.float64)
    check(t[1][1], a, np.float32)
    check(y, -b, np.float64)
    (s,) = interpret(m, "take_tuple", (a, np.array(4.0)))
    check(s, np.float64(4.0), np.float64)
    print("tuples ok")
# CHECK-LABEL: TEST: test_tuples
# CHECK: tuples ok


GRAD_IR = """
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "grad.start_checkpoint"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.exp"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "grad.end_checkpoint"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "grad.no_grad"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "rlx.multiply"(%3, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}
"""


@run
def test_grad_markers():
    a = rand((2, 3), np.float32)
    (y,) = interpret(parse(GRAD_IR), "main", a)
    check(y, np.exp(a.astype(np.float64)) * a, np.float32)
    print("grad markers ok")
# CHECK-LABEL: TEST: test_grad_markers
# CHECK: grad markers ok


CONST_IR = """
func.func @main() -> (tensor<2x2xf32>, tensor<3xf64>, tensor<2xi64>, tensor<3xi1>,
                      tensor<f32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<2xbf16>, tensor<2xi32>) {
  %0 = arith.constant dense<[[1.0, -2.5], [3.25, 4.0]]> : tensor<2x2xf32>
  %1 = arith.constant dense<0.125> : tensor<3xf64>
  %2 = arith.constant dense<[7, -9]> : tensor<2xi64>
  %3 = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %4 = arith.constant dense<-1.5> : tensor<f32>
  %5 = arith.constant dense<[[1.0, 2.0], [0.5, -4.0]]> : tensor<2x2xf16>
  %6 = arith.constant dense<[1.0, 2.5, 3.3]> : tensor<3xbf16>
  %7 = arith.constant dense<-2.0> : tensor<2xbf16>
  %8 = arith.constant dense<5> : tensor<2xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<2x2xf32>, tensor<3xf64>, tensor<2xi64>, tensor<3xi1>, tensor<f32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<2xbf16>, tensor<2xi32>
}
"""


@run
def test_constants():
    c = interpret(parse(CONST_IR), "main")
    check(c[0], [[1.0, -2.5], [3.25, 4.0]], np.float32)
    check(c[1], [0.125] * 3, np.float64)
    check(c[2], [7, -9], np.int64)
    check(c[3], [True, False, True], np.bool_)
    check(c[4], np.float64(-1.5), np.float32)
    check(c[5], [[1.0, 2.0], [0.5, -4.0]], np.float16)
    # bf16 values are float32 arrays holding bf16-representable numbers
    check(c[6], [1.0, 2.5, 3.296875], np.float32, rtol=0, atol=0)
    check(c[7], [-2.0, -2.0], np.float32)
    check(c[8], [5, 5], np.int32)
    print("constants ok")
# CHECK-LABEL: TEST: test_constants
# CHECK: constants ok


BF16_IR = """
func.func @main(%a: tensor<3xbf16>, %b: tensor<3xbf16>) -> tensor<3xbf16> {
  %0 = "rlx.add"(%a, %b) : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}
"""


@run
def test_bf16():
    # bf16 tensors are float32 arrays; results are rounded to bf16 (nearest even).
    a = np.array([1.5, 1.0, 1.0], np.float32)
    b = np.array([0.25, 2.0 ** -8, 3 * 2.0 ** -9], np.float32)
    (y,) = interpret(parse(BF16_IR), "main", a, b)
    check(y, [1.75, 1.0, 1.0 + 2.0 ** -7], np.float32, rtol=0, atol=0)
    print(expect_error(interpret, parse(BF16_IR), "main", a.astype(np.float64), b))
    print("bf16 ok")
# CHECK-LABEL: TEST: test_bf16
# CHECK: @main argument #0: expected dtype float32 for tensor<3xbf16> (bf16 tensors are passed as float32 arrays)
# CHECK: bf16 ok


BF16_SCALAR_IR = """
func.func @main(%x: tensor<4xf32>) -> (tensor<f32>, tensor<bf16>) {
  %b = "rlx.astype"(%x) {dtype = "bf16"} : (tensor<4xf32>) -> tensor<4xbf16>
  %s = "rlx.sum"(%b) : (tensor<4xbf16>) -> tensor<bf16>
  %f = "rlx.astype"(%s) {dtype = "f32"} : (tensor<bf16>) -> tensor<f32>
  return %f, %s : tensor<f32>, tensor<bf16>
}
"""


@run
def test_bf16_scalar():
    # a rank-0 bf16 value stays rank 0 when rounded (it came back 1-d: "computed
    # shape (1,), but the declared type is tensor<bf16>")
    x = np.array([1.0, 2.0, 3.0, 1 / 3], np.float32)
    f, s = interpret(parse(BF16_SCALAR_IR), "main", x)
    print(f.shape, s.shape, float(f), float(s))
# CHECK-LABEL: TEST: test_bf16_scalar
# CHECK-NEXT: () () 6.34375 6.34375


CALL_IR = """
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<f64>) {
  %0:2 = func.call @pair(%x, %y) : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  %1 = func.call @square_sum(%0#1) : (tensor<3xf64>) -> tensor<f64>
  return %0#0, %1 : tensor<3xf64>, tensor<f64>
}
func.func @pair(%a: tensor<3xf64>, %b: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %s = "rlx.add"(%a, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %d = "rlx.subtract"(%a, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %s, %d : tensor<3xf64>, tensor<3xf64>
}
func.func @square_sum(%a: tensor<3xf64>) -> tensor<f64> {
  %q = func.call @square(%a) : (tensor<3xf64>) -> tensor<3xf64>
  %s = "rlx.sum"(%q) : (tensor<3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}
func.func @square(%a: tensor<3xf64>) -> tensor<3xf64> {
  %q = "rlx.square"(%a) : (tensor<3xf64>) -> tensor<3xf64>
  return %q : tensor<3xf64>
}
func.func @bad(%a: tensor<3xf64>) -> tensor<3xf64> {
  %q = func.call @square(%a) : (tensor<3xf64>) -> tensor<3xf64>
  %r = math.exp %q : tensor<3xf64>
  return %r : tensor<3xf64>
}
"""


@run
def test_func_call():
    m = parse(CALL_IR)
    x, y = rand((3,), np.float64), rand((3,), np.float64)
    s, q = interpret(m, "main", x, y)
    check(s, x + y, np.float64)
    check(q, np.float64(sum((a - b) ** 2 for a, b in zip(x, y))), np.float64)
    print("func.call ok")
# CHECK-LABEL: TEST: test_func_call
# CHECK: func.call ok


@run
def test_errors():
    m = parse(CALL_IR)
    x = rand((3,), np.float64)
    print(expect_error(interpret, m, "main", x))
    print(expect_error(interpret, m, "main", x, rand((4,), np.float64)))
    print(expect_error(interpret, m, "main", x, x.astype(np.float32)))
    print(expect_error(interpret, m, "main", x, [1.0, 2.0, 3.0]))
    print(expect_error(interpret, m, "nope", x))
    print(re.sub(r"^\S*:(\d+):\d+:", r"LOC:\1:", expect_error(interpret, m, "bad", x)))
    t = parse(TUPLE_IR)
    print(expect_error(interpret, t, "take_tuple", (rand((2,), np.float32),)))
    print(expect_error(interpret, t, "take_tuple",
                       (rand((2,), np.float32), np.array([1.0]))))
# CHECK-LABEL: TEST: test_errors
# CHECK: @main takes 2 argument(s), got 1
# CHECK: @main argument #1: expected shape (3,) for tensor<3xf64>, got array of shape (4,) and dtype float64
# CHECK: @main argument #1: expected dtype float64 for tensor<3xf64>, got array of shape (3,) and dtype float32
# CHECK: @main argument #1: expected a numpy array for tensor<3xf64>, got list
# CHECK: no function @nope in the module (functions: @bad, @main, @pair, @square, @square_sum)
# CHECK: LOC:23: no interpreter rule for op 'math.exp'
# CHECK: @take_tuple argument #0: expected a tuple of 2 values for tuple<tensor<2xf32>, tensor<f64>>, got tuple of 1 values
# CHECK: @take_tuple argument #0[1]: expected shape () for tensor<f64>, got array of shape (1,) and dtype float64


@run
def test_result_type_checked():
    # A result type that disagrees with the op's semantics is reported.
    x = rand((2, 3), np.float32)
    msg = expect_error(run_op, "rlx.sum", [x], [((3,), np.float32)], "axis = array<i64: 1>")
    print(msg.split(": ", 1)[1])
# CHECK-LABEL: TEST: test_result_type_checked
# CHECK: 'rlx.sum' result #0: computed shape (2,), but the declared type is tensor<3xf32>


@run
def test_every_dialect_op_is_interpreted():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    missing = []
    for dialect in ("rlx", "grad"):
        with open(os.path.join(root, "dialect", f"{dialect}.irdl.mlir")) as f:
            names = re.findall(r"irdl\.operation @(\w+)", f.read())
        assert names, dialect
        missing += [f"{dialect}.{n}" for n in names if f"{dialect}.{n}" not in supported_ops()]
    print("missing:", missing)
# CHECK-LABEL: TEST: test_every_dialect_op_is_interpreted
# CHECK: missing: []

# RUN: %PYTHON %s | FileCheck %s
# rlx-gradient's features checked numerically (float64, central finite
# differences through the reference interpreter): the seed example, wrt
# subsets, zero gradients, accumulation, stop-gradients, tuples, calls,
# custom VJPs, mode=vjp, split=true and second derivatives.

import numpy as np

import gradir
from gradir.testing import check_gradient, finite_difference, gradient_module
from gradir import interpret

rng = np.random.default_rng(0)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def r(*shape):
    return rng.standard_normal(shape)


SEED = """
func.func @main(%x: tensor<3x3xf64>, %y: tensor<3x3xf64>) -> tensor<f64> {
  %0 = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<3x3xf64>) -> tensor<3x3xf64>
  %1 = "rlx.permute_dims"(%y) {axes = array<i64: 1, 0>} : (tensor<3x3xf64>) -> tensor<3x3xf64>
  %2 = "rlx.matmul"(%0, %1) : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
  %3 = "rlx.sum"(%2) : (tensor<3x3xf64>) -> tensor<f64>
  return %3 : tensor<f64>
}
"""


@run
def seed_example():
    x, y = r(3, 3), r(3, 3)
    gx, gy = check_gradient(SEED, [x, y])
    # d/dx sum(x^T y^T) = (ones @ y)^T ... checked against the closed form too.
    ones = np.ones((3, 3))
    np.testing.assert_allclose(gx, (ones @ y).T, rtol=1e-12)
    np.testing.assert_allclose(gy, (x @ ones).T, rtol=1e-12)
    print("seed ok")
# CHECK-LABEL: TEST: seed_example
# CHECK: seed ok


@run
def wrt_subset_and_zero_gradients():
    text = """
func.func @main(%x: tensor<3xf64>, %unused: tensor<2xf64>, %y: tensor<3xf64>) -> tensor<f64> {
  %0 = "rlx.multiply"(%x, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = "rlx.sum"(%0) : (tensor<3xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}"""
    x, u, y = r(3), r(2), r(3)
    (gy,) = check_gradient(text, [x, u, y], wrt=[2])
    np.testing.assert_allclose(gy, x, rtol=1e-12)
    gx, gu, gy = check_gradient(text, [x, u, y])
    assert not gu.any() and gu.shape == (2,)
    print("wrt subset ok; unused argument gets zeros")
# CHECK-LABEL: TEST: wrt_subset_and_zero_gradients
# CHECK: wrt subset ok; unused argument gets zeros


@run
def accumulation_constants_integers():
    text = """
func.func @main(%x: tensor<4xf64>, %idx: tensor<2xi64>) -> tensor<f64> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>
  %0 = "rlx.multiply"(%x, %x) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %1 = "rlx.multiply"(%0, %c) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %2 = "rlx.add"(%1, %x) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %3 = "rlx.take"(%2, %idx) {axis = array<i64: 0>} : (tensor<4xf64>, tensor<2xi64>) -> tensor<2xf64>
  %4 = "rlx.sum"(%3) : (tensor<2xf64>) -> tensor<f64>
  %5 = "rlx.sum"(%2) : (tensor<4xf64>) -> tensor<f64>
  %6 = "rlx.add"(%4, %5) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %6 : tensor<f64>
}"""
    x, idx = r(4), np.array([1, 3], dtype=np.int64)
    module = gradient_module(text)
    outs = interpret(module, "main_adjoint", x, idx)
    assert len(outs) == 2, "the integer argument gets no gradient by default"
    check_gradient(text, [x, idx], wrt=[0])
    print("accumulation ok")
# CHECK-LABEL: TEST: accumulation_constants_integers
# CHECK: accumulation ok


@run
def stop_gradients():
    text = """
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>) -> tensor<f64> {
  %0 = "grad.no_grad"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %1 = "rlx.multiply"(%0, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %m = "rlx.greater"(%x, %y) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xi1>
  %2 = "rlx.where"(%m, %1, %y) : (tensor<3xi1>, tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "grad.start_checkpoint"(%2) : (tensor<3xf64>) -> tensor<3xf64>
  %e = "grad.end_checkpoint"(%s) : (tensor<3xf64>) -> tensor<3xf64>
  %3 = "rlx.sum"(%e) : (tensor<3xf64>) -> tensor<f64>
  return %3 : tensor<f64>
}"""
    x, y = r(3), r(3)
    module = gradient_module(text)
    _, gx, gy = interpret(module, "main_adjoint", x, y)
    assert not gx.any(), gx  # no_grad and the comparison stop it
    np.testing.assert_allclose(gy, np.where(x > y, x, 1.0), rtol=1e-12)
    print("no_grad and comparisons stop the gradient; markers are identities")
# CHECK-LABEL: TEST: stop_gradients
# CHECK: no_grad and comparisons stop the gradient; markers are identities


TUPLES = """
func.func @main(%t: tuple<tensor<3xf64>, tuple<tensor<2xf64>, tensor<2xf64>>>, %w: tensor<3xf64>)
    -> (tensor<f64>, tuple<tensor<3xf64>, tensor<f64>>) {
  %a = "rlx.tuple_get_item"(%t) {index = 0 : i64} : (tuple<tensor<3xf64>, tuple<tensor<2xf64>, tensor<2xf64>>>) -> tensor<3xf64>
  %in = "rlx.tuple_get_item"(%t) {index = 1 : i64} : (tuple<tensor<3xf64>, tuple<tensor<2xf64>, tensor<2xf64>>>) -> tuple<tensor<2xf64>, tensor<2xf64>>
  %b = "rlx.tuple_get_item"(%in) {index = 0 : i64} : (tuple<tensor<2xf64>, tensor<2xf64>>) -> tensor<2xf64>
  %0 = "rlx.multiply"(%a, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = "rlx.sum"(%0) : (tensor<3xf64>) -> tensor<f64>
  %2 = "rlx.exp"(%b) : (tensor<2xf64>) -> tensor<2xf64>
  %3 = "rlx.sum"(%2) : (tensor<2xf64>) -> tensor<f64>
  %p = "rlx.tuple"(%0, %3) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3xf64>, tensor<f64>) -> tuple<tensor<3xf64>, tensor<f64>>
  %q = "rlx.tuple_get_item"(%p) {index = 1 : i64} : (tuple<tensor<3xf64>, tensor<f64>>) -> tensor<f64>
  %4 = "rlx.add"(%1, %q) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %4, %p : tensor<f64>, tuple<tensor<3xf64>, tensor<f64>>
}"""


@run
def tuples():
    a, b, c, w = r(3), r(2), r(2), r(3)
    module = gradient_module(TUPLES)
    outs = interpret(module, "main_adjoint", (a, (b, c)), w)
    loss, packed, gt, gw = outs
    ga, (gb, gc) = gt
    np.testing.assert_allclose(ga, w, rtol=1e-12)
    np.testing.assert_allclose(gb, np.exp(b), rtol=1e-12)
    assert not gc.any() and gc.shape == (2,), "field without gradient is zero-filled"
    np.testing.assert_allclose(gw, a, rtol=1e-12)
    print("nested tuple adjoint ok")
# CHECK-LABEL: TEST: tuples
# CHECK: nested tuple adjoint ok


CALLS = """
func.func private @layer(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>) -> tensor<2x4xf64> {
  %0 = "rlx.matmul"(%x, %w) : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  %1 = "rlx.tanh"(%0) : (tensor<2x4xf64>) -> tensor<2x4xf64>
  return %1 : tensor<2x4xf64>
}
func.func private @square_sum(%x: tensor<2x4xf64>) -> tensor<f64> {
  %0 = "rlx.multiply"(%x, %x) : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %1 = "rlx.sum"(%0) : (tensor<2x4xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}
// A hand-written VJP of @square_sum: (x, cotangent) -> 2 * x * cotangent.
func.func private @square_sum_vjp(%x: tensor<2x4xf64>, %g: tensor<f64>) -> tensor<2x4xf64> {
  %two = arith.constant dense<2.0> : tensor<f64>
  %0 = "rlx.multiply"(%x, %two) : (tensor<2x4xf64>, tensor<f64>) -> tensor<2x4xf64>
  %1 = "rlx.multiply"(%0, %g) : (tensor<2x4xf64>, tensor<f64>) -> tensor<2x4xf64>
  return %1 : tensor<2x4xf64>
}
func.func @main(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>) -> tensor<f64> {
  %0 = func.call @layer(%x, %w) : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  %1 = func.call @square_sum(%0) {grad.vjp = @square_sum_vjp} : (tensor<2x4xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}"""


@run
def calls_and_custom_vjp():
    check_gradient(CALLS, [r(2, 3), r(3, 4)])
    text = gradir.print_module(gradient_module(CALLS))
    adj = text[text.index("@main_adjoint"):]
    assert "call @square_sum_vjp" in adj and "call @layer" not in adj, adj
    print("calls differentiated through; grad.vjp used")
# CHECK-LABEL: TEST: calls_and_custom_vjp
# CHECK: calls differentiated through; grad.vjp used


MULTI = """
func.func @main(%x: tensor<2x3xf64>, %w: tensor<3xf64>) -> (tensor<2x3xf64>, tensor<2xf64>) {
  %0 = "rlx.multiply"(%x, %w) : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  %1 = "rlx.sin"(%0) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %2 = "rlx.sum"(%1) {axis = array<i64: 1>} : (tensor<2x3xf64>) -> tensor<2xf64>
  return %1, %2 : tensor<2x3xf64>, tensor<2xf64>
}"""


def _vjp_reference(x, w, c1, c2):
    """d/d(x,w) of <c1, f1> + <c2, f2> by finite differences of a scalar."""
    text = MULTI.replace(
        "-> (tensor<2x3xf64>, tensor<2xf64>) {",
        "-> tensor<f64> {").replace(
        "  return %1, %2 : tensor<2x3xf64>, tensor<2xf64>",
        """  %c1 = arith.constant dense<%C1%> : tensor<2x3xf64>
  %c2 = arith.constant dense<%C2%> : tensor<2xf64>
  %a = "rlx.multiply"(%1, %c1) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %b = "rlx.multiply"(%2, %c2) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %sa = "rlx.sum"(%a) : (tensor<2x3xf64>) -> tensor<f64>
  %sb = "rlx.sum"(%b) : (tensor<2xf64>) -> tensor<f64>
  %t = "rlx.add"(%sa, %sb) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %t : tensor<f64>""")
    text = text.replace("%C1%", np.array2string(c1, separator=", ", precision=17))
    text = text.replace("%C2%", np.array2string(c2, separator=", ", precision=17))
    return finite_difference(gradir.parse(text), "main", [x, w], [0, 1])


@run
def vjp_mode():
    x, w, c1, c2 = r(2, 3), r(3), r(2, 3), r(2)
    module = gradient_module(MULTI, mode="vjp")
    f1, f2, gx, gw = interpret(module, "main_vjp", x, w, c1, c2)
    ex, ew = _vjp_reference(x, w, c1, c2)
    np.testing.assert_allclose(gx, ex, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, ew, rtol=1e-6, atol=1e-8)
    print("vjp with one cotangent per result ok")
# CHECK-LABEL: TEST: vjp_mode
# CHECK: vjp with one cotangent per result ok


@run
def split_forward_backward():
    x, w, c1, c2 = r(2, 3), r(3), r(2, 3), r(2)
    module = gradient_module(MULTI, split=True)
    fwd = interpret(module, "main_fwd", x, w)
    results, saved = fwd[:2], fwd[2:]
    np.testing.assert_allclose(results[0], np.sin(x * w), rtol=1e-12)
    gx, gw = interpret(module, "main_bwd", *saved, c1, c2)
    ex, ew = _vjp_reference(x, w, c1, c2)
    np.testing.assert_allclose(gx, ex, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, ew, rtol=1e-6, atol=1e-8)
    print("split: fwd saves", len(saved), "values; bwd matches")
# CHECK-LABEL: TEST: split_forward_backward
# CHECK: split: fwd saves {{[0-9]+}} values; bwd matches


# second_derivative: f(x) = sum(sin(x) * x) and @first, the sum of its
# adjoint's gradient output (test/conversion/gpu/emulate_control_flow.py
# reads these two texts too).
SECOND_MAIN = """
func.func @main(%x: tensor<4xf64>) -> tensor<f64> {
  %0 = "rlx.sin"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  %1 = "rlx.multiply"(%0, %x) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %2 = "rlx.sum"(%1) : (tensor<4xf64>) -> tensor<f64>
  return %2 : tensor<f64>
}"""
SECOND_FIRST = """
func.func @first(%x: tensor<4xf64>) -> tensor<f64> {
  %0:2 = func.call @main_adjoint(%x) : (tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>)
  %1 = "rlx.sum"(%0#1) : (tensor<4xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}"""


@run
def second_derivative():
    # f(x) = sum(sin(x) * x); f'(x) = cos(x) x + sin(x); the adjoint's
    # gradient output, summed, differentiated again gives
    # sum_i d/dx_j f'(x_i) = -sin(x) x + 2 cos(x).
    text, first = SECOND_MAIN, SECOND_FIRST
    # The generated adjoint is ordinary input: call it, differentiate again.
    module = gradir.run_pipeline(gradir.parse(text), "builtin.module(rlx-gradient)")
    printed = gradir.print_module(module).rstrip()
    module = gradir.parse(printed[:-1] + first + "\n}")  # @first inside the module
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=first})")
    x = r(4)
    _, h = interpret(module, "first_adjoint", x)
    np.testing.assert_allclose(h, -np.sin(x) * x + 2 * np.cos(x), rtol=1e-10)
    fd = finite_difference(module, "first", [x], [0])[0]
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)
    print("second derivative ok")
# CHECK-LABEL: TEST: second_derivative
# CHECK: second derivative ok


@run
def missing_rule_is_a_located_error():
    from gradir.autodiff import rules
    rules.get_rule("rlx.exp")  # load the table
    saved = rules.VJP_RULES.pop("rlx.exp")
    try:
        module = gradir.parse("""
func.func @main(%x: tensor<3xf64>) -> tensor<f64> {
  %0 = "rlx.exp"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %1 = "rlx.sum"(%0) : (tensor<3xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}""", source_name="norule.mlir")
        try:
            gradir.run_pipeline(module, "builtin.module(rlx-gradient)")
        except Exception as err:  # MLIRError with the diagnostic
            for d in err.error_diagnostics:
                print(d.location, d.message)
    finally:
        rules.VJP_RULES["rlx.exp"] = saved
# CHECK-LABEL: TEST: missing_rule_is_a_located_error
# CHECK: loc("norule.mlir":3:8) no gradient rule for 'rlx.exp' on the path to the target

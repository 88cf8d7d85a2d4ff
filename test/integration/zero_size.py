# RUN: %PYTHON %s | FileCheck %s
# Zero-size tensors (issue 12): sums of nothing are 0, means of nothing NaN (numpy),
# gradients are empty; the max/min of nothing (numpy refuses it) is a located error.
# Every program runs through rlx-gradient, the reference interpreter and the CPU
# compiler, and the two must agree.

import numpy as np

import gradir
from gradir import interpret

rng = np.random.default_rng(0)

X = "tensor<0x3xf32>"
UNARY = {
    "sum": f'"rlx.sum"(%x) : ({X}) -> tensor<f32>',
    "mean": f'"rlx.mean"(%x) : ({X}) -> tensor<f32>',
    "mean_axis0": f'"rlx.mean"(%x) {{axis = array<i64: 0>}} : ({X}) -> tensor<3xf32>',
    "variance": f'"rlx.variance"(%x) : ({X}) -> tensor<f32>',
    "prod_axis0": f'"rlx.prod"(%x) {{axis = array<i64: 0>}} : ({X}) -> tensor<3xf32>',
    "max_axis1": f'"rlx.max"(%x) {{axis = array<i64: 1>}} : ({X}) -> tensor<0xf32>',
    "softmax_axis0": f'"rlx.softmax"(%x) {{axis = array<i64: 0>}} : ({X}) -> {X}',
    "log_softmax": f'"rlx.log_softmax"(%x) : ({X}) -> {X}',
    "cumsum": f'"rlx.cumsum"(%x) {{axis = array<i64: 0>}} : ({X}) -> {X}',
    "exp": f'"rlx.exp"(%x) : ({X}) -> {X}',
    "permute_dims": f'"rlx.permute_dims"(%x) : ({X}) -> tensor<3x0xf32>',
    "flatten": f'"rlx.flatten"(%x) : ({X}) -> tensor<0xf32>',
    "concat": f'"rlx.concat"(%x, %x) : ({X}, {X}) -> {X}',
    "cross_entropy": f'"rlx.cross_entropy_with_logits"(%x, %x) : ({X}, {X}) -> tensor<f32>',
}
# numpy's value of the op's sum (the target below)
EXPECT = {"sum": 0.0, "mean": np.nan, "mean_axis0": np.nan, "variance": np.nan,
          "prod_axis0": 3.0, "cross_entropy": np.nan}


def program(op: str) -> str:
    result = op.rsplit("-> ", 1)[1]
    return f"""func.func @main(%x: {X}) -> tensor<f32> {{
  %0 = {op}
  %1 = "rlx.sum"(%0) : ({result}) -> tensor<f32>
  return %1 : tensor<f32>
}}"""


MATMUL = """func.func @main(%a: tensor<2x0xf32>, %b: tensor<0x3xf32>) -> tensor<f32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x0xf32>, tensor<0x3xf32>) -> tensor<2x3xf32>
  %1 = "rlx.sum"(%0) : (tensor<2x3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}"""


def same(a, b) -> bool:
    return a.shape == b.shape and np.allclose(a, b, equal_nan=True)


def check(name: str, text: str, args, expect=None):
    module = gradir.parse(text)
    gradir.run_pipeline(module, "builtin.module(rlx-gradient)")
    ref = interpret(module, "main_adjoint", *args)
    got = gradir.compile(module)["main_adjoint"](*args)
    assert all(same(np.asarray(r), np.asarray(g)) for r, g in zip(ref, got)), (name, ref, got)
    for arg, grad in zip(args, ref[1:]):
        assert grad.shape == arg.shape and grad.size == 0, (name, grad)
    if expect is not None:
        assert same(np.asarray(ref[0]), np.asarray(expect, np.float32)), (name, ref[0])
    print(f"ok {name}: {float(ref[0])}")


for name, op in UNARY.items():
    check(name, program(op), [np.zeros((0, 3), np.float32)], EXPECT.get(name))
check("matmul_k0", MATMUL, [np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)], 0.0)
# CHECK: ok sum: 0.0
# CHECK: ok mean: nan
# CHECK: ok mean_axis0: nan
# CHECK: ok variance: nan
# CHECK: ok prod_axis0: 3.0
# CHECK: ok max_axis1: 0.0
# CHECK: ok softmax_axis0: 0.0
# CHECK: ok cross_entropy: nan
# CHECK: ok matmul_k0: 0.0

# The max of nothing: a located error, never an internal one.
for op in ("max", "min"):
    text = program(f'"rlx.{op}"(%x) {{axis = array<i64: 0>}} : ({X}) -> tensor<3xf32>')
    try:
        gradir.run_pipeline(gradir.parse(text, source_name="empty.mlir"),
                            "builtin.module(rlx-verify)")
        print("accepted?!")
    except Exception as err:           # MLIRError with the diagnostic
        print(gradir._compat.format_mlir_error(err) if hasattr(err, "error_diagnostics")
              else f"{type(err).__name__}: {err}")
# CHECK: empty.mlir:2:8: error: 'rlx.max' op reduces axis 0 of size 0: the max or min of nothing has no value
# CHECK: empty.mlir:2:8: error: 'rlx.min' op reduces axis 0 of size 0

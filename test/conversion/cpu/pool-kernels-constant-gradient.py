# RUN: %PYTHON %s | FileCheck %s
# The gradient of a plain sum (or mean) of a 2x2 pool's output is a constant:
# canonicalization folds it into the marked pool-backward generic, which then
# reads only the input.  rlx-pool-kernels leaves that form to its loops (it
# refused it: "must read the gradient and the input four times", so
# gradir.compile failed on the adjoint of sum(max_pool2d(x))).  Compiled
# (default options: kernels on) against the interpreter, and exported.

import os
import tempfile

import numpy as np

import gradir

POOLS = {
    "max-sum": ("rlx.max_pool2d", "rlx.sum"),
    "max-mean": ("rlx.max_pool2d", "rlx.mean"),
    "avg-sum": ("rlx.avg_pool2d", "rlx.sum"),
}
TEXT = """func.func @main(%x: tensor<2x3x8x8xf32>) -> tensor<f32> {
  %p = "POOL"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %s = "REDUCE"(%p) : (tensor<2x3x4x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""

x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
for name, (pool, reduce) in POOLS.items():
    m = gradir.parse(TEXT.replace("POOL", pool).replace("REDUCE", reduce))
    gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
    ref = gradir.interpret(m, "main_adjoint", x)
    exe = gradir.compile(m)
    got = exe["main_adjoint"](x)
    with tempfile.TemporaryDirectory() as d:
        exe.export_library(os.path.join(d, "m.so"))
        loaded = gradir.runtime.load(os.path.join(d, "m.so"))["main_adjoint"](x)
    print(f"{name}: gradient equal={np.array_equal(got[1], ref[1])} "
          f"exported equal={np.array_equal(loaded[1], got[1])} "
          f"loss close={np.allclose(got[0], ref[0], rtol=1e-5)}")
# CHECK: max-sum: gradient equal=True exported equal=True loss close=True
# CHECK: max-mean: gradient equal=True exported equal=True loss close=True
# CHECK: avg-sum: gradient equal=True exported equal=True loss close=True

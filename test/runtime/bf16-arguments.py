# RUN: %PYTHON %s | FileCheck %s
# bf16 arguments and results cross the numpy boundary of a compiled function
# as ml_dtypes.bfloat16 arrays (numpy has no bf16): gradir.compile and
# gradir.runtime.load take them and return them with the exact dtype, as for
# the other types (runtime/abi.py, BOUNDARY_DTYPES). They refused a bf16
# program ("has no numpy equivalent"), so a model imported in bf16 could not
# be called. The interpreter takes bf16 tensors as float32 arrays of bf16
# values: the same numbers, bit for bit. Another dtype is an ArgumentError
# naming the conversion.

import os
import tempfile

import ml_dtypes
import numpy as np

import gradir
from gradir.runtime import ArgumentError

PROGRAM = """
func.func @main(%x: tensor<5x8xbf16>, %w: tensor<8x4xbf16>, %b: tensor<4xf32>)
    -> (tensor<5x4xbf16>, tensor<bf16>, tensor<5x4xf32>) {
  %m = "rlx.matmul"(%x, %w) : (tensor<5x8xbf16>, tensor<8x4xbf16>) -> tensor<5x4xbf16>
  %t = "rlx.tanh"(%m) : (tensor<5x4xbf16>) -> tensor<5x4xbf16>
  %s = "rlx.sum"(%t) : (tensor<5x4xbf16>) -> tensor<bf16>
  %f = "rlx.astype"(%t) {dtype = "f32"} : (tensor<5x4xbf16>) -> tensor<5x4xf32>
  %y = "rlx.add"(%f, %b) : (tensor<5x4xf32>, tensor<4xf32>) -> tensor<5x4xf32>
  return %t, %s, %y : tensor<5x4xbf16>, tensor<bf16>, tensor<5x4xf32>
}
"""

rng = np.random.default_rng(0)
x = rng.normal(size=(5, 8)).astype(ml_dtypes.bfloat16)
w = rng.normal(size=(8, 4)).astype(ml_dtypes.bfloat16)
b = rng.normal(size=(4,)).astype(np.float32)
module = gradir.parse(PROGRAM)
want = gradir.interpret(module, "main", x.astype(np.float32), w.astype(np.float32), b)
exe = gradir.compile(module, cache=False)
print(exe["main"])
# CHECK: <gradir function @main(bfloat16 array of shape (5, 8), bfloat16 array of shape (8, 4), float32 array of shape (4,))>


def same(got):
    for g, v, dtype in zip(got, want, ("bfloat16", "bfloat16", "float32")):
        assert g.dtype.name == dtype and g.shape == v.shape, (g.dtype, g.shape)
        assert np.array_equal(g.astype(np.float32), v), (g, v)
    return [g.dtype.name for g in got]


print("jit:", same(exe["main"](x, w, b)))
# CHECK-NEXT: jit: ['bfloat16', 'bfloat16', 'float32']
with tempfile.TemporaryDirectory() as tmp:
    lib = gradir.runtime.load(exe.export_library(os.path.join(tmp, "bf16.so")))
    print("library:", same(lib["main"](x, w, b)))
# CHECK-NEXT: library: ['bfloat16', 'bfloat16', 'float32']

for bad in (x.astype(np.float32), x.astype(np.float16), x.view(np.uint16)):
    try:
        exe["main"](bad, w, b)
    except ArgumentError as err:
        print(err)
# CHECK-NEXT: @main: argument 0 must be a bfloat16 array of shape (5, 8), got a float32 array (convert it with .astype(ml_dtypes.bfloat16))
# CHECK-NEXT: @main: argument 0 must be a bfloat16 array of shape (5, 8), got a float16 array (convert it with .astype(ml_dtypes.bfloat16))
# CHECK-NEXT: @main: argument 0 must be a bfloat16 array of shape (5, 8), got a uint16 array (convert it with .astype(ml_dtypes.bfloat16))

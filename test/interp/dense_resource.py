# RUN: %PYTHON %s | FileCheck %s
# dense_resource constants (the blob form of large weights) in the
# interpreter, against the compiled code: f32, f64 and i64 blobs (the
# interpreter refused them; it reads the module's resource section).

import numpy as np

import gradir

f32 = np.array([1.0, 2.0, 3.0], np.float32)
f64 = np.array([[0.5, -1.5], [2.25, 4.0]])
i64 = np.array([2, 0, 1], np.int64)


def blob(a):
    return "0x" + (b"\x04\x00\x00\x00" if a.itemsize < 8 else b"\x08\x00\x00\x00").hex() \
        + a.astype(a.dtype.newbyteorder("<")).tobytes().hex()


TEXT = f"""
func.func @main(%x: tensor<3xf32>, %y: tensor<2x2xf64>) -> (tensor<3xf32>, tensor<2x2xf64>, tensor<3xf32>) {{
  %a = arith.constant dense_resource<wa> : tensor<3xf32>
  %b = arith.constant dense_resource<wb> : tensor<2x2xf64>
  %i = arith.constant dense_resource<wi> : tensor<3xi64>
  %0 = "rlx.multiply"(%x, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.matmul"(%y, %b) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %2 = "rlx.take"(%x, %i) {{axis = array<i64: 0>}} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<2x2xf64>, tensor<3xf32>
}}
{{-#
  dialect_resources: {{ builtin: {{ wa: "{blob(f32)}", wb: "{blob(f64)}", wi: "{blob(i64)}" }} }}
#-}}
"""

m = gradir.parse(TEXT)
x = np.array([0.5, -2.0, 4.0], np.float32)
y = np.array([[1.0, 2.0], [3.0, 4.0]])
want = (x * f32, y @ f64, x[i64])
got_i = gradir.interpret(m, "main", x, y)
got_c = gradir.compile(m, cache=False)["main"](x, y)
print("interpreter:", all(np.array_equal(g, w) for g, w in zip(got_i, want)))
print("compiled:", all(np.allclose(g, w) for g, w in zip(got_c, want)))
# CHECK: interpreter: True
# CHECK: compiled: True

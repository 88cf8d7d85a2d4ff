# RUN: %PYTHON %s | FileCheck %s
# A value larger than the machine's memory is an InterpreterError at its op,
# before numpy runs: summing a broadcast of 10^15 elements (a numpy view, no
# memory) ran for days, and rlx.zeros of 2^63 - 1 elements was a numpy error.

import numpy as np

import gradir
from gradir.interp import InterpreterError

T = """
func.func @broadcast(%x: tensor<f32>) -> tensor<f32> {
  %0 = "rlx.broadcast_to"(%x) : (tensor<f32>) -> tensor<100000x100000x100000xf32>
  %1 = "rlx.sum"(%0) : (tensor<100000x100000x100000xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @zeros() -> tensor<f64> {
  %0 = "rlx.zeros"() : () -> tensor<9223372036854775807xf64>
  %1 = "rlx.sum"(%0) : (tensor<9223372036854775807xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}
func.func @small(%x: tensor<f32>) -> tensor<f32> {
  %0 = "rlx.broadcast_to"(%x) : (tensor<f32>) -> tensor<1000x1000xf32>
  %1 = "rlx.sum"(%0) : (tensor<1000x1000xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
"""
module = gradir.parse(T, source_name="huge.mlir")
for name, args in (("broadcast", (np.array(1, np.float32),)), ("zeros", ())):
    try:
        gradir.interpret(module, name, *args)
        print(name, "ran")
    except InterpreterError as err:
        print(name, err)
# CHECK: broadcast huge.mlir:3:8: 'rlx.broadcast_to': a result of type tensor<100000x100000x100000xf32> needs 3725290.3 GiB, more than this machine's memory
# CHECK: zeros huge.mlir:8:8: 'rlx.zeros': a result of type tensor<9223372036854775807xf64> needs {{[0-9.]+}} GiB, more than this machine's memory
print("small", gradir.interpret(module, "small", np.array(1, np.float32))[0])
# CHECK: small 1e+06

# RUN: %PYTHON %s | FileCheck %s
# gradir.conversion.gpu.launches counts the kernels one call launches from
# the kernels stage alone: constant scf.for loops multiply their bodies,
# func.call follows into other host functions, scf.if counts both branches
# (an upper bound, exact=False), copies and memsets apart; against the SIMT
# emulator's count of the launches a call really ran.

import os
import sys

import numpy as np

import gradir
from gradir.conversion.gpu.launches import count_lowered, launch_breakdown, launches_per_call
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "autodiff", "scf",
                                "Inputs"))
from programs import ALL, args_for, rnn  # noqa: E402

rng = np.random.default_rng(0)
gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)


def check(name, text):
    text = text.replace("f64", "f32")
    args = [a.astype(np.float32) for a in args_for(text, rng)]
    for fn, module in (("main", gradir.parse(text)), ("main_adjoint", gradient_module(text))):
        exe = Emulated(module)
        exe[fn](*args)
        emulated = exe.emulator.last_launches
        with exe.context:
            counted = launch_breakdown(exe.lowered.operation, fn)
        assert counted["launches"] == launches_per_call(exe.lowered.operation, fn)
        print(f"{name} {fn}: counted {counted['launches']} emulated {emulated} "
              f"exact {counted['exact']} memcpy {counted['memcpy']}")


# A loop of 7 trips (2 kernels a trip: a map and a reduction):
# the count is exact and equals the emulated one.
check("rnn7", rnn(7))
# CHECK: rnn7 main: counted [[N:[0-9]+]] emulated [[N]] exact True memcpy {{[0-9]+}}
# CHECK: rnn7 main_adjoint: counted [[M:[0-9]+]] emulated [[M]] exact True
check("rnn3", rnn(3))
# CHECK: rnn3 main: counted [[N:[0-9]+]] emulated [[N]] exact True
check("nested_call", ALL["nested_call"])
# CHECK: nested_call main: counted [[N:[0-9]+]] emulated [[N]] exact True
check("if_in_loop", ALL["if_in_loop"])
# CHECK: if_in_loop main: counted {{[0-9]+}} emulated {{[0-9]+}} exact False

# The loop multiplies: 7 trips vs 3 trips of the same body.
seven = count_lowered(gradir.parse(rnn(7).replace("f64", "f32")), ["main"])["main"]
three = count_lowered(gradir.parse(rnn(3).replace("f64", "f32")), ["main"])["main"]
print("per trip:", (seven["launches"] - three["launches"]) / 4,
      "kinds:", sorted(seven["kinds"]))
# CHECK: per trip: {{[1-9][0-9]*}}.0 kinds: [{{.*}}]

# Hand-written kernels stage: @main calls @step 5 times in a loop, @step
# launches two kernels (one in a loop of 3 trips) and memsets; the scf.if
# is counted as taken; non-constant bounds count once and are not exact.
KERNELS = """
func.func @step(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f32
  gpu.memset %a, %z : memref<4xf32>, f32
  scf.for %i = %c0 to %c3 step %c1 {
    gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
               threads(%t0, %t1, %t2) in (%s0 = %c1, %s1 = %c1, %s2 = %c1)
               module(@step_kernels) function(@step_gemm_0) {
      gpu.terminator
    }
  }
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%s0 = %c1, %s1 = %c1, %s2 = %c1)
             module(@step_kernels) function(@step_reduce_1) {
    gpu.terminator
  }
  return
}
func.func @main(%a: memref<4xf32>, %h: memref<4xf32>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c10 step %c2 {
    func.call @step(%a) : (memref<4xf32>) -> ()
  }
  gpu.memcpy %h, %a : memref<4xf32>, memref<4xf32>
  scf.if %p {
    gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
               threads(%t0, %t1, %t2) in (%s0 = %c1, %s1 = %c1, %s2 = %c1) {
      gpu.terminator
    }
  }
  return
}
func.func @dynamic(%a: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    func.call @step(%a) : (memref<4xf32>) -> ()
  }
  return
}
"""
m = gradir.parse(KERNELS)
with m.context:
    for fn in ("step", "main", "dynamic"):
        print(fn, launch_breakdown(m.operation, fn))
    try:
        launch_breakdown(m.operation, "nope")
    except KeyError as err:
        print("error:", err)
# CHECK: step {'launches': 4, 'kinds': {'gemm': 3, 'reduce': 1}, 'memcpy': 0, 'memset': 1, 'exact': True}
# CHECK-NEXT: main {'launches': 21, 'kinds': {'gemm': 15, 'kernel': 1, 'reduce': 5}, 'memcpy': 1, 'memset': 5, 'exact': False}
# CHECK-NEXT: dynamic {'launches': 4, 'kinds': {'gemm': 3, 'reduce': 1}, 'memcpy': 0, 'memset': 1, 'exact': False}
# CHECK-NEXT: error: 'no host function @nope (functions: dynamic, main, step)'

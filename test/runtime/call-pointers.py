# RUN: %PYTHON %s | FileCheck %s
# Function.call_pointers: the compiled code run on raw data addresses (the
# inputs', then the outputs' to write), as the PyTorch drop-in module calls
# it with its tensors' data_ptr().  The results are bitwise those of a call
# with numpy arrays, in the JIT and in a function called from several threads
# at once (each call takes a frame of its own); a wrong number of addresses
# is refused, naming the function and what it takes.

import threading

import numpy as np

import gradir
from gradir.runtime import ArgumentError

SRC = """
func.func @main(%x: tensor<64x48xf32>, %y: tensor<48x32xf32>, %b: tensor<32xf32>)
    -> (tensor<64x32xf32>, tensor<f32>) {
  %m = "rlx.matmul"(%x, %y) : (tensor<64x48xf32>, tensor<48x32xf32>) -> tensor<64x32xf32>
  %h = "rlx.add"(%m, %b) : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %t = "rlx.tanh"(%h) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %s = "rlx.sum"(%t) : (tensor<64x32xf32>) -> tensor<f32>
  return %t, %s : tensor<64x32xf32>, tensor<f32>
}
"""

f = gradir.compile(gradir.parse(SRC))["main"]


def inputs(seed):
    r = np.random.default_rng(seed)
    return (r.standard_normal((64, 48)).astype(np.float32),
            r.standard_normal((48, 32)).astype(np.float32),
            r.standard_normal(32).astype(np.float32))


def by_pointers(args):
    outs = [np.empty((64, 32), np.float32), np.empty((), np.float32)]
    f.call_pointers([a.ctypes.data for a in (*args, *outs)])
    return outs


args = inputs(1)
want = f(*args)
got = by_pointers(args)
print("same as a call:", all(np.array_equal(a, b) for a, b in zip(got, want)))
# CHECK: same as a call: True

cases = [inputs(10 + i) for i in range(4)]
serial = [f(*c) for c in cases]
bad = []


def work(i):
    for _ in range(50):
        t, s = by_pointers(cases[i])
        if not (np.array_equal(t, serial[i][0]) and np.array_equal(s, serial[i][1])):
            bad.append(i)


threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(f"4 threads: {'same as serial' if not bad else f'{len(bad)} wrong'}")
# CHECK-NEXT: 4 threads: same as serial

try:
    f.call_pointers([a.ctypes.data for a in args])
except ArgumentError as err:
    print("refused:", err)
# CHECK-NEXT: refused: @main takes 5 data pointers (3 inputs, 2 outputs), got 3

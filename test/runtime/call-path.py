# RUN: %PYTHON %s %t | FileCheck %s
# The call path (issue 14: a call of a small compiled function took 14 us,
# JAX's dispatch 11): plain arguments (C-contiguous arrays of the exact
# dtype and shape) skip the general checks, and the descriptors live in
# reused frames, one per concurrent call.  Whatever path an argument takes,
# the results are the same: read-only, non-contiguous and subclassed
# arrays, calls from several threads at once (ctypes releases the GIL), in
# the JIT and in an exported library.

import os
import sys
import threading

import numpy as np

import gradir
from gradir.runtime import ArgumentError, load

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

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
module = gradir.parse(SRC)
exe = gradir.compile(module)
rng = np.random.default_rng(0)


def inputs(seed):
    r = np.random.default_rng(seed)
    return (r.standard_normal((64, 48)).astype(np.float32),
            r.standard_normal((48, 32)).astype(np.float32),
            r.standard_normal(32).astype(np.float32))


def reference(x, y, b):
    t, s = gradir.interpret(module, "main", x, y, b)
    return np.asarray(t), np.asarray(s)


def check(f, args, want, what):
    t, s = f(*args)
    ok = (np.allclose(t, want[0], rtol=1e-5, atol=1e-5)
          and np.allclose(s, want[1], rtol=1e-4, atol=1e-4))
    print(f"{what}: {'ok' if ok else 'WRONG'}")
    return t, s


f = exe["main"]
x, y, b = inputs(1)
want = reference(x, y, b)
t1, s1 = check(f, (x, y, b), want, "plain")
t2, _ = check(f, (x, y, b), want, "again")
# every call returns new arrays (nothing from an earlier call is reused)
print("fresh results:", t1 is not t2 and not np.shares_memory(t1, t2))
# CHECK: plain: ok
# CHECK-NEXT: again: ok
# CHECK-NEXT: fresh results: True

ro = [a.copy() for a in (x, y, b)]
for a in ro:
    a.flags.writeable = False
check(f, ro, want, "read-only")
wide = np.zeros((64, 96), np.float32)
wide[:, ::2] = x
check(f, (wide[:, ::2], y, b), want, "strided")
check(f, (np.asfortranarray(x), y, b), want, "fortran")
check(f, (x.tolist(), y, b), want, "list")
# CHECK-NEXT: read-only: ok
# CHECK-NEXT: strided: ok
# CHECK-NEXT: fortran: ok
# CHECK-NEXT: list: ok


class Sub(np.ndarray):
    pass


check(f, (x.view(Sub), y, b), want, "subclass")
# CHECK-NEXT: subclass: ok
for bad in [(np.ma.masked_array(x), y, b), (x, y), (x, y, b.astype(np.float64)),
            (x, y.T.copy(), b)]:
    try:
        f(*bad)
    except ArgumentError as err:
        print("refused:", str(err).split(", got")[0])
# CHECK-NEXT: refused: @main: argument 0 must be a float32 array of shape (64, 48)
# CHECK-NEXT: refused: @main takes 3 arguments
# CHECK-NEXT: refused: @main: argument 2 must be a float32 array of shape (32,)
# CHECK-NEXT: refused: @main: argument 1 must be a float32 array of shape (48, 32)


def threaded(fn, what, workers=4, rounds=50):
    """``workers`` threads each call ``fn`` ``rounds`` times on inputs of
    their own; every result must be the serial result of its inputs."""
    cases = [inputs(10 + i) for i in range(workers)]
    serial = [fn(*c) for c in cases]
    bad = []

    def work(i):
        for _ in range(rounds):
            t, s = fn(*cases[i])
            if not (np.array_equal(t, serial[i][0]) and np.array_equal(s, serial[i][1])):
                bad.append(i)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    print(f"{what}: {workers} threads, {'same as serial' if not bad else f'{len(bad)} wrong'}")


threaded(f, "jit")
# CHECK-NEXT: jit: 4 threads, same as serial

lib_path = os.path.join(out_dir, "call_path.so")
exe.export_library(lib_path)
lib = load(lib_path)
check(lib["main"], (x, y, b), want, "library")
check(lib["main"], ro, want, "library read-only")
threaded(lib["main"], "library")
# CHECK-NEXT: library: ok
# CHECK-NEXT: library read-only: ok
# CHECK-NEXT: library: 4 threads, same as serial

# RUN: %PYTHON %s | FileCheck %s
# gradir.runtime.heap: after gradir.compile, a compiled function whose
# intermediates are megabytes large does not fault their pages in again on
# every call (glibc's mmap/trim thresholds raised); GRADIR_KEEP_HEAP=0 leaves
# the heap alone.

import os
import resource
import subprocess
import sys

import numpy as np

import gradir
from gradir.runtime import heap

N = 9 << 20          # 36 MiB per f32 intermediate: above the 32 MiB where glibc's own
                     # mmap threshold stops adapting, so mmap-ed (and faulted in) per call
T = f"tensor<{N}xf32>"
SRC = f"""
func.func @main(%x: {T}, %y: {T}) -> tensor<f32> {{
  %a = "rlx.exp"(%x) : ({T}) -> {T}
  %b = "rlx.multiply"(%a, %y) : ({T}, {T}) -> {T}
  %c = "rlx.add"(%b, %x) : ({T}, {T}) -> {T}
  %d = "rlx.multiply"(%c, %a) : ({T}, {T}) -> {T}
  %s = "rlx.sum"(%d) : ({T}) -> tensor<f32>
  return %s : tensor<f32>
}}
"""


def run(fn):
    print(f"TEST: {fn.__name__}")
    fn()
    return fn


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@run
def test_no_faults_per_call():
    m = gradir.parse(SRC)
    # opt_level 0: no fusion, so the function allocates its intermediates.
    f = gradir.compile(m, opt_level=0)["main"]
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, N).astype(np.float32)
    y = rng.uniform(-1, 1, N).astype(np.float32)
    want = gradir.interpret(m, "main", x, y)[0]
    for _ in range(3):
        got = f(x, y)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    before = minor_faults()
    for _ in range(10):
        f(x, y)
    per_call = (minor_faults() - before) / 10
    pages = N * 4 // 4096
    print("thresholds set:", heap.keep_freed_memory())
    # Without the thresholds each call faults in its intermediates (9216
    # pages each); with them, (almost) none.
    print("faults per call below one intermediate's pages:", per_call < pages // 4)


# CHECK-LABEL: TEST: test_no_faults_per_call
# CHECK: thresholds set: True
# CHECK: faults per call below one intermediate's pages: True


@run
def test_opt_out():
    code = ("import os; os.environ['GRADIR_KEEP_HEAP'] = '0'; "
            "from gradir.runtime import heap; print('opt-out set:', heap.keep_freed_memory())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ), check=True).stdout
    print(out.strip())


# CHECK-LABEL: TEST: test_opt_out
# CHECK: opt-out set: False

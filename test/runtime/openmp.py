# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# gradir starts LLVM's OpenMP runtime with KMP_BLOCKTIME=0 (OMP_DYNAMIC left at libomp's false)
# (gradir/runtime/openmp.py) in the JIT and in a loaded library (a process
# that only loads it, no JIT), each unless the environment sets it; each
# call from Python then runs with the block time gradir chooses from the
# machine's load (0, or HOT_BLOCKTIME_MS while other processes leave the
# cores idle), unless the environment sets KMP_BLOCKTIME.  Checked
# through libomp's own query functions after a multi-threaded function ran.
# A process that loads an exported library (its libomp.so copy) and JITs, in
# either order, runs one libomp (two would abort: "OMP: Error #15").

import os
import subprocess
import sys

import gradir

out = sys.argv[1]
module = gradir.parse("""
func.func @main(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %e = "rlx.matmul"(%x, %x) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %e : tensor<256x256xf32>
}""")
with open(os.path.join(out, "m.mlir"), "w") as f:
    f.write(gradir.print_module(module))
gradir.compile(module, threads=2).export_library(os.path.join(out, "m.so"))

CHILD = r"""
import ctypes, os, sys
import numpy as np
import gradir
import gradir.runtime.openmp
out, how = sys.argv[1], sys.argv[2]
def jit():
    return gradir.compile(gradir.parse(open(os.path.join(out, "m.mlir")).read()), threads=2)
def load():
    return gradir.runtime.load(os.path.join(out, "m.so"))
exes = {"jit": [jit], "load": [load], "load+jit": [load, jit], "jit+load": [jit, load]}[how]
ok = all(np.allclose(make()["main"](np.ones((256, 256), np.float32)), 256) for make in exes)
omp = ctypes.CDLL("libomp.so", mode=os.RTLD_NOLOAD)   # the process's libomp (its soname)
# the block time the last call ran with: the one gradir chose for it (0 or
# HOT_BLOCKTIME_MS, from the machine's load), or the environment's
bt, chosen = omp.kmp_get_blocktime(), gradir.runtime.openmp.blocktime_ms()
print(how, "blocktime", "adaptive" if chosen is not None and bt == chosen else bt,
      "dynamic", omp.omp_get_dynamic(), "ok", ok)
"""

for env in ({}, {"KMP_BLOCKTIME": "150", "OMP_DYNAMIC": "true"}):
    for how in ("jit", "load", "load+jit", "jit+load"):
        full = {k: v for k, v in os.environ.items() if k not in ("KMP_BLOCKTIME", "OMP_DYNAMIC")}
        full.update(env)
        proc = subprocess.run([sys.executable, "-c", CHILD, out, how], env=full,
                              capture_output=True, text=True)
        print(" ".join(f"{k}={v}" for k, v in env.items()) or "defaults", proc.stdout.strip(),
              proc.stderr.strip()[-500:])
# CHECK: defaults jit blocktime adaptive dynamic 0 ok True
# CHECK-NEXT: defaults load blocktime adaptive dynamic 0 ok True
# CHECK-NEXT: defaults load+jit blocktime adaptive dynamic 0 ok True
# CHECK-NEXT: defaults jit+load blocktime adaptive dynamic 0 ok True
# CHECK-NEXT: KMP_BLOCKTIME=150 OMP_DYNAMIC=true jit blocktime 150 dynamic 1 ok True
# CHECK-NEXT: KMP_BLOCKTIME=150 OMP_DYNAMIC=true load blocktime 150 dynamic 1 ok True
# CHECK-NEXT: KMP_BLOCKTIME=150 OMP_DYNAMIC=true load+jit blocktime 150 dynamic 1 ok True
# CHECK-NEXT: KMP_BLOCKTIME=150 OMP_DYNAMIC=true jit+load blocktime 150 dynamic 1 ok True


# The choice itself, from samples (monotonic seconds, machine busy CPU
# seconds, this process's CPU seconds): workers spin only while the other
# processes used less than IDLE_OTHERS of a core since the last sample.
from gradir.runtime import openmp


class FakeLib:
    def __init__(self):
        self.kmp_set_blocktime = lambda ms: None


a = openmp._Adaptive(FakeLib())
print("first", a.sample(0.0, 100.0, 1.0))
print("idle", a.sample(0.1, 100.19, 1.19))          # we used 0.19 s of 0.1 s x 2 cores
print("busy once", a.sample(0.2, 100.39, 1.29))     # others used 0.1 s in 0.1 s: 1 core
print("light", a.sample(0.3, 100.50, 1.39))         # others 0.01 s in 0.1 s: 0.1 core
print("busy twice", a.sample(0.4, 100.70, 1.49), a.sample(0.5, 100.90, 1.59))
print("no /proc/stat", a.sample(0.6, None, 1.69), a.sample(0.7, 101.1, 1.79))
print("again", a.sample(0.8, 101.2, 1.89))
# CHECK-NEXT: first False
# CHECK-NEXT: idle True
# CHECK-NEXT: busy once True
# CHECK-NEXT: light True
# CHECK-NEXT: busy twice True False
# CHECK-NEXT: no /proc/stat False False
# CHECK-NEXT: again True

# update() counts this process's finished children (a compile's opt/llc) as
# its own: 0.3 s of them between two samples is no other process.
import os
import posix
clock = iter([10.0, 10.2])
times = iter([posix.times_result((1.0, 0.0, 0.0, 0.0, 0.0)),
              posix.times_result((1.0, 0.0, 0.3, 0.0, 0.0))])
busy = iter([50.0, 50.3])
real_monotonic, real_times = openmp.time.monotonic, os.times
openmp.time.monotonic, os.times = (lambda: next(clock)), (lambda: next(times))
b = openmp._Adaptive(FakeLib())
b._busy = lambda: next(busy)
print("children:", b.update(), b.update())
openmp.time.monotonic, os.times = real_monotonic, real_times
# CHECK-NEXT: children: 0 1

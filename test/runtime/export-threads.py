# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# A multi-threaded library (gradir.compile(..., threads=N)) is exported with
# LLVM's OpenMP runtime (libomp.so) copied beside it and found through its
# RUNPATH $ORIGIN; a fresh Python process that cannot import mlir loads it
# (from a directory it was copied to, too) and gets the JIT's results, bitwise,
# run after run.  A single-threaded library needs no runtime.

import os
import shutil
import subprocess
import sys

import numpy as np

import gradir

out = sys.argv[1]
module = gradir.parse("""
func.func @main(%x: tensor<256x784xf32>, %labels: tensor<256xi64>, %w1: tensor<784x512xf32>,
                %w2: tensor<512x10xf32>) -> tensor<f32> {
  %h = "rlx.matmul"(%x, %w1) : (tensor<256x784xf32>, tensor<784x512xf32>) -> tensor<256x512xf32>
  %r = "rlx.tanh"(%h) : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %o = "rlx.matmul"(%r, %w2) : (tensor<256x512xf32>, tensor<512x10xf32>) -> tensor<256x10xf32>
  %lp = "rlx.log_softmax"(%o) : (tensor<256x10xf32>) -> tensor<256x10xf32>
  %loss = "rlx.nll_loss"(%lp, %labels) : (tensor<256x10xf32>, tensor<256xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}""")
gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main wrt=2,3})")
rng = np.random.default_rng(0)
args = [rng.standard_normal((256, 784)).astype(np.float32),
        rng.integers(0, 10, 256).astype(np.int64),
        (rng.standard_normal((784, 512)) * 0.05).astype(np.float32),
        (rng.standard_normal((512, 10)) * 0.05).astype(np.float32)]
for i, a in enumerate(args):
    np.save(os.path.join(out, f"arg{i}.npy"), a)

for threads in (1, 2, 3):
    exe = gradir.compile(module, threads=threads)
    exe.export_library(os.path.join(out, f"model{threads}.so"))
    np.savez(os.path.join(out, f"jit{threads}.npz"), *exe["main_adjoint"](*args))
print("files:", sorted(f for f in os.listdir(out) if f.endswith(".so")))
# (and the matmul kernel library the matmuls call, shipped the same way;
# multi-threaded code calls the kernels' drivers, in their own library)
# CHECK: files: ['libgradir_kernels_{{[0-9a-f]+_[0-9a-f]+}}.so', 'libgradir_kernels_{{[0-9a-f]+_[0-9a-f]+}}_omp.so', 'libomp.so', 'model1.so', 'model2.so', 'model3.so']


def dynamic(path):
    text = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    needed = sorted(l.split("[")[1].rstrip("]") for l in text.splitlines() if "NEEDED" in l)
    runpath = [l.split("[")[1].rstrip("]") for l in text.splitlines() if "RUNPATH" in l]
    return needed, runpath


for threads in (1, 2):
    print(f"model{threads}.so needs:", *dynamic(os.path.join(out, f"model{threads}.so")))
drivers = [f for f in os.listdir(out) if f.endswith("_omp.so")][0]
print("drivers need:", *dynamic(os.path.join(out, drivers)))
print("libomp.so needs:", dynamic(os.path.join(out, "libomp.so"))[0])
# CHECK-NEXT: model1.so needs: ['libc.so.6', 'libgradir_kernels_{{[0-9a-f]+_[0-9a-f]+}}.so'] ['$ORIGIN']
# (at 2 threads every matmul here calls the drivers, which need the kernels)
# CHECK-NEXT: model2.so needs: ['libc.so.6', 'libgradir_kernels_{{[0-9a-f]+_[0-9a-f]+}}_omp.so', 'libomp.so'] ['$ORIGIN']
# CHECK-NEXT: drivers need: [{{.*}}'libgradir_kernels_{{[0-9a-f]+_[0-9a-f]+}}.so', 'libomp.so'] ['$ORIGIN']
# CHECK-NEXT: libomp.so needs: [{{.*}}'libc.so.6'{{.*}}]

# Shipped: the library and the runtime beside it, copied elsewhere.
shipped = os.path.join(out, "shipped")
os.makedirs(shipped)
for name in ("model2.so", "libomp.so", *(f for f in os.listdir(out)
                                          if f.startswith("libgradir_kernels_"))):
    shutil.copy2(os.path.join(out, name), shipped)

CHILD = r"""
import sys, numpy as np
class NoMlir:
    def find_spec(self, name, path=None, target=None):
        if name == "mlir" or name.startswith("mlir."):
            raise ImportError("mlir is not available here")
sys.meta_path.insert(0, NoMlir())
sys.path.insert(0, sys.argv[2])
import gradir.runtime as rt
out = sys.argv[1]
args = [np.load(f"{out}/arg{i}.npy") for i in range(4)]
for where, threads in (("", 1), ("", 2), ("", 3), ("shipped/", 2)):
    lib = rt.load(f"{out}/{where}model{threads}.so")
    jit = np.load(f"{out}/jit{threads}.npz")
    runs = [lib["main_adjoint"](*args) for _ in range(5)]
    same_as_jit = all(np.array_equal(g, jit[f"arr_{i}"]) for i, g in enumerate(runs[0]))
    repeat = all(np.array_equal(a, b) for r in runs[1:] for a, b in zip(runs[0], r))
    print(f"{where}model{threads}.so: same as the JIT: {same_as_jit}, bitwise repeatable: {repeat}")
print("mlir imported:", any(m == "mlir" or m.startswith("mlir.") for m in sys.modules))
"""
src_dir = os.path.join(os.path.dirname(gradir.__file__), "..")
proc = subprocess.run([sys.executable, "-c", CHILD, out, os.path.abspath(src_dir)],
                      capture_output=True, text=True)
print(proc.stdout, proc.stderr, end="")
# CHECK-NEXT: model1.so: same as the JIT: True, bitwise repeatable: True
# CHECK-NEXT: model2.so: same as the JIT: True, bitwise repeatable: True
# CHECK-NEXT: model3.so: same as the JIT: True, bitwise repeatable: True
# CHECK-NEXT: shipped/model2.so: same as the JIT: True, bitwise repeatable: True
# CHECK-NEXT: mlir imported: False

# Results do not depend on the thread count either.
jit = [np.load(os.path.join(out, f"jit{t}.npz")) for t in (1, 2, 3)]
print("threads 1, 2, 3 bitwise equal:",
      all(np.array_equal(jit[0][k], j[k]) for j in jit[1:] for k in jit[0].files))
# CHECK-NEXT: threads 1, 2, 3 bitwise equal: True

# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# The compile cache keys on the thread count (CompileOptions.threads), keeps
# LLVM's OpenMP runtime beside its entries (a multi-threaded entry needs it
# through its RUNPATH $ORIGIN; the size cap never evicts it), and a cached
# multi-threaded executable runs, in a fresh process too, and exports with
# libomp.so beside the copy.

import os
import subprocess
import sys

import numpy as np

import gradir
from gradir.runtime import cache as cache_mod

out = sys.argv[1]
cdir = os.path.join(out, "cache")
text = """
func.func @main(%x: tensor<512x1024xf32>) -> tensor<f32> {
  %e = "rlx.exp"(%x) : (tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %s = "rlx.sum"(%e) : (tensor<512x1024xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""
x = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
want = None
for threads in (2, 1, 2):
    exe = gradir.compile(gradir.parse(text), threads=threads, cache=cdir)
    cache_mod.wait()
    got = exe["main"](x)
    want = got if want is None else want
    print(f"threads={threads} hit={exe.cache_hit} same={np.array_equal(got, want)}")
# CHECK: threads=2 hit=False same=True
# CHECK-NEXT: threads=1 hit=False same=True
# CHECK-NEXT: threads=2 hit=True same=True
entries = os.path.dirname(exe.cache_path)
print("beside the entries:", sorted(f for f in os.listdir(entries) if f.startswith("lib")),
      len([f for f in os.listdir(entries) if f.endswith(".so") and not f.startswith("lib")]))
# CHECK-NEXT: beside the entries: ['libomp.so', 'libomp.so.sha256'] 2

path = exe.export_library(os.path.join(out, "export", "m.so"))
print("exported:", sorted(os.listdir(os.path.dirname(path))))
# CHECK-NEXT: exported: ['libomp.so', 'm.so']

CHILD = r"""
import sys, numpy as np, gradir
from gradir.runtime import cache as cache_mod
x = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
exe = gradir.compile(gradir.parse(sys.argv[2]), threads=2, cache=sys.argv[1])
lib = gradir.runtime.load(sys.argv[3])
print("child: hit", exe.cache_hit, "same", np.array_equal(exe["main"](x), lib["main"](x)))
"""
proc = subprocess.run([sys.executable, "-c", CHILD, cdir, text, str(path)], capture_output=True,
                      text=True)
print(proc.stdout.strip(), proc.stderr.strip()[-400:])
# CHECK-NEXT: child: hit True same True

# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# The persistent compile cache (gradir/runtime/cache.py): a second process
# loads the first one's library without lowering or invoking LLVM, gets the
# bitwise-identical results (and the interpreter's); other options or CPUs
# miss; the off switches work; damaged entries are rebuilt with a warning; an
# unwritable directory costs a warning, not the compile; concurrent writers
# leave one whole entry; the size cap evicts the least recently used.

import json
import os
import subprocess
import sys

out = sys.argv[1]

MODEL = """
func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) -> tensor<f32> {
  %m = "rlx.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %a = "rlx.add"(%m, %b) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %t = "rlx.tanh"(%a) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = "rlx.sum"(%t) : (tensor<4x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""

# One compile in a fresh process: prints what the cache did, saves results.
CHILD = r"""
import json, os, sys, warnings
import numpy as np
import gradir
from gradir import _compat
from gradir.runtime import cache, jit
out, tag, model, kwargs, forbid = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5] == "1"
if forbid:      # a hit must neither lower nor start LLVM
    def refuse(*a, **k):
        raise AssertionError("LLVM/lowering invoked on a cache hit")
    _compat.execution_engine = refuse
    jit.lower = refuse
m = gradir.parse(model)
gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
barrier = os.environ.get("TEST_BARRIER")
if barrier:     # start compiling together with the other racer
    import time
    open(os.path.join(barrier, "ready-" + tag), "w").close()
    while not os.path.exists(os.path.join(barrier, "go")):
        time.sleep(0.005)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    exe = gradir.compile(m, **kwargs)
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3, 2), (2,)))
    got = exe["main_adjoint"](x, w, b)
    cache.wait()
np.savez(os.path.join(out, tag + ".npz"), *got)
ref = gradir.interpret(m, "main_adjoint", x, w, b)
err = max(float(np.abs(g - r).max()) for g, r in zip(got, ref))
s = cache.stats
print(f"{tag}: hit={exe.cache_hit} hits={s.hits} misses={s.misses} writes={s.writes} "
      f"corrupt={s.corrupt} errors={s.errors} functions={exe.functions} "
      f"oracle={'ok' if err < 1e-5 else err}")
for w_ in (c for c in caught if c.category is cache.CacheWarning):
    print(f"{tag}: warning: {w_.category.__name__}: {str(w_.message).split(';')[0].split(': ', 1)[1] if ': ' in str(w_.message) else w_.message}")
"""


def child(tag, env=None, model=MODEL, forbid=False, wait=True, **kwargs):
    full = dict(os.environ)
    full.pop("GRADIR_CACHE", None)
    full["GRADIR_CACHE_DIR"] = os.path.join(out, "cache")
    full.update(env or {})
    proc = subprocess.Popen([sys.executable, "-c", CHILD, out, tag, model, json.dumps(kwargs),
                             "1" if forbid else "0"], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if not wait:
        return proc
    return finish(proc)


def finish(proc):
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        print("child failed:", stderr[-2000:])
    print(stdout.replace(out, "<out>"), end="")
    return stdout


def entries(folder="cache"):
    path = os.path.join(out, folder, "compiled")
    # (the matmul kernel library the entries link is stored beside them)
    return sorted(n for n in os.listdir(path) if n.endswith(".so")
                  and not n.startswith("libgradir_kernels_")) if os.path.isdir(path) else []


def same(a, b):
    import numpy as np
    x, y = np.load(os.path.join(out, a + ".npz")), np.load(os.path.join(out, b + ".npz"))
    return all(np.array_equal(x[k], y[k]) for k in x.files)


# lit.cfg.py: the suite runs with the compile cache off and schedules under
# build/test, never in the user's ~/.cache.
home = os.path.expanduser("~")
print("suite: GRADIR_CACHE =", os.environ.get("GRADIR_CACHE"), "| dir in home:",
      os.path.abspath(os.environ.get("GRADIR_CACHE_DIR", home)).startswith(home + os.sep + "."))
# CHECK: suite: GRADIR_CACHE = 0 | dir in home: False

print("TEST: cold then warm")
child("cold")
# CHECK-LABEL: TEST: cold then warm
# CHECK-NEXT: cold: hit=False hits=0 misses=1 writes=1 corrupt=0 errors=0 functions=['main', 'main_adjoint'] oracle=ok
child("warm", forbid=True)
# CHECK-NEXT: warm: hit=True hits=1 misses=0 writes=0 corrupt=0 errors=0 functions=['main', 'main_adjoint'] oracle=ok
print("entries:", len(entries()), "identical results:", same("cold", "warm"))
# CHECK-NEXT: entries: 1 identical results: True

print("TEST: other options miss")
child("v3", cpu="x86-64-v3")
child("o1", opt_level=1)
child("adjoint", functions=["main_adjoint"])
child("edited", model=MODEL.replace('"rlx.tanh"', '"rlx.sigmoid"'))
child("v3-again", forbid=True, cpu="x86-64-v3")
print("entries:", len(entries()))
# CHECK-LABEL: TEST: other options miss
# CHECK-NEXT: v3: hit=False hits=0 misses=1 writes=1
# CHECK-NEXT: o1: hit=False hits=0 misses=1 writes=1
# CHECK-NEXT: adjoint: hit=False hits=0 misses=1 writes=1 corrupt=0 errors=0 functions=['main_adjoint'] oracle=ok
# CHECK-NEXT: edited: hit=False hits=0 misses=1 writes=1
# CHECK-NEXT: v3-again: hit=True hits=1 misses=0 writes=0
# CHECK-NEXT: entries: 5

print("TEST: off switches")
child("env-off", env={"GRADIR_CACHE": "0"})
child("dir-empty", env={"GRADIR_CACHE_DIR": ""})
child("arg-off", cache=False)
child("arg-path", env={"GRADIR_CACHE": "0"}, cache=os.path.join(out, "explicit"))
print("entries:", len(entries()), "explicit:", len(entries("explicit")))
# CHECK-LABEL: TEST: off switches
# CHECK-NEXT: env-off: hit=None hits=0 misses=0 writes=0 corrupt=0 errors=0 {{.*}} oracle=ok
# CHECK-NEXT: dir-empty: hit=None hits=0 misses=0 writes=0
# CHECK-NEXT: arg-off: hit=None hits=0 misses=0 writes=0
# CHECK-NEXT: arg-path: hit=False hits=0 misses=1 writes=1
# CHECK-NEXT: entries: 5 explicit: 1

print("TEST: damaged entries are rebuilt")
import gradir  # noqa: E402
from gradir.runtime import cache  # noqa: E402
from gradir.runtime.toolchain import CompileOptions  # noqa: E402
m = gradir.parse(MODEL)
gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
from gradir.conversion.cpu.host import default_threads  # noqa: E402
# gradir.compile's options: its default thread count (and kernels on) is part of the key.
key = cache.cache_key(gradir.print_module(m, segments=True),
                      CompileOptions(threads=default_threads(), kernels=True))
path = os.path.join(out, "cache", "compiled", key + ".so")
print("cold entry found:", os.path.isfile(path))
# CHECK-LABEL: TEST: damaged entries are rebuilt
# CHECK-NEXT: cold entry found: True
data = open(path, "rb").read()
with open(path, "wb") as f:
    f.write(data[: len(data) // 2])                       # truncated
child("truncated")
# CHECK-NEXT: truncated: hit=False hits=0 misses=1 writes=1 corrupt=1 errors=0 {{.*}} oracle=ok
# CHECK-NEXT: truncated: warning: CacheWarning: {{.*}}.so is truncated or corrupt (no trailer)
data = bytearray(open(path, "rb").read())
data[len(data) // 3] ^= 0xFF                              # one flipped bit in the code
open(path, "wb").write(bytes(data))
child("flipped")
# CHECK-NEXT: flipped: hit=False hits=0 misses=1 writes=1 corrupt=1
# CHECK-NEXT: flipped: warning: CacheWarning: {{.*}} is truncated or corrupt
child("rebuilt", forbid=True)
print("identical results:", same("cold", "rebuilt"))
# CHECK-NEXT: rebuilt: hit=True hits=1 misses=0 writes=0 corrupt=0 errors=0
# CHECK-NEXT: identical results: True

# Another module's entry (a valid one) under this key: its code must not run
# for this module (hostile-input review: it was used, @main taking (5, 3)).
OTHER = MODEL.replace("4x3xf32", "5x3xf32").replace("4x2xf32", "5x2xf32")
before = set(entries())
other_module = gradir.parse(OTHER)
gradir.run_pipeline(other_module, "builtin.module(rlx-gradient)")
gradir.compile(other_module, cache=os.path.join(out, "cache"))
cache.wait()
other = [e for e in entries() if e not in before][0]
with open(os.path.join(out, "cache", "compiled", other), "rb") as f:
    swapped = f.read()
with open(path, "wb") as f:
    f.write(swapped)
child("swapped")
# CHECK-NEXT: swapped: hit=False hits=0 misses=1 writes=1 corrupt=1 errors=0 {{.*}} oracle=ok
# CHECK-NEXT: swapped: warning: CacheWarning: {{.*}}.so was compiled from another program (its key is {{[0-9a-f]+}}..., not {{[0-9a-f]+}}...)

print("TEST: unwritable directory")
open(os.path.join(out, "a-file"), "w").close()
child("unwritable", env={"GRADIR_CACHE_DIR": os.path.join(out, "a-file", "sub")})
# CHECK-LABEL: TEST: unwritable directory
# CHECK-NEXT: unwritable: hit=False hits=0 misses=1 writes=0 corrupt=0 errors=1 {{.*}} oracle=ok
# CHECK-NEXT: unwritable: warning: CacheWarning: cannot write to <out>/a-file/sub/compiled: Not a directory

print("TEST: concurrent writers")
import time  # noqa: E402
barrier = os.path.join(out, "barrier")
os.makedirs(barrier)
procs = [child(f"racer{i}", env={"TEST_BARRIER": barrier}, wait=False,
               cache=os.path.join(out, "race")) for i in range(2)]
while len(os.listdir(barrier)) < 2:
    time.sleep(0.005)
open(os.path.join(barrier, "go"), "w").close()
for p in procs:
    finish(p)
print("entries:", len(entries("race")),
      "leftovers:", [n for n in os.listdir(os.path.join(out, "race", "compiled")) if n.startswith(".")])
child("after-race", forbid=True, cache=os.path.join(out, "race"))
# CHECK-LABEL: TEST: concurrent writers
# (both normally miss and write; a racer the scheduler delays by a whole compile may hit)
# CHECK-DAG: racer0: hit={{True|False}} {{.*}} corrupt=0 errors=0 {{.*}} oracle=ok
# CHECK-DAG: racer1: hit={{True|False}} {{.*}} corrupt=0 errors=0 {{.*}} oracle=ok
# CHECK: entries: 1 leftovers: []
# CHECK-NEXT: after-race: hit=True hits=1

print("TEST: cached executables export and print")
exe = gradir.compile(m, cache=os.path.join(out, "cache"))
lib = gradir.runtime.load(exe.export_library(os.path.join(out, "export", "model.so")))
print("hit:", exe.cache_hit, "exported functions:", lib.functions,
      "llvm_ir:", "llvm.func @_mlir_ciface_main_adjoint" in exe.llvm_ir)
# CHECK-LABEL: TEST: cached executables export and print
# CHECK-NEXT: hit: True exported functions: ['main', 'main_adjoint'] llvm_ir: True

print("TEST: size cap")
child("capped", env={"GRADIR_CACHE_MAX_MB": "0.000001"}, opt_level=2)
print("entries:", len(entries()))
# CHECK-LABEL: TEST: size cap
# CHECK-NEXT: capped: hit=False hits=0 misses=1 writes=1
# CHECK-NEXT: entries: 0
print("cleared:", cache.clear(os.path.join(out, "explicit")), len(entries("explicit")))
# CHECK-NEXT: cleared: 1 0

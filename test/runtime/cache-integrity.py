# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# The compile cache trusts nothing it did not verify: a truncated runtime
# library beside the entries (dlopen of it raised SIGBUS in every later
# process) is replaced; an entry of another program placed under a key is
# refused (it was loaded silently, with wrong results); GRADIR_CACHE_MAX_MB=inf
# means no cap (it warned that the written entry failed).

import os
import shutil
import subprocess
import sys

out = sys.argv[1]

PROGRAM = """func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<f32> {
  %m = "rlx.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %t = "rlx.OP"(%m) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = "rlx.sum"(%t) : (tensor<4x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""

CHILD = r"""
import sys, warnings
import numpy as np
import gradir
from gradir.runtime import cache
directory, op = sys.argv[1], sys.argv[2]
m = gradir.parse(sys.argv[3].replace("OP", op))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    exe = gradir.compile(m, cache=directory)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    got = exe["main"](x, w)
    cache.wait()
(ref,) = gradir.interpret(m, "main", x, w)
s = cache.stats
print(f"{op}: hit={exe.cache_hit} writes={s.writes} corrupt={s.corrupt} errors={s.errors} "
      f"oracle={'ok' if abs(float(got) - float(ref)) < 1e-5 else 'WRONG'}")
for w in caught:
    print("warning:", str(w.message).replace(directory, "DIR"))
"""


def run(directory, op, **env):
    p = subprocess.run([sys.executable, "-c", CHILD, directory, op, PROGRAM],
                       capture_output=True, text=True, env=dict(os.environ, **env))
    print(f"exit={p.returncode}")
    print(p.stdout.strip())
    if p.returncode:
        print(p.stderr[-2000:])


def entries(directory):
    folder = os.path.join(directory, "compiled")
    return sorted(f for f in os.listdir(folder) if f.endswith(".so") and not f.startswith("lib"))


print("== truncated runtime library")
d = os.path.join(out, "trunc")
run(d, "tanh")
folder = os.path.join(d, "compiled")
(lib,) = [f for f in os.listdir(folder) if f.startswith("libgradir_kernels") and f.endswith(".so")]
data = open(os.path.join(folder, lib), "rb").read()
open(os.path.join(folder, lib), "wb").write(data[:len(data) // 4])
run(d, "tanh")
run(d, "tanh")
print("library restored:", open(os.path.join(folder, lib), "rb").read() == data)
os.unlink(os.path.join(folder, lib + ".sha256"))      # as an older gradir left it: no record
run(d, "tanh")
run(d, "tanh")
# CHECK-LABEL: == truncated runtime library
# CHECK: exit=0
# CHECK-NEXT: tanh: hit=False writes=1 corrupt=0 errors=0 oracle=ok
# CHECK-NEXT: exit=0
# CHECK-NEXT: tanh: hit=False writes=1 corrupt=1 errors=0 oracle=ok
# CHECK-NEXT: warning: gradir compile cache: the runtime library DIR/compiled/libgradir_kernels_{{.*}}.so does not match its record (truncated or edited); recompiling, the next write replaces it
# CHECK-NEXT: exit=0
# CHECK-NEXT: tanh: hit=True writes=0 corrupt=0 errors=0 oracle=ok
# CHECK-NEXT: library restored: True
# CHECK-NEXT: exit=0
# CHECK-NEXT: tanh: hit=False writes=1 corrupt=0 errors=0 oracle=ok
# CHECK-NEXT: exit=0
# CHECK-NEXT: tanh: hit=True writes=0 corrupt=0 errors=0 oracle=ok

print("== an entry of another program under this program's key")
a, b = os.path.join(out, "exp"), os.path.join(out, "tanh")
run(a, "exp")
run(b, "tanh")
(ea,), (eb,) = entries(a), entries(b)
shutil.copyfile(os.path.join(a, "compiled", ea), os.path.join(b, "compiled", eb))
run(b, "tanh")
run(b, "tanh")
# CHECK-LABEL: == an entry of another program
# CHECK: exp: hit=False writes=1
# CHECK: tanh: hit=False writes=1
# CHECK: exit=0
# CHECK-NEXT: tanh: hit=False writes=1 corrupt=1 errors=0 oracle=ok
# CHECK-NEXT: warning: gradir compile cache: DIR/compiled/{{[0-9a-f]+}}.so was compiled from another program (its key is {{[0-9a-f]+}}..., not {{[0-9a-f]+}}...); removed, recompiling
# CHECK-NEXT: exit=0
# CHECK-NEXT: tanh: hit=True writes=0 corrupt=0 errors=0 oracle=ok

print("== GRADIR_CACHE_MAX_MB")
run(os.path.join(out, "inf"), "tanh", GRADIR_CACHE_MAX_MB="inf")
run(os.path.join(out, "bad"), "tanh", GRADIR_CACHE_MAX_MB="-3")
# CHECK-LABEL: == GRADIR_CACHE_MAX_MB
# CHECK: exit=0
# CHECK-NEXT: tanh: hit=False writes=1 corrupt=0 errors=0 oracle=ok
# CHECK-NEXT: exit=0
# CHECK-NEXT: tanh: hit=False writes=1 corrupt=0 errors=0 oracle=ok
# CHECK-NEXT: warning: gradir compile cache: GRADIR_CACHE_MAX_MB='-3' is not a size in MiB (a number >= 0, or inf); using 1024

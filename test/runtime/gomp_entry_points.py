# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# gradir's LLVM OpenMP entry points on GNU libgomp (runtime/gomp.py,
# native/gradir_gomp.c), driven from C as MLIR's OpenMP translation drives
# them (Inputs/gomp_entry_points.c): every schedule gradir's loops use and
# the others, regions forked inside a loop's body (run on the team or alone),
# static and 32-bit loops; on libgomp while the block time is > 0 and on
# LLVM's libomp behind it at 0.  Every iteration runs exactly once.

import os
import subprocess
import sys

from gradir.runtime import gomp
from gradir.runtime.toolchain import compiler, openmp_library

out = sys.argv[1]
lib = gomp.library(compiler())
exe = os.path.join(out, "gomp_entry_points")
here = os.path.dirname(os.path.abspath(__file__))
subprocess.run([compiler(), "-O1", "-o", exe, os.path.join(here, "Inputs", "gomp_entry_points.c"),
                "-ldl"], check=True)
proc = subprocess.run([exe, str(lib), str(openmp_library())], capture_output=True, text=True,
                      timeout=120)
print(proc.stdout, proc.stderr[-2000:], "exit", proc.returncode)
# CHECK: libgomp bound: 1, libomp bound: 1
# CHECK-NEXT: hot schedule 36: ok
# CHECK-NEXT: hot schedule 36 nested: ok
# CHECK-NEXT: hot schedule 35: ok
# CHECK-NEXT: hot schedule 35 nested: ok
# CHECK-NEXT: hot schedule 33: ok
# CHECK-NEXT: hot schedule 33 nested: ok
# CHECK-NEXT: hot schedule 34: ok
# CHECK-NEXT: hot schedule 34 nested: ok
# CHECK-NEXT: hot static and 32-bit loops: ok
# CHECK-NEXT: hot: regions on libgomp yes, on libomp no
# CHECK-NEXT: cold schedule 36: ok
# CHECK-NEXT: cold schedule 36 nested: ok
# CHECK-NEXT: cold schedule 35: ok
# CHECK-NEXT: cold schedule 35 nested: ok
# CHECK-NEXT: cold schedule 33: ok
# CHECK-NEXT: cold schedule 33 nested: ok
# CHECK-NEXT: cold schedule 34: ok
# CHECK-NEXT: cold schedule 34 nested: ok
# CHECK-NEXT: cold static and 32-bit loops: ok
# CHECK-NEXT: cold: regions on libgomp no, on libomp yes
# CHECK-NEXT: widest team on libgomp: 2
# CHECK: exit 0

# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# gradir's CUDA host runtime (gradir.runtime.cuda_runtime, a replacement of
# libmlir_cuda_runtime.so) replays each call's kernel launches as a CUDA
# graph, run end to end without a GPU on the fake driver (Inputs/fake_cuda.c:
# cuFuncGetParamInfo, stream capture, cuGraphInstantiate and cuGraphLaunch,
# the launches run by gradir's SIMT emulator).  An exported MLP step is
# called several times with different inputs (results against numpy each
# time): the first call launches its kernels one by one, the second captures
# them (one graph per run of launches between copies) and every later call
# launches graphs only; with GRADIR_CUDA_GRAPHS=0 no graph is used.  Then a
# process exit (the fake driver shutting down at exit) prints nothing.

import ctypes
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))

from emulate_helpers import outlined_kernels  # noqa: E402
from fake_driver import FakeDriver, build  # noqa: E402
from mlp import build_mlp, differentiate, init_params, numpy_step  # noqa: E402

import gradir  # noqa: E402
from gradir.runtime.cuda_runtime import build_runtime, counters, is_current  # noqa: E402

out = sys.argv[1]
RESIDENT = (2, 3, 4, 5)
BATCH, SIZES = 24, [40, 20, 6]
CALLS = 5


def max_error(got, want):
    return max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))


def run_calls(tag: str) -> None:
    """Loads out/mlp.so on the fake driver and calls its step CALLS times."""
    module = differentiate(build_mlp(BATCH, SIZES))
    kernels, _ = outlined_kernels(module, keep_resident=RESIDENT)
    driver = FakeDriver(os.path.join(out, "libcuda.so.1"))
    driver.emulate(kernels.operation)
    lib = gradir.runtime.load(os.path.join(out, "mlp.so"))
    runtime = ctypes.CDLL(os.path.join(out, "libmlir_cuda_runtime.so"))   # the loaded one
    step = lib["main_adjoint"]
    rng = np.random.default_rng(0)
    params = init_params(SIZES, seed=1)
    ok, first_two, later = True, [], []
    for call in range(CALLS):
        if call == 3:   # new resident parameters: a copy, then the same launches
            params = init_params(SIZES, seed=2)
            lib["main_adjoint_upload_resident"](*params)
        x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
        labels = rng.integers(0, SIZES[-1], BATCH)
        before = counters(runtime)
        got = step(x, labels, *params)
        after = counters(runtime)
        error = max_error(got, numpy_step(x, labels, *params))
        ok = ok and error < 1e-4
        delta = {k: after[k] - before[k] for k in after}
        if call < 2:
            first_two.append(delta)
        else:
            later.append(delta)
    print(f"{tag}: results match numpy on {CALLS} calls:", ok, "errors:", driver.errors)
    c1, c2 = first_two
    print(f"{tag}: call 1: launched one by one", c1["launches"] > 0,
          "graph launches", c1["graph_launches"])
    print(f"{tag}: call 2: launched one by one", c2["launches"],
          "graph launches > 0", c2["graph_launches"] > 0,
          "captured", c2["graph_captures"])
    print(f"{tag}: calls 3-{CALLS}: launched one by one", sum(d["launches"] for d in later),
          "graph launches per call", sorted({d["graph_launches"] for d in later}),
          "captured", sum(d["graph_captures"] for d in later))
    print(f"{tag}: fake driver: kernels run by graphs", driver.stat("graph kernel"),
          "captured", driver.stat("captured launch"),
          "individual", driver.stat("launch"))


if len(sys.argv) > 2 and sys.argv[2] == "calls":   # the GRADIR_CUDA_GRAPHS=0 process
    run_calls(sys.argv[3])
    sys.exit(0)

# --- export, with gradir's runtime in place of MLIR's -----------------------------
build(out)
exe = gradir.compile(differentiate(build_mlp(BATCH, SIZES)), target="cuda",
                     keep_resident=RESIDENT)
path = exe.export_library(os.path.join(out, "mlp.so"))
runtime = build_runtime(out)
print("runtime in place:", runtime == path.parent / "libmlir_cuda_runtime.so",
      is_current(runtime), "rebuilt:", build_runtime(out).stat().st_mtime_ns
      == runtime.stat().st_mtime_ns)
# CHECK: runtime in place: True True rebuilt: True

run_calls("graphs")
# CHECK-NEXT: graphs: results match numpy on 5 calls: True errors: []
# CHECK-NEXT: graphs: call 1: launched one by one True graph launches 0
# CHECK-NEXT: graphs: call 2: launched one by one 0 graph launches > 0 True captured [[RUNS:[0-9]+]]
# CHECK-NEXT: graphs: calls 3-5: launched one by one 0 graph launches per call [[[RUNS]]] captured 0
# CHECK-NEXT: graphs: fake driver: kernels run by graphs {{[1-9][0-9]*}} captured {{[1-9][0-9]*}} individual {{[1-9][0-9]*}}

off = subprocess.run([sys.executable, __file__, out, "calls", "off"], capture_output=True,
                     text=True, env=dict(os.environ, GRADIR_CUDA_GRAPHS="0"))
print(off.stdout.strip() or off.stderr.strip())
# CHECK-NEXT: off: results match numpy on 5 calls: True errors: []
# CHECK-NEXT: off: call 1: launched one by one True graph launches 0
# CHECK-NEXT: off: call 2: launched one by one {{[1-9][0-9]*}} graph launches > 0 False captured 0
# CHECK-NEXT: off: calls 3-5: launched one by one {{[1-9][0-9]*}} graph launches per call [0] captured 0
# CHECK-NEXT: off: fake driver: kernels run by graphs 0 captured 0 individual {{[1-9][0-9]*}}

# --- process exit ------------------------------------------------------------------
# A process without MLIR calls the library and exits, the fake driver
# shutting down at exit as the real one does (FAKE_CUDA_EXIT_DEINIT=1): no
# message (cuda_graphs_api.py unloads a module after the shutdown).
CHILD = r"""
import ctypes, os, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
ctypes.CDLL(os.path.join(sys.argv[1], "libcuda.so.1"), mode=os.RTLD_GLOBAL)
import gradir.runtime as rt
lib = rt.load(os.path.join(sys.argv[1], "mlp.so"))
args = [np.zeros(s.shape, s.dtype) for s in lib["main_adjoint"].signature.inputs]
for _ in range(3):
    lib["main_adjoint"](*args)
print("called")
"""
child = subprocess.run([sys.executable, "-c", CHILD, out,
                        os.path.join(HERE, "..", "..", "..", "python")],
                       capture_output=True, text=True,
                       env=dict(os.environ, FAKE_CUDA_EXIT_DEINIT="1"))
print("exit with gradir's runtime:", child.stdout.strip(), "rc", child.returncode,
      "stderr:", repr(child.stderr.strip()))
# CHECK-NEXT: exit with gradir's runtime: called rc 0 stderr: ''

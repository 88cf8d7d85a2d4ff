# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# An exported CUDA library run end to end without a GPU: a fake libcuda.so.1
# (Inputs/fake_cuda.c: host memory, memcpy, recorded modules) hands every
# cuLaunchKernel to gradir's SIMT emulator, which runs the kernel (as
# outlined by the same pipeline) on the parameters the library packed.  This
# exercises what only a GPU run would otherwise: the library's constructor
# loading its kernels, the host code's copies, arena and resident buffers,
# the kernel argument marshalling, and the loader; then a process without
# MLIR loads the library (the libLLVM.so stand-in) and calls it.

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

out = sys.argv[1]
RESIDENT = (2, 3, 4, 5)
batch, sizes = 24, [40, 20, 6]
module = differentiate(build_mlp(batch, sizes))

exe = gradir.compile(module, target="cuda", keep_resident=RESIDENT)
path = str(exe.export_library(os.path.join(out, "mlp.so")))

# The kernels as the library's pipeline outlined them (same options, same names).
kernels, _ = outlined_kernels(module, keep_resident=RESIDENT)

driver = FakeDriver(build(out))
driver.emulate(kernels.operation)
lib = gradir.runtime.load(path)
print("functions:", sorted(lib.functions))
print("modules loaded by the constructor:", driver.stat("module load"))
# CHECK: functions: ['main', 'main_adjoint', 'main_adjoint_upload_resident', 'main_upload_resident']
# CHECK-NEXT: modules loaded by the constructor: 2

rng = np.random.default_rng(0)
x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
labels = rng.integers(0, sizes[-1], batch)
p1, p2 = init_params(sizes, seed=1), init_params(sizes, seed=2)


def max_error(got, want):
    return max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))


step = lib["main_adjoint"]
print("first call:", max_error(step(x, labels, *p1), numpy_step(x, labels, *p1)) < 1e-4)
allocs = driver.stat("alloc")
print("resident parameters kept:",
      max_error(step(x, labels, *p2), numpy_step(x, labels, *p1)) < 1e-4)
lib["main_adjoint_upload_resident"](*p2)
print("after upload:", max_error(step(x, labels, *p1), numpy_step(x, labels, *p2)) < 1e-4)
loss, logits = lib["main"](x, labels, *p1)
print("main:", max_error((loss, logits), numpy_step(x, labels, *p1)[:2]) < 1e-4)
print("allocations after the first call:", driver.stat("alloc") - allocs,
      "frees:", driver.stat("free"), "launch errors:", driver.errors)
# CHECK-NEXT: first call: True
# CHECK-NEXT: resident parameters kept: True
# CHECK-NEXT: after upload: True
# CHECK-NEXT: main: True
# CHECK-NEXT: allocations after the first call: {{[0-9]}} frees: 0 launch errors: []

# A process without MLIR: numpy + ctypes + the exported files + the driver.
CHILD = r"""
import ctypes, os, sys
class NoMlir:
    def find_spec(self, name, path=None, target=None):
        if name == "mlir" or name.startswith("mlir."):
            raise ImportError("mlir is not available here")
sys.meta_path.insert(0, NoMlir())
sys.path.insert(0, sys.argv[2])
import numpy as np
driver = ctypes.CDLL(os.path.join(sys.argv[1], "libcuda.so.1"), mode=os.RTLD_GLOBAL)
import gradir.runtime as rt
lib = rt.load(os.path.join(sys.argv[1], "mlp.so"))
args = [np.zeros(s.shape, s.dtype) for s in lib["main_adjoint"].signature.inputs]
lib["main_adjoint"](*args)
print("child: launches", driver.fake_cuda_stat(4) > 0, "mlir imported:",
      any(m == "mlir" or m.startswith("mlir.") for m in sys.modules))
"""
child = subprocess.run([sys.executable, "-c", CHILD, out,
                        os.path.join(HERE, "..", "..", "..", "python")],
                       capture_output=True, text=True)
print(child.stdout.strip() or child.stderr.strip().splitlines()[-1])
# CHECK-NEXT: child: launches True mlir imported: False

# Process exit with the driver shutting down first (FAKE_CUDA_EXIT_DEINIT:
# an atexit handler of cuInit's, as the real driver's): the library
# unloads its kernels from an atexit handler registered after the driver's
# (so before the shutdown: no "'cuModuleUnload(module)' failed with
# '<unknown>'", nothing left loaded), and a library closed in a running
# process unloads its kernels then.
EXIT = r"""
import _ctypes, ctypes, os, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
driver = ctypes.CDLL(os.path.join(sys.argv[1], "libcuda.so.1"), mode=os.RTLD_GLOBAL)
driver.fake_cuda_stat.restype = ctypes.c_long
import gradir.runtime as rt
lib = rt.load(os.path.join(sys.argv[1], "mlp.so"))
args = [np.zeros(s.shape, s.dtype) for s in lib["main_adjoint"].signature.inputs]
lib["main_adjoint"](*args)
other = ctypes.CDLL(os.path.join(sys.argv[1], "mlp.so"))    # a second copy, then closed
loaded = driver.fake_cuda_stat(3)
_ctypes.dlclose(other._handle)
print("child: loaded", loaded, "unloaded by dlclose", driver.fake_cuda_stat(5))
"""
child = subprocess.run([sys.executable, "-c", EXIT, out,
                        os.path.join(HERE, "..", "..", "..", "python")],
                       capture_output=True, text=True,
                       env=dict(os.environ, FAKE_CUDA_EXIT_DEINIT="1", FAKE_CUDA_EXIT_REPORT="1"))
print(child.stdout.strip(), "rc", child.returncode)
print("stderr:", child.stderr.strip())
# CHECK-NEXT: child: loaded 4 unloaded by dlclose 2 rc 0
# CHECK-NEXT: stderr: fake_cuda: shut down with 4 modules loaded, 4 unloaded
# CHECK-NOT: failed

# RUN: %PYTHON %s | FileCheck %s
# Every op of the numeric conversion suites (test/conversion/cpu/numeric_*.py),
# compiled for the GPU (the NVVM pipeline up to its kernels stage) and run by
# the SIMT emulator (gradir.testing.gpu_emulator: lockstep threads, data
# race, barrier, bounds and use-after-free checks), against the reference
# interpreter: each suite's own cases and tolerances, gradir.compile swapped
# for the emulated GPU build.

import os
import runpy
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Inputs"))

import numeric_helpers  # noqa: E402

import gradir  # noqa: E402
from gradir.testing.gpu_emulator import Emulated  # noqa: E402

shim = types.ModuleType("gradir_on_emulated_gpu")
shim.__dict__.update({k: getattr(gradir, k) for k in ("interpret", "make_context", "parse",
                                                      "run_pipeline", "print_module")})
shim.compile = lambda module, opt_level=3, **_: Emulated(module, opt_level=opt_level)
numeric_helpers.gradir = shim

for suite in ("numeric_elementwise", "numeric_shape_reduce", "numeric_nn", "numeric_gradient",
              "numeric_edge_cases"):
    print(f"SUITE: {suite}")
    runpy.run_path(os.path.join(HERE, "..", "cpu", f"{suite}.py"), run_name="__main__")

# CHECK-LABEL: SUITE: numeric_elementwise
# CHECK: elementwise: all {{[0-9]+}} cases match the interpreter
# CHECK: compare/where/astype: all {{[0-9]+}} cases match the interpreter
# CHECK: create: all {{[0-9]+}} cases match the interpreter
# CHECK: matmul: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: SUITE: numeric_shape_reduce
# CHECK: shape: all {{[0-9]+}} cases match the interpreter
# CHECK: reduce: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: SUITE: numeric_nn
# CHECK: softmax/losses: all {{[0-9]+}} cases match the interpreter
# CHECK: conv/pool: all {{[0-9]+}} cases match the interpreter
# CHECK: norm: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: SUITE: numeric_gradient
# CHECK: gradients: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: SUITE: numeric_edge_cases
# CHECK: result shapes: all {{[0-9]+}} cases match the interpreter
# CHECK: adjoints: all {{[0-9]+}} cases match the interpreter
# CHECK: zero-size matmul: all {{[0-9]+}} cases match the interpreter

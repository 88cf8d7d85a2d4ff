# RUN: %PYTHON %s | FileCheck %s
# Every case of the numeric conversion suites built on numeric_helpers.Suite
# (test/conversion/cpu/numeric_*.py: elementwise, shape_reduce, nn,
# gradient, edge_cases, matmul_layouts, and the GEMM, MLP-gradient and
# packed-GEMM cases of numeric_targets, which on the GPU are one target),
# compiled for the GPU (gradir.compile(target="cuda"): the kernels to PTX,
# no GPU needed; the NVVM pipeline up to its kernels stage for the emulator)
# and run by the SIMT emulator (gradir.testing.gpu_emulator: lockstep
# threads, data race, barrier, bounds and use-after-free checks), against
# the reference interpreter: each suite's own cases and tolerances,
# gradir.compile swapped for the emulated GPU build.  The suites' other
# programs: emulate_numeric_programs.py (numeric_threads),
# emulate_pools_sums.py (numeric_pool_kernels, numeric_sums),
# emulate_control_flow.py (numeric_scf, numeric_loop_steps).

import os
import runpy
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Inputs"))
sys.path.insert(0, os.path.join(HERE, "Inputs"))

import numeric_helpers  # noqa: E402
from emulate_helpers import definitions, emulated  # noqa: E402

import gradir  # noqa: E402

gradir._compat.push_diagnostic_sink(lambda *a: None)   # leak warnings (see README)

shim = types.ModuleType("gradir_on_emulated_gpu")
shim.__dict__.update({k: getattr(gradir, k) for k in ("interpret", "make_context", "parse",
                                                      "run_pipeline", "print_module")})
shim.compile = lambda module, opt_level=3, **_: emulated(module, opt_level=opt_level)
numeric_helpers.gradir = shim

for suite in ("numeric_elementwise", "numeric_shape_reduce", "numeric_nn", "numeric_gradient",
              "numeric_edge_cases", "numeric_matmul_layouts"):
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
# CHECK-LABEL: SUITE: numeric_matmul_layouts
# CHECK: odd sizes: all 24 cases match the interpreter
# CHECK: transposed: all 32 cases match the interpreter

# numeric_targets: its cases once (cpu= means nothing to the GPU build)
print("SUITE: numeric_targets")
targets = definitions(os.path.join(HERE, "..", "cpu", "numeric_targets.py"))
for title, add in (("gemms", targets.gemm_cases), ("packed gemms", targets.packed_cases)):
    s = numeric_helpers.Suite(title)
    for dt in numeric_helpers.FLOATS:
        add(s, dt)
    # f32 sums of K products, in the GPU tiles' order: about K roundings
    # (numeric_matmul_layouts' tolerance; gemm_cases give none)
    s.cases = [(name, build, inputs, rtol, 1e-6 * inputs[0].shape[-1]
                if atol is None and inputs[0].dtype == np.float32 else atol)
               for name, build, inputs, rtol, atol in s.cases]
    s.run()
s = numeric_helpers.Suite("mlp gradients", gradient=True)
for dt in numeric_helpers.FLOATS:
    args = [numeric_helpers.rand(sh, dt) for sh in [(64, 50), (50, 96), (96,), (96, 10), (10,)]]
    s.case(f"mlp_{targets.short(dt)}", targets.mlp, *args, numeric_helpers.ints((64,), 10))
s.run()
# CHECK-LABEL: SUITE: numeric_targets
# CHECK: gemms: all 12 cases match the interpreter
# CHECK: packed gemms: all 32 cases match the interpreter
# CHECK: mlp gradients: all 2 cases match the interpreter

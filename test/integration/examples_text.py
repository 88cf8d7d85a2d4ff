# RUN: %PYTHON %s %gradir_src/examples | FileCheck %s
# RUN: gradir-run %gradir_src/examples/transformer_block.mlir --rlx-gradient --entry main_adjoint --random-inputs 0 | FileCheck %s --check-prefix=TOOL
# RUN: gradir-run %gradir_src/examples/convnet.mlir --rlx-gradient --entry main_adjoint --random-inputs 0 --interpret | FileCheck %s --check-prefix=TOOL
# TOOL-LABEL: result 0: float32 ()
# The rlx text examples (examples/*.mlir): their gradients match finite differences
# (float64 copies, reference interpreter) and the compiled float32 adjoint matches the
# interpreter.

import pathlib
import sys

import numpy as np

import gradir
from gradir import interpret
from gradir.testing import check_gradient

EXAMPLES = pathlib.Path(sys.argv[1])
rng = np.random.default_rng(0)


def inputs(module, dtype):
    from mlir import ir
    fn = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
    args = []
    for t in ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs:
        shape = list(t.shape)
        if str(t.element_type).startswith("i"):
            args.append(rng.integers(0, 10, size=shape).astype(np.int64))
        else:
            args.append((0.5 * rng.standard_normal(shape)).astype(dtype))
    return args


for name in ("convnet", "transformer_block"):
    text = (EXAMPLES / f"{name}.mlir").read_text()
    f64 = text.replace("f32", "f64")
    args64 = inputs(gradir.parse(f64), np.float64)
    check_gradient(f64, args64, rtol=1e-4, atol=1e-6)
    module = gradir.parse(text, source_name=f"{name}.mlir")
    gradir.run_pipeline(module, "builtin.module(rlx-gradient)")
    args = [a.astype(np.float32) if a.dtype == np.float64 else a for a in args64]
    ref = interpret(module, "main_adjoint", *args)
    got = gradir.compile(module)["main_adjoint"](*args)
    for r, g in zip(ref, got):
        assert np.allclose(r, g, rtol=2e-4, atol=2e-5), (name, np.abs(r - g).max())
    print(f"ok {name}: {len(ref)} results")
# CHECK: ok convnet: 7 results
# CHECK: ok transformer_block: 10 results

# RUN: %PYTHON %s | FileCheck %s
# gradir.compile(..., functions=[...]) lowers and compiles only the public
# functions asked for (the others become private and symbol-dce drops them);
# results match the interpreter; an unknown name is a CompileError naming
# the module's functions.

import numpy as np

import gradir
from gradir.runtime.signature import CompileError

m = gradir.parse("""
func.func @main(%x: tensor<5x3xf32>, %w: tensor<3x2xf32>) -> tensor<f32> {
  %m = "rlx.matmul"(%x, %w) : (tensor<5x3xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
  %r = "rlx.relu"(%m) : (tensor<5x2xf32>) -> tensor<5x2xf32>
  %s = "rlx.mean"(%r) : (tensor<5x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""")
gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
rng = np.random.default_rng(1)
x, w = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)

exe = gradir.compile(m, functions=["main_adjoint"], cache=False)
got = exe["main_adjoint"](x, w)
ref = gradir.interpret(m, "main_adjoint", x, w)
print("functions:", exe.functions, "signatures:", sorted(exe.signatures),
      "oracle:", all(np.allclose(g, r, rtol=1e-5, atol=1e-6) for g, r in zip(got, ref)))
print("lowered has @main:", "llvm.func @main(" in exe.llvm_ir)
# CHECK: functions: ['main_adjoint'] signatures: ['main_adjoint'] oracle: True
# CHECK-NEXT: lowered has @main: False
try:
    exe["main"]
except KeyError as err:
    print("KeyError:", err)
# CHECK-NEXT: KeyError: 'no public function @main; compiled functions: main_adjoint'
print("original module untouched:", [op.name.value for op in m.body.operations])
# CHECK-NEXT: original module untouched: ['main', 'main_adjoint']
exe = gradir.compile(m, functions="main", cache=False)
print("one name:", exe.functions, np.allclose(exe["main"](x, w), gradir.interpret(m, "main", x, w)[0], rtol=1e-5))
# CHECK-NEXT: one name: ['main'] True
try:
    gradir.compile(m, functions=["main_adjoint", "nope"], cache=False)
except CompileError as err:
    print("CompileError:", err)
# CHECK-NEXT: CompileError: no public function @nope to compile; the module has: main, main_adjoint
for bad in (dict(functions=[]), dict(functions=[3]), dict(cache=3)):
    try:
        gradir.compile(m, **bad)
    except TypeError as err:
        print("TypeError:", err)
# CHECK-NEXT: TypeError: functions must name at least one function, not ()
# CHECK-NEXT: TypeError: functions must name at least one function, not (3,)
# CHECK-NEXT: TypeError: cache must be None, True, False or a directory, not 3
# target="cuda" honours functions= too (it compiled everything, an unknown
# name passed: hostile-input review), and a func.func op is no module (an
# IndexError from the bindings).  Lowering only: no GPU needed for the refusal.
try:
    gradir.compile(m, target="cuda", functions=["nope"])
except CompileError as err:
    print("cuda CompileError:", err)
# CHECK-NEXT: cuda CompileError: no public function @nope to compile
try:
    gradir.compile(m.body.operations[0], cache=False)
except TypeError as err:
    print("TypeError:", err)
# CHECK-NEXT: TypeError: gradir.compile expects an MLIR module (gradir.parse(text)), not a 'func.func' op

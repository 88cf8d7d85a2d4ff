# RUN: %PYTHON %s | FileCheck %s
# A user with their own Context and PassManager loads gradir's dialects and
# adds gradir passes next to upstream ones.

from mlir import ir
from mlir.passmanager import PassManager

import gradir
import gradir.passes

SRC = """
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "rlx.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "rlx.add"(%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "rlx.sin"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %c = arith.constant dense<0.0> : tensor<2xf32>
  return %2 : tensor<2xf32>
}
"""


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


@run
def test_user_context_and_pass_manager():
    ctx = ir.Context()
    gradir.load_dialects(ctx)
    gradir.load_dialects(ctx)  # idempotent
    module = ir.Module.parse(SRC, ctx)
    pm = PassManager.parse("builtin.module(canonicalize)", ctx)
    gradir.passes.add(pm, "rlx-cse")
    gradir.passes.add(pm, "rlx-dce")
    pm.add("cse")
    pm.run(module.operation)
    print(module)
# CHECK-LABEL: TEST: test_user_context_and_pass_manager
# CHECK: %[[E:.*]] = "rlx.exp"
# CHECK-NEXT: %[[S:.*]] = "rlx.add"(%[[E]], %[[E]])
# CHECK-NEXT: return %[[S]]


@run
def test_fragment_and_options():
    ctx = ir.Context()
    gradir.load_dialects(ctx)
    module = ir.Module.parse(SRC, ctx)
    pm = PassManager("builtin.module", ctx)
    gradir.passes.add(pm, "rlx-cse,canonicalize,func.func(rlx-dce)")
    pm.run(module.operation)
    print(module)
    try:
        gradir.passes.add(pm, "rlx-dce", bogus=1)
    except ValueError as err:
        print("refused:", err)
# CHECK-LABEL: TEST: test_fragment_and_options
# CHECK-NOT: rlx.sin
# CHECK: return
# CHECK: refused: no such option 'bogus' for pass 'rlx-dce'


@run
def test_run_pipeline_api():
    module = gradir.parse(SRC)
    gradir.run_pipeline(module, "builtin.module(rlx-cse,rlx-dce)")
    text = gradir.print_module(module)
    print(text.count("rlx.exp"), "exp;", text.count("arith.constant"), "constants")
    # Determinism: the same input gives byte-identical IR.
    again = gradir.run_pipeline(gradir.parse(SRC), "builtin.module(rlx-cse,rlx-dce)")
    print("identical:", gradir.print_module(again) == text)
# CHECK-LABEL: TEST: test_run_pipeline_api
# CHECK: 1 exp; 0 constants
# CHECK: identical: True


@run
def test_failure_is_located():
    bad = gradir.parse(SRC, source_name="user.mlir")
    try:
        gradir.run_pipeline(bad, "builtin.module(rlx-dce,no-such-pass)")
    except ValueError as err:
        print("pipeline error at column", err.column, "-", err)
# CHECK-LABEL: TEST: test_failure_is_located
# CHECK: pipeline error at column 24 - 'no-such-pass' does not refer to a registered pass

# RUN: %PYTHON %s %gradir_src | FileCheck %s
# sum(matmul(a, b)) -> sum(sum(a, -2) * sum(b, -1)) and matmuls with a splat
# operand -> scaled row/column sums (algebra.sum_of_matmul / matmul_of_splat):
# every function of the FileCheck test's contraction section, and the seed's
# adjoints in all four transpose forms (f64), give the interpreter's values
# before and after rlx-simplify-gradient, and no matmul is left where the
# patterns apply.

import os
import sys

import numpy as np
from mlir import ir

import gradir
from gradir.ir import find_function, function_type

SRC = sys.argv[1]
rng = np.random.default_rng(0)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def arrays(fn):
    out = []
    for t in function_type(fn).inputs:
        t = ir.RankedTensorType(t)
        shape = list(t.shape)
        dt = {"f32": np.float32, "f64": np.float64}[str(t.element_type)]
        out.append(rng.standard_normal(shape).astype(dt))
    return out


def compare(text, names, simplify):
    before = gradir.parse(text)
    after = gradir.parse(text)
    gradir.run_pipeline(after, simplify)
    for name in names:
        args = arrays(find_function(before.operation, name))
        want = gradir.interpret(before, name, *args)
        got = gradir.interpret(after, name, *args)
        tol = 1e-4 if args[0].dtype == np.float32 else 1e-10
        ok = all(np.allclose(g, w, rtol=tol, atol=tol) and np.shape(g) == np.shape(w)
                 for g, w in zip(got, want))
        body = str(find_function(after.operation, name))
        print(name, "equal" if ok else "DIFFERENT", "matmuls:", body.count('"rlx.matmul"'))


@run
def test_filecheck_functions():
    path = os.path.join(SRC, "test", "transforms", "rlx-simplify-gradient.mlir")
    text = open(path).read()
    start = text.index("// --- contractions reduced to vector products")
    compare(text[start:], ["sum_of_matmul", "sum_of_batch_matmul_keepdims", "matmul_of_splat",
                           "sum_of_matmul_not"], "builtin.module(rlx-simplify-gradient)")
# CHECK-LABEL: TEST: test_filecheck_functions
# CHECK-NEXT: sum_of_matmul equal matmuls: 0
# CHECK-NEXT: sum_of_batch_matmul_keepdims equal matmuls: 0
# CHECK-NEXT: matmul_of_splat equal matmuls: 0
# CHECK-NEXT: sum_of_matmul_not equal matmuls: 4


@run
def test_seed_adjoints():
    for expr, sa, sb in [("%a, %b", "4x3", "3x5"), ("%at, %b", "3x4", "3x5"),
                         ("%a, %bt", "4x3", "5x3"), ("%at, %bt", "3x4", "5x3")]:
        ta, tb = f"tensor<{sa}xf64>", f"tensor<{sb}xf64>"
        ra, rb = sa.split("x")[::-1], sb.split("x")[::-1]
        text = f"""
func.func @main(%a: {ta}, %b: {tb}) -> tensor<f64> {{
  %at = "rlx.permute_dims"(%a) : ({ta}) -> tensor<{'x'.join(ra)}xf64>
  %bt = "rlx.permute_dims"(%b) : ({tb}) -> tensor<{'x'.join(rb)}xf64>
  %m = "rlx.matmul"({expr}) : ({ta if '%at' not in expr else f"tensor<{'x'.join(ra)}xf64>"}, {tb if '%bt' not in expr else f"tensor<{'x'.join(rb)}xf64>"}) -> tensor<4x5xf64>
  %s = "rlx.sum"(%m) : (tensor<4x5xf64>) -> tensor<f64>
  return %s : tensor<f64>
}}"""
        raw = gradir.parse(text)
        gradir.run_pipeline(raw, "builtin.module(rlx-gradient{simplify=false})")
        compare(str(raw), ["main_adjoint"], "builtin.module(rlx-simplify-gradient)")
# CHECK-LABEL: TEST: test_seed_adjoints
# CHECK-COUNT-4: main_adjoint equal matmuls: 0

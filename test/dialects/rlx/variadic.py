# RUN: %PYTHON %s %mlir-opt-gradir | FileCheck %s
# The variadic ops in the contract's natural form (issue 12): "rlx.concat"(...),
# "rlx.tuple"(...) and %p:N = "rlx.split"(...) with any number of mixed-shape values
# and no segment attribute, in a callee and inside an scf.for body.  gradir prints
# them the same way; print_module(segments=True) (gradir-opt --print-segment-sizes)
# adds the segment attribute upstream `mlir-opt --irdl-file=build/gradir.irdl.mlir`
# needs (one entry per run of equal types).  Both forms re-parse in gradir.

import subprocess
import sys

import numpy as np

import gradir
from gradir import interpret
from gradir.ir import print_module

MLIR_OPT = sys.argv[1:]
rng = np.random.default_rng(0)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def t(n: int) -> str:
    return f"tensor<1x{n}xf64>"


SIZES = [1 + i % 4 for i in range(100)]          # 100 parts of mixed widths
WIDTH = sum(SIZES)


def program() -> str:
    """@main splits x 100 ways, calls @join (a 200-value concat of the parts and
    their exps, and a 50-element tuple), and sums."""
    idx = np.cumsum(SIZES)[:-1].tolist()
    parts = ", ".join(f"%p#{i}" for i in range(100))
    ptypes = ", ".join(t(s) for s in SIZES)
    lines = [f"func.func private @join({', '.join(f'%a{i}: {t(s)}' for i, s in enumerate(SIZES))})"
             f" -> ({t(2 * WIDTH)}, {t(SIZES[7])}) {{"]
    for i, s in enumerate(SIZES):
        lines.append(f'  %e{i} = "rlx.exp"(%a{i}) : ({t(s)}) -> {t(s)}')
    vals = ", ".join(f"%a{i}, %e{i}" for i in range(100))
    vtypes = ", ".join(f"{t(s)}, {t(s)}" for s in SIZES)
    lines.append(f'  %c = "rlx.concat"({vals}) {{axis = array<i64: 1>}} : ({vtypes}) -> {t(2 * WIDTH)}')
    tt = ", ".join(t(s) for s in SIZES[:50])
    lines.append(f'  %tu = "rlx.tuple"({", ".join(f"%e{i}" for i in range(50))}) : ({tt}) -> tuple<{tt}>')
    lines.append(f'  %g = "rlx.tuple_get_item"(%tu) {{index = 7 : i64}} : (tuple<{tt}>) -> {t(SIZES[7])}')
    lines.append(f"  return %c, %g : {t(2 * WIDTH)}, {t(SIZES[7])}")
    lines.append("}")
    lines.append(f"func.func @main(%x: {t(WIDTH)}) -> tensor<f64> {{")
    lines.append(f'  %p:100 = "rlx.split"(%x) {{axis = array<i64: 1>, indices = array<i64: {", ".join(map(str, idx))}>}}'
                 f" : ({t(WIDTH)}) -> ({ptypes})")
    lines.append(f"  %c, %g = func.call @join({parts}) : ({ptypes}) -> ({t(2 * WIDTH)}, {t(SIZES[7])})")
    lines.append(f'  %s1 = "rlx.sum"(%c) : ({t(2 * WIDTH)}) -> tensor<f64>')
    lines.append(f'  %s2 = "rlx.sum"(%g) : ({t(SIZES[7])}) -> tensor<f64>')
    lines.append('  %s = "rlx.add"(%s1, %s2) : (tensor<f64>, tensor<f64>) -> tensor<f64>')
    lines.append("  return %s : tensor<f64>")
    lines.append("}")
    return "\n".join(lines) + "\n"


LOOP = """func.func @loop(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %st = arith.constant 1 : index
  %init = "rlx.concat"(%x, %y) {axis = array<i64: 1>} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %init) -> (tensor<2x4xf32>) {
    %p:3 = "rlx.split"(%acc) {axis = array<i64: 1>, indices = array<i64: 1, 3>} : (tensor<2x4xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x1xf32>)
    %q = "rlx.concat"(%p#2, %p#1, %p#0) {axis = array<i64: 1>} : (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
    scf.yield %q : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
"""


def upstream(text: str) -> str:
    out = subprocess.run(MLIR_OPT + ["-"], input=text, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[:2000]
    return out.stdout


@run
def natural_form_round_trip():
    for name, text in (("program", program()), ("loop", LOOP)):
        module = gradir.parse(text)
        printed = print_module(module)
        assert "SegmentSizes" not in printed
        assert print_module(gradir.parse(printed)) == printed          # gradir -> gradir
        segmented = print_module(module, segments=True)
        assert "operandSegmentSizes" in segmented
        again = print_module(gradir.parse(upstream(segmented)))         # gradir -> mlir-opt -> gradir
        assert again == printed, name
        print(name, "ok:", printed.count('"rlx.concat"'), "concat,",
              printed.count('"rlx.split"'), "split,", printed.count('"rlx.tuple"'), "tuple")
# CHECK-LABEL: TEST: natural_form_round_trip
# CHECK: program ok: 1 concat, 1 split, 1 tuple
# CHECK: loop ok: 2 concat, 1 split, 0 tuple


@run
def gradients():
    x = rng.standard_normal((1, WIDTH))
    module = gradir.parse(program())
    gradir.run_pipeline(module, "builtin.module(rlx-gradient)")
    loss, grad = interpret(module, "main_adjoint", x)
    cols = slice(sum(SIZES[:7]), sum(SIZES[:8]))
    expect = 1 + np.exp(x)
    expect[:, cols] += np.exp(x[:, cols])
    assert np.allclose(grad, expect), np.abs(grad - expect).max()
    assert np.isclose(loss, x.sum() + np.exp(x).sum() + np.exp(x[:, cols]).sum())
    got = gradir.compile(module)["main_adjoint"](x)
    assert np.allclose(got[1], grad, rtol=1e-12) and np.isclose(got[0], loss)
    adj = print_module(module)
    print("adjoint has", adj.count('"rlx.split"'), "split and", adj.count('"rlx.concat"'), "concat")
# CHECK-LABEL: TEST: gradients
# CHECK: adjoint has {{[0-9]+}} split and {{[0-9]+}} concat


@run
def gradient_tool():
    # gradir-opt's output of the natural form re-parses in upstream mlir-opt with
    # --print-segment-sizes, and in gradir-opt without it.
    opt = [sys.executable, "-m", "gradir.tools.gradir_opt"]
    out = subprocess.run(opt + ["-", "--rlx-gradient", "--print-segment-sizes"], input=program(),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[:2000]
    back = subprocess.run(opt + ["-"], input=upstream(out.stdout), capture_output=True, text=True)
    assert back.returncode == 0 and "SegmentSizes" not in back.stdout, back.stderr[:2000]
    print("main_adjoint" in back.stdout)
# CHECK-LABEL: TEST: gradient_tool
# CHECK: True


@run
def many_values():
    # 1000 values of one type are one run; 256 runs of alternating types are the most
    # the dialect holds (a located error beyond).
    same = ", ".join(["%a"] * 1000)
    text = (f'func.func @f(%a: tensor<1xf32>) -> tensor<1000xf32> {{\n'
            f'  %0 = "rlx.concat"({same}) : ({", ".join(["tensor<1xf32>"] * 1000)}) -> tensor<1000xf32>\n'
            f'  return %0 : tensor<1000xf32>\n}}\n')
    print("1000 same:", len(print_module(gradir.parse(text))) > 0)
    for n in (256, 257):
        vals = ", ".join("%a" if i % 2 == 0 else "%b" for i in range(n))
        types = ", ".join("tensor<1xf32>" if i % 2 == 0 else "tensor<2xf32>" for i in range(n))
        text = (f"func.func @f(%a: tensor<1xf32>, %b: tensor<2xf32>) {{\n"
                f'  %0 = "rlx.tuple"({vals}) : ({types}) -> tuple<{types}>\n  return\n}}\n')
        try:
            gradir.parse(text, source_name="runs.mlir")
            print(n, "runs: ok")
        except Exception as err:
            print(n, "runs:", str(err).splitlines()[0])
# CHECK-LABEL: TEST: many_values
# CHECK: 1000 same: True
# CHECK: 256 runs: ok
# CHECK: 257 runs: runs.mlir:2:8: error: 'rlx.tuple' op has 257 runs of values of different types; the dialect holds at most 256

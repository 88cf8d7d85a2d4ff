# RUN: %PYTHON %s | FileCheck %s
# Hostile inputs get a located error or one documented exception type, never
# a signal, a traceback or an "internal error": deep nesting (5000 nested
# modules overflowed the C++ parser's stack, 1000 gave a RecursionError,
# tuples 1000 deep in rlx-gradient), random inputs too large to allocate,
# non-text and None arguments of the Python API.

import os
import subprocess
import sys
import tempfile

import gradir

BIN = os.path.dirname(sys.executable)
tmp = tempfile.mkdtemp(prefix="gradir-hostile-")


def tool(name, text, *args):
    path = os.path.join(tmp, "in.mlir")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([os.path.join(BIN, name), path, *args], capture_output=True, text=True)
    err = r.stderr.strip().splitlines()
    first = err[0].replace(path, "in.mlir") if err else ""
    bad = "Traceback" in r.stderr or "internal error" in r.stderr or r.returncode < 0
    print(f"{name} exit {r.returncode} clean {not bad}: {first}")


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def nested_tuple(n):
    t = "tensor<f32>"
    for _ in range(n):
        t = f"tuple<{t}>"
    return t


@run
def deep_nesting():
    for n in (1000, 5000):
        tool("gradir-opt", "module {" * n + "}" * n)
    tool("gradir-opt", f"func.func @main(%x: {nested_tuple(1000)}, %y: tensor<f32>) -> "
                       "tensor<f32> {\n  return %y : tensor<f32>\n}\n", "--rlx-gradient")
    tool("gradir-run", "module {" * 5000 + "}" * 5000)
    # 150 levels are fine.
    tool("gradir-opt", "module {" * 150 + "}" * 150, "--rlx-dce")
# CHECK-LABEL: TEST: deep_nesting
# CHECK: gradir-opt exit 1 clean True: in.mlir:1:1608: error: nesting deeper than 200 levels is not supported
# CHECK: gradir-opt exit 1 clean True: in.mlir:1:1608: error: nesting deeper than 200 levels is not supported
# CHECK: gradir-opt exit 1 clean True: in.mlir:1:1220: error: nesting deeper than 200 levels is not supported
# CHECK: gradir-run exit 1 clean True: in.mlir:1:1608: error: nesting deeper than 200 levels is not supported
# CHECK: gradir-opt exit 0 clean True:


@run
def huge_random_inputs():
    t = "tensor<250000000000xf32>"
    tool("gradir-run", f"func.func @main(%x: {t}) -> {t} {{\n  return %x : {t}\n}}\n",
         "--random-inputs", "0")
# CHECK-LABEL: TEST: huge_random_inputs
# CHECK: gradir-run exit 1 clean True: in.mlir:1:1: error: not enough memory for @main's random inputs


@run
def python_api():
    for call, what in ((lambda: gradir.parse(None), "parse(None)"),
                       (lambda: gradir.parse(b"\xff"), "parse(bad bytes)"),
                       (lambda: gradir.parse("module {" * 5000 + "}" * 5000), "parse(deep)"),
                       (lambda: gradir.run_pipeline(gradir.parse("module {}"), None),
                        "run_pipeline(m, None)"),
                       (lambda: gradir.run_pipeline(None, "builtin.module()"),
                        "run_pipeline(None, p)")):
        try:
            call()
            print(what, "accepted")
        except (TypeError, ValueError) as err:
            print(what, type(err).__name__)
    print("parse(bytes):", type(gradir.parse(b"module {}")).__name__)
# CHECK-LABEL: TEST: python_api
# CHECK: parse(None) TypeError
# CHECK: parse(bad bytes) TypeError
# CHECK: parse(deep) ValueError
# CHECK: run_pipeline(m, None) TypeError
# CHECK: run_pipeline(None, p) TypeError
# CHECK: parse(bytes): ModuleOp

# RUN: %PYTHON %s %gradir_src | FileCheck %s
# Gradients of several strided_slices of one value (simplify/concat.py):
# slices that cover the value (a Transformer's q, k, v cut from one
# projection's output) get one concat of their adjoints, no zero-padded
# copy and no add; slices with a gap, overlapping slices, reversed slices
# and slices along two axes keep their values.  Every gradient is checked
# against central finite differences (float64, the reference interpreter)
# and recorded for the compiled-code oracle; the functions of
# test/transforms/rlx-simplify-gradient-concat.mlir keep their values
# through rlx-simplify-gradient (interpreter, and compiled by the oracle).

import os
import sys

import numpy as np
from mlir import ir

import gradir
import gradir.testing as testing
import gradir.testing.oracle  # noqa: F401  (compiled-code oracle)
from gradir import interpret
from gradir.ir import find_function

SRC = sys.argv[1]
rng = np.random.default_rng(7)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def arr(v):
    return "array<i64: " + ", ".join(str(int(x)) for x in v) + ">"


def t(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f64>"


def slice_text(shape, cuts, axis):
    """@main(x, w): x sliced along ``axis`` by ``cuts`` ((begin, end,
    stride) each), slice i multiplied by tanh of the weight's slice i and
    summed: each slice gets its own adjoint."""
    lines, total = [], []
    for i, (b, e, s) in enumerate(cuts):
        n = len(range(*slice(b, e, s).indices(shape[axis])))
        out = list(shape)
        out[axis] = n
        lines.append(f'  %s{i} = "rlx.strided_slice"(%x) {{axes = {arr([axis])}, begin = '
                     f'{arr([b])}, end = {arr([e])}, strides = {arr([s])}}} : '
                     f'({t(shape)}) -> {t(out)}')
        lines.append(f'  %c{i} = "rlx.strided_slice"(%w) {{axes = {arr([axis])}, begin = '
                     f'{arr([b])}, end = {arr([e])}, strides = {arr([s])}}} : '
                     f'({t(shape)}) -> {t(out)}')
        lines.append(f'  %h{i} = "rlx.tanh"(%c{i}) : ({t(out)}) -> {t(out)}')
        lines.append(f'  %m{i} = "rlx.multiply"(%s{i}, %h{i}) : ({t(out)}, {t(out)}) -> {t(out)}')
        lines.append(f'  %r{i} = "rlx.sum"(%m{i}) : ({t(out)}) -> tensor<f64>')
        total.append(f"%r{i}")
    acc = total[0]
    for i, r in enumerate(total[1:]):
        lines.append(f'  %acc{i} = "rlx.add"({acc}, {r}) : '
                     f'(tensor<f64>, tensor<f64>) -> tensor<f64>')
        acc = f"%acc{i}"
    body = "\n".join(lines)
    return (f"func.func @main(%x: {t(shape)}, %w: {t(shape)}) -> tensor<f64> {{\n{body}\n"
            f"  return {acc} : tensor<f64>\n}}\n")


def adjoint_ops(text):
    module = testing.gradient_module(text, wrt=[0])
    fn = find_function(module.operation, "main_adjoint")
    # the forward's scalar additions left out: the adjoint's sums are tensors
    return [op.operation.name for op in fn.regions[0].blocks[0].operations
            if op.operation.name != "rlx.add"
            or ir.RankedTensorType(op.operation.results[0].type).rank > 0]


def check(shape, cuts, axis):
    text = slice_text(shape, cuts, axis)
    args = [rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)]
    testing.check_gradient(text, args, wrt=[0, 1])
    ops = adjoint_ops(text)
    return ops.count("rlx.add"), ops.count("rlx.zeros"), ops.count("rlx.concat")


@run
def covering():
    # q, k, v: three equal slices along the first axis, then the last
    print("qkv axis 0 (add, zeros, concat):",
          check((3, 4, 5), [(0, 1, 1), (1, 2, 1), (2, 3, 1)], 0))
    print("qkv axis -1:", check((2, 3, 6), [(0, 2, 1), (2, 4, 1), (4, 6, 1)], -1))
    # unequal slices, listed out of order
    print("unequal:", check((7, 2), [(3, 7, 1), (0, 1, 1), (1, 3, 1)], 0))
    # two halves, one of them reversed (its adjoint flipped first)
    print("reversed half:", check((6, 3), [(0, 3, 1), (5, 2, -1)], 0))
# CHECK-LABEL: TEST: covering
# CHECK: qkv axis 0 (add, zeros, concat): (0, 0, 1)
# CHECK: qkv axis -1: (0, 0, 1)
# CHECK: unequal: (0, 0, 1)
# CHECK: reversed half: (0, 0, 1)


@run
def not_covering():
    # a gap: zeros there, still one concat and no add
    print("gap:", check((5, 3), [(0, 1, 1), (3, 5, 1)], 0))
    # overlapping slices: a real sum stays
    adds, _, _ = check((5, 3), [(0, 3, 1), (2, 5, 1)], 0)
    print("overlap keeps an add:", adds >= 1)
    # strided (every other row): scattered, not padded; values checked
    check((6, 2), [(0, 6, 2), (1, 6, 2)], 0)
    # slices along two axes (pads of pads)
    text = """
func.func @main(%x: tensor<4x6xf64>) -> tensor<f64> {
  %a = "rlx.strided_slice"(%x) {axes = array<i64: 0, 1>, begin = array<i64: 0, 0>, end = array<i64: 2, 3>} : (tensor<4x6xf64>) -> tensor<2x3xf64>
  %b = "rlx.strided_slice"(%x) {axes = array<i64: 0, 1>, begin = array<i64: 2, 3>, end = array<i64: 4, 6>} : (tensor<4x6xf64>) -> tensor<2x3xf64>
  %c = "rlx.strided_slice"(%x) {axes = array<i64: 1>, begin = array<i64: 0>, end = array<i64: 3>} : (tensor<4x6xf64>) -> tensor<4x3xf64>
  %ea = "rlx.exp"(%a) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %p = "rlx.multiply"(%ea, %b) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %sc = "rlx.sin"(%c) : (tensor<4x3xf64>) -> tensor<4x3xf64>
  %s1 = "rlx.sum"(%p) : (tensor<2x3xf64>) -> tensor<f64>
  %s2 = "rlx.sum"(%sc) : (tensor<4x3xf64>) -> tensor<f64>
  %s = "rlx.add"(%s1, %s2) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %s : tensor<f64>
}
"""
    testing.check_gradient(text, [rng.uniform(-1, 1, (4, 6))], wrt=[0])
    print("not covering ok")
# CHECK-LABEL: TEST: not_covering
# CHECK: gap: (0, 1, 1)
# CHECK: overlap keeps an add: True
# CHECK: not covering ok


@run
def projection():
    # a Transformer's QKV: one matmul, its output cut into q, k, v along the
    # last axis, scores q k^T, softmax, times v
    text = """
func.func @main(%x: tensor<4x3xf64>, %w: tensor<3x6xf64>) -> tensor<f64> {
  %y = "rlx.matmul"(%x, %w) : (tensor<4x3xf64>, tensor<3x6xf64>) -> tensor<4x6xf64>
  %q = "rlx.strided_slice"(%y) {axes = array<i64: 1>, begin = array<i64: 0>, end = array<i64: 2>} : (tensor<4x6xf64>) -> tensor<4x2xf64>
  %k = "rlx.strided_slice"(%y) {axes = array<i64: 1>, begin = array<i64: 2>, end = array<i64: 4>} : (tensor<4x6xf64>) -> tensor<4x2xf64>
  %v = "rlx.strided_slice"(%y) {axes = array<i64: 1>, begin = array<i64: 4>, end = array<i64: 6>} : (tensor<4x6xf64>) -> tensor<4x2xf64>
  %kt = "rlx.permute_dims"(%k) : (tensor<4x2xf64>) -> tensor<2x4xf64>
  %s = "rlx.matmul"(%q, %kt) : (tensor<4x2xf64>, tensor<2x4xf64>) -> tensor<4x4xf64>
  %p = "rlx.softmax"(%s) {axis = array<i64: -1>} : (tensor<4x4xf64>) -> tensor<4x4xf64>
  %o = "rlx.matmul"(%p, %v) : (tensor<4x4xf64>, tensor<4x2xf64>) -> tensor<4x2xf64>
  %o2 = "rlx.multiply"(%o, %o) : (tensor<4x2xf64>, tensor<4x2xf64>) -> tensor<4x2xf64>
  %r = "rlx.sum"(%o2) : (tensor<4x2xf64>) -> tensor<f64>
  return %r : tensor<f64>
}
"""
    testing.check_gradient(text, [rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3, 6))])
    ops = adjoint_ops(text)
    print("projection: zeros", ops.count("rlx.zeros"), "concat", ops.count("rlx.concat"))
# CHECK-LABEL: TEST: projection
# CHECK: projection: zeros 0 concat 1


@run
def pattern_cases():
    """The FileCheck cases keep their values through the simplifier."""
    from gradir.autodiff.simplify import simplify_function
    path = os.path.join(SRC, "test", "transforms", "rlx-simplify-gradient-concat.mlir")
    with open(path) as f:
        text = f.read()
    before, after = gradir.parse(text), gradir.parse(text)
    names = []
    for op in after.body.operations:
        op = op.operation
        name = ir.StringAttr(op.attributes["sym_name"]).value
        simplify_function(op)
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        args = []
        for ty in ftype.inputs:
            ty = ir.RankedTensorType(ty)
            dtype = np.float64 if str(ty.element_type) == "f64" else np.float32
            args.append(rng.standard_normal(list(ty.shape)).astype(dtype))
        want = interpret(before, name, *args)
        got = interpret(after, name, *args)
        for k, (g, w) in enumerate(zip(got, want)):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(g, w, err_msg=f"@{name} result {k}")
        testing.oracle.record(after, name, args)
        names.append(name)
    print(f"{len(names)} cases keep their values")
# CHECK-LABEL: TEST: pattern_cases
# CHECK: 9 cases keep their values

# RUN: %PYTHON %s | FileCheck %s
# VJP and JVP rules of the shape ops, checked against finite differences
# (JVP: mode=jvp along random tangents and, batched, mode=jacobian).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from gradir.testing import check_jacobian, check_jvp, gradient_module  # noqa: E402
from grad_helpers import (arr, check_op, check_op_jvp, check_text, op_text, rand, run,  # noqa: E402
                          seg, ttype)


@run
def test_permute_dims():
    x = rand((2, 3, 4))
    check_op('"rlx.permute_dims"(%a0) {axes = array<i64: 1, 2, 0>}', [x], (3, 4, 2))
    check_op('"rlx.permute_dims"(%a0) {axes = array<i64: -1, 0, -2>}', [x], (4, 2, 3))
    check_op('"rlx.permute_dims"(%a0)', [x], (4, 3, 2))          # absent: reversed
    print("permute_dims ok")
# CHECK-LABEL: TEST: test_permute_dims
# CHECK: permute_dims ok


@run
def test_reshape_family():
    x = rand((2, 3, 4))
    check_op('"rlx.reshape"(%a0)', [x], (6, 4))
    check_op('"rlx.reshape"(%a0)', [x], (4, 1, 6))
    print("reshape ok")
    check_op('"rlx.expand_dims"(%a0) {axis = array<i64: 1>}', [x], (2, 1, 3, 4))
    check_op('"rlx.expand_dims"(%a0) {axis = array<i64: 0, -1>}', [x], (1, 2, 3, 4, 1))
    print("expand_dims ok")
    y = rand((2, 1, 3, 1))
    check_op('"rlx.squeeze"(%a0) {axis = array<i64: 1>}', [y], (2, 3, 1))
    check_op('"rlx.squeeze"(%a0) {axis = array<i64: -1>}', [y], (2, 1, 3))
    check_op('"rlx.squeeze"(%a0)', [y], (2, 3))
    print("squeeze ok")
    check_op('"rlx.flatten"(%a0)', [x], (24,))
    print("flatten ok")
# CHECK-LABEL: TEST: test_reshape_family
# CHECK: reshape ok
# CHECK: expand_dims ok
# CHECK: squeeze ok
# CHECK: flatten ok


@run
def test_broadcast_to():
    check_op('"rlx.broadcast_to"(%a0)', [rand((3,))], (2, 3))
    check_op('"rlx.broadcast_to"(%a0)', [rand((2, 1, 3))], (4, 2, 5, 3))
    check_op('"rlx.broadcast_to"(%a0)', [rand(())], (2, 2))
    check_op('"rlx.broadcast_to"(%a0)', [rand((2, 3))], (2, 3))
    print("broadcast_to ok")
# CHECK-LABEL: TEST: test_broadcast_to
# CHECK: broadcast_to ok


@run
def test_concat():
    a, b, c = rand((2, 1, 3)), rand((2, 4, 3)), rand((2, 2, 3))
    check_op(f'"rlx.concat"(%a0, %a1, %a2) {{axis = array<i64: 1>, operandSegmentSizes = {seg(3)}}}',
             [a, b, c], (2, 7, 3))
    check_op(f'"rlx.concat"(%a0, %a1) {{axis = array<i64: -1>, operandSegmentSizes = {seg(2)}}}',
             [rand((2, 3)), rand((2, 5))], (2, 8))
    check_op(f'"rlx.concat"(%a0, %a1) {{operandSegmentSizes = {seg(2)}}}',    # absent: 0
             [rand((1, 3)), rand((2, 3))], (3, 3))
    check_op(f'"rlx.concat"(%a0) {{axis = array<i64: 0>, operandSegmentSizes = {seg(1)}}}',
             [rand((2, 3))], (2, 3))
    # the same value twice: adjoints accumulate
    check_op(f'"rlx.concat"(%a0, %a0) {{axis = array<i64: 0>, operandSegmentSizes = {seg(2)}}}',
             [rand((2, 3))], (4, 3), in_types=f"{ttype((2, 3))}, {ttype((2, 3))}")
    print("concat ok")
# CHECK-LABEL: TEST: test_concat
# CHECK: concat ok


def split_text(shape, attrs, out_shapes, used):
    """@main: split %x, weight and sum the results listed in ``used`` (the
    others get no adjoint: the rule fills zeros)."""
    n = len(out_shapes)
    outs = ", ".join(ttype(s) for s in out_shapes)
    ws = ", ".join(f"%w{i}: {ttype(out_shapes[i])}" for i in used)
    lines = [f'  %y:{n} = "rlx.split"(%x) {{{attrs}, resultSegmentSizes = {seg(n)}}} '
             f': ({ttype(shape)}) -> ({outs})']
    acc = None
    for i in used:
        t = ttype(out_shapes[i])
        lines.append(f'  %p{i} = "rlx.multiply"(%y#{i}, %w{i}) : ({t}, {t}) -> {t}')
        lines.append(f'  %s{i} = "rlx.sum"(%p{i}) : ({t}) -> tensor<f64>')
        if acc is None:
            acc = f"%s{i}"
        else:
            lines.append(f'  %t{i} = "rlx.add"({acc}, %s{i}) : (tensor<f64>, tensor<f64>) -> tensor<f64>')
            acc = f"%t{i}"
    body = "\n".join(lines)
    return f"""
func.func @main(%x: {ttype(shape)}, {ws}) -> tensor<f64> {{
{body}
  return {acc} : tensor<f64>
}}
"""


@run
def test_split():
    x = rand((6, 4))
    # sections form, all results used
    outs = [(2, 4)] * 3
    check_text(split_text((6, 4), "axis = array<i64: 0>, sections = 3 : i64", outs, [0, 1, 2]),
               [x] + [rand(s) for s in outs], wrt=[0])
    # sections form, middle result unused (its adjoint is zeros)
    check_text(split_text((6, 4), "axis = array<i64: 0>, sections = 3 : i64", outs, [0, 2]),
               [x, rand(outs[0]), rand(outs[2])], wrt=[0])
    # indices form, negative axis, only the last result used
    outs = [(6, 1), (6, 2), (6, 1)]
    check_text(split_text((6, 4), "axis = array<i64: -1>, indices = array<i64: 1, 3>", outs, [2]),
               [x, rand(outs[2])], wrt=[0])
    check_text(split_text((6, 4), "axis = array<i64: 1>, indices = array<i64: 1, 3>", outs,
                          [0, 1, 2]), [x] + [rand(s) for s in outs], wrt=[0])
    print("split ok")
# CHECK-LABEL: TEST: test_split
# CHECK: split ok


def slice_shape(shape, axes, begin, end, strides):
    idx = [slice(None)] * len(shape)
    for a, b, e, s in zip(axes, begin, end, strides):
        idx[a] = slice(b, e, s)
    return np.zeros(shape)[tuple(idx)].shape


@run
def test_strided_slice():
    x = rand((5, 6, 4))
    cases = [
        ([1], [1], [4], [1]),                    # contiguous
        ([0, 2], [1, 0], [5, 3], [2, 1]),        # stride 2
        ([1], [5], [-7], [-1]),                  # full reversal (stride -1)
        ([1], [4], [0], [-2]),                   # negative stride 2
        ([0, 1, 2], [-1, 0, 3], [0, 6, -5], [-3, 3, -1]),
        ([-1], [1], [100], [1]),                 # end clamped, negative axis
        ([2], [2], [3], [5]),                    # single element, big stride
    ]
    for axes, begin, end, strides in cases:
        so = slice_shape(x.shape, axes, begin, end, strides)
        check_op(f'"rlx.strided_slice"(%a0) {{axes = {arr(axes)}, begin = {arr(begin)}, '
                 f'end = {arr(end)}, strides = {arr(strides)}}}', [x], so)
    check_op(f'"rlx.strided_slice"(%a0) {{axes = {arr([0])}, begin = {arr([1])}, '
             f'end = {arr([3])}}}', [x], (2, 6, 4))            # absent strides
    print("strided_slice ok")
# CHECK-LABEL: TEST: test_strided_slice
# CHECK: strided_slice ok


@run
def test_take():
    x = rand((4, 5, 3))
    for dt in (np.int64, np.int32):
        idx = np.array([3, 0, 3, 1], dtype=dt)                  # repeated index
        check_op('"rlx.take"(%a0, %a1) {axis = array<i64: 0>}', [x, idx], (4, 5, 3))
        idx2 = np.array([[4, 0], [2, 2], [1, 3]], dtype=dt)
        check_op('"rlx.take"(%a0, %a1) {axis = array<i64: 1>}', [x, idx2], (4, 3, 2, 3))
        check_op('"rlx.take"(%a0, %a1) {axis = array<i64: -1>}', [x, idx2 % 3], (4, 5, 3, 2))
        idx0 = np.array(2, dtype=dt)                             # 0-d index
        check_op('"rlx.take"(%a0, %a1) {axis = array<i64: 1>}', [x, idx0], (4, 3))
        flat = np.array([0, 59, 17, 17], dtype=dt)               # absent axis: flattened
        check_op('"rlx.take"(%a0, %a1)', [x, flat], (4,))
        neg = np.array([-1, 0, -4], dtype=dt)                    # negative: from the end
        check_op('"rlx.take"(%a0, %a1) {axis = array<i64: 0>}', [x, neg], (3, 5, 3))
    print("take ok")
# CHECK-LABEL: TEST: test_take
# CHECK: take ok


@run
def test_triu():
    for k in (0, 1, -1, 2):
        check_op(f'"rlx.triu"(%a0) {{k = {k} : i64}}', [rand((4, 5))], (4, 5))
    check_op('"rlx.triu"(%a0) {k = 0 : i64}', [rand((2, 3, 3))], (2, 3, 3))
    print("triu ok")
# CHECK-LABEL: TEST: test_triu
# CHECK: triu ok


# --- JVP rules ------------------------------------------------------------------
# check_op_jvp checks @main_jvp against directional differences and
# @main_jacobian against the finite-difference Jacobian.  jacobian-mode=auto
# takes reverse rows (the JVP of the VJP's ops) when the result has fewer
# elements than the operands, so check_fwd also forces forward columns: the
# rule itself with a batch of basis vectors.


def check_fwd(op_text_, args, result_shape, wrt=None, in_types=None):
    check_op_jvp(op_text_, args, result_shape, wrt=wrt, in_types=in_types)
    check_jacobian(op_text(op_text_, args, result_shape, in_types), [np.asarray(a) for a in args],
                   wrt=wrt, jacobian_mode="forward")

@run
def test_permute_dims_jvp():
    x = rand((2, 3, 4))
    check_fwd('"rlx.permute_dims"(%a0) {axes = array<i64: 1, 2, 0>}', [x], (3, 4, 2))
    check_fwd('"rlx.permute_dims"(%a0) {axes = array<i64: -1, 0, -2>}', [x], (4, 2, 3))
    check_fwd('"rlx.permute_dims"(%a0)', [x], (4, 3, 2))      # absent: reversed
    print("permute_dims jvp ok")
# CHECK-LABEL: TEST: test_permute_dims_jvp
# CHECK: permute_dims jvp ok


@run
def test_reshape_family_jvp():
    x = rand((2, 3, 4))
    check_fwd('"rlx.reshape"(%a0)', [x], (6, 4))
    check_fwd('"rlx.reshape"(%a0)', [x], (4, 1, 6))
    print("reshape jvp ok")
    check_fwd('"rlx.expand_dims"(%a0) {axis = array<i64: 1>}', [x], (2, 1, 3, 4))
    check_fwd('"rlx.expand_dims"(%a0) {axis = array<i64: 0, -1>}', [x], (1, 2, 3, 4, 1))
    print("expand_dims jvp ok")
    y = rand((2, 1, 3, 1))
    check_fwd('"rlx.squeeze"(%a0) {axis = array<i64: 1>}', [y], (2, 3, 1))
    check_fwd('"rlx.squeeze"(%a0) {axis = array<i64: -1>}', [y], (2, 1, 3))
    check_fwd('"rlx.squeeze"(%a0)', [y], (2, 3))              # absent: every size-1 axis
    check_fwd('"rlx.squeeze"(%a0)', [rand((2, 3))], (2, 3))   # ... of which there is none
    # a size-1 result: the Jacobian's batch has size 1 too (absent axis must
    # not squeeze it)
    check_fwd('"rlx.squeeze"(%a0)', [rand((1, 1))], ())
    print("squeeze jvp ok")
    check_fwd('"rlx.flatten"(%a0)', [x], (24,))
    check_fwd('"rlx.flatten"(%a0)', [rand(())], (1,))
    print("flatten jvp ok")
# CHECK-LABEL: TEST: test_reshape_family_jvp
# CHECK: reshape jvp ok
# CHECK: expand_dims jvp ok
# CHECK: squeeze jvp ok
# CHECK: flatten jvp ok


@run
def test_broadcast_to_jvp():
    check_fwd('"rlx.broadcast_to"(%a0)', [rand((3,))], (2, 3))
    check_fwd('"rlx.broadcast_to"(%a0)', [rand((2, 1, 3))], (4, 2, 5, 3))
    check_fwd('"rlx.broadcast_to"(%a0)', [rand(())], (2, 2))
    check_fwd('"rlx.broadcast_to"(%a0)', [rand((2, 3))], (2, 3))
    print("broadcast_to jvp ok")
# CHECK-LABEL: TEST: test_broadcast_to_jvp
# CHECK: broadcast_to jvp ok


@run
def test_concat_jvp():
    a, b, c = rand((2, 1, 3)), rand((2, 4, 3)), rand((2, 2, 3))
    three = f'"rlx.concat"(%a0, %a1, %a2) {{axis = array<i64: 1>, operandSegmentSizes = {seg(3)}}}'
    check_fwd(three, [a, b, c], (2, 7, 3))
    check_fwd(three, [a, b, c], (2, 7, 3), wrt=[1])        # zeros for the other pieces
    check_fwd(three, [a, b, c], (2, 7, 3), wrt=[0, 2])
    check_fwd(f'"rlx.concat"(%a0, %a1) {{axis = array<i64: -1>, '
                 f'operandSegmentSizes = {seg(2)}}}', [rand((2, 3)), rand((2, 5))], (2, 8))
    check_fwd(f'"rlx.concat"(%a0, %a1) {{operandSegmentSizes = {seg(2)}}}',    # absent: 0
                 [rand((1, 3)), rand((2, 3))], (3, 3))
    check_fwd(f'"rlx.concat"(%a0) {{axis = array<i64: 0>, operandSegmentSizes = {seg(1)}}}',
                 [rand((2, 3))], (2, 3))
    # the same value twice: both pieces carry its tangent
    check_fwd(f'"rlx.concat"(%a0, %a0) {{axis = array<i64: 0>, operandSegmentSizes = {seg(2)}}}',
                 [rand((2, 3))], (4, 3), in_types=f"{ttype((2, 3))}, {ttype((2, 3))}")
    print("concat jvp ok")
# CHECK-LABEL: TEST: test_concat_jvp
# CHECK: concat jvp ok


def split_all_text(shape, attrs, out_shapes):
    """@main returning every result of ``split`` (each gets a tangent)."""
    n = len(out_shapes)
    outs = ", ".join(ttype(s) for s in out_shapes)
    res = ", ".join(f"%y#{i}" for i in range(n))
    return f"""
func.func @main(%x: {ttype(shape)}) -> ({outs}) {{
  %y:{n} = "rlx.split"(%x) {{{attrs}, resultSegmentSizes = {seg(n)}}} : ({ttype(shape)}) -> ({outs})
  return {res} : {outs}
}}
"""


@run
def test_split_jvp():
    cases = [
        ((6, 4), "axis = array<i64: 0>, sections = 3 : i64", [(2, 4)] * 3),
        ((6, 4), "axis = array<i64: -1>, indices = array<i64: 1, 3>", [(6, 1), (6, 2), (6, 1)]),
        ((6, 4), "axis = array<i64: 1>, indices = array<i64: 1, 3>", [(6, 1), (6, 2), (6, 1)]),
        ((7, 2), "sections = 4 : i64", [(2, 2), (2, 2), (2, 2), (1, 2)]),   # absent axis: 0
    ]
    for shape, attrs, outs in cases:
        x = rand(shape)
        text = split_all_text(shape, attrs, outs)
        check_jvp(text, [x])
        check_jacobian(text, [x])
        check_jacobian(text, [x], jacobian_mode="forward")
    print("split jvp ok")
# CHECK-LABEL: TEST: test_split_jvp
# CHECK: split jvp ok


@run
def test_strided_slice_jvp():
    x = rand((5, 6, 4))
    cases = [
        ([1], [1], [4], [1]),                    # contiguous
        ([0, 2], [1, 0], [5, 3], [2, 1]),        # stride 2
        ([1], [5], [-7], [-1]),                  # full reversal (stride -1)
        ([1], [4], [0], [-2]),                   # negative stride 2
        ([0, 1, 2], [-1, 0, 3], [0, 6, -5], [-3, 3, -1]),
        ([-1], [1], [100], [1]),                 # end clamped, negative axis
        ([2], [2], [3], [5]),                    # single element, big stride
    ]
    for axes, begin, end, strides in cases:
        so = slice_shape(x.shape, axes, begin, end, strides)
        check_fwd(f'"rlx.strided_slice"(%a0) {{axes = {arr(axes)}, begin = {arr(begin)}, '
                     f'end = {arr(end)}, strides = {arr(strides)}}}', [x], so)
    check_fwd(f'"rlx.strided_slice"(%a0) {{axes = {arr([0])}, begin = {arr([1])}, '
                 f'end = {arr([3])}}}', [x], (2, 6, 4))            # absent strides
    print("strided_slice jvp ok")
# CHECK-LABEL: TEST: test_strided_slice_jvp
# CHECK: strided_slice jvp ok


@run
def test_take_jvp():
    x = rand((4, 5, 3))
    for dt in (np.int64, np.int32):
        idx = np.array([3, 0, 3, 1], dtype=dt)                  # repeated index
        check_fwd('"rlx.take"(%a0, %a1) {axis = array<i64: 0>}', [x, idx], (4, 5, 3))
        idx2 = np.array([[4, 0], [2, 2], [1, 3]], dtype=dt)
        check_fwd('"rlx.take"(%a0, %a1) {axis = array<i64: 1>}', [x, idx2], (4, 3, 2, 3))
        check_fwd('"rlx.take"(%a0, %a1) {axis = array<i64: -1>}', [x, idx2 % 3], (4, 5, 3, 2))
        idx0 = np.array(2, dtype=dt)                             # 0-d index
        check_fwd('"rlx.take"(%a0, %a1) {axis = array<i64: 1>}', [x, idx0], (4, 3))
        flat = np.array([0, 59, 17, 17], dtype=dt)               # absent axis: flattened
        check_fwd('"rlx.take"(%a0, %a1)', [x, flat], (4,))
        neg = np.array([-1, 0, -4], dtype=dt)                    # negative: from the end
        check_fwd('"rlx.take"(%a0, %a1) {axis = array<i64: 0>}', [x, neg], (3, 5, 3))
    print("take jvp ok")
# CHECK-LABEL: TEST: test_take_jvp
# CHECK: take jvp ok


@run
def test_triu_jvp():
    for k in (0, 1, -1, 2, 100, -100):
        check_fwd(f'"rlx.triu"(%a0) {{k = {k} : i64}}', [rand((4, 5))], (4, 5))
    check_fwd('"rlx.triu"(%a0) {k = 0 : i64}', [rand((2, 3, 3))], (2, 3, 3))
    check_fwd('"rlx.triu"(%a0)', [rand((3, 2))], (3, 2))      # absent k: 0
    print("triu jvp ok")
# CHECK-LABEL: TEST: test_triu_jvp
# CHECK: triu jvp ok


@run
def test_jvp_batched_defaults():
    # with a batch (forward Jacobian columns), absent attributes whose default
    # would reach the batch dims are spelled out past them
    for op, x, y in (('"rlx.squeeze"(%a0)', (2, 1, 3, 1), (2, 3)),
                     ('"rlx.permute_dims"(%a0)', (2, 3, 4), (4, 3, 2))):
        text = op_text(op, [rand(x)], y)
        print(gradient_module(text, mode="jacobian", jacobian_mode="forward", simplify=False))
# CHECK-LABEL: TEST: test_jvp_batched_defaults
# CHECK-LABEL: func.func @main_jacobian
# CHECK: "rlx.squeeze"(%{{.*}}) {axis = array<i64: 2, 4>} : (tensor<6x2x1x3x1xf64>) -> tensor<6x2x3xf64>
# CHECK-LABEL: func.func @main_jacobian
# CHECK: "rlx.permute_dims"(%{{.*}}) {axes = array<i64: 0, 3, 2, 1>} : (tensor<24x2x3x4xf64>) -> tensor<24x4x3x2xf64>

# RUN: %PYTHON %s | FileCheck %s
# VJP and JVP rules of the nn ops, checked against central finite differences through
# the reference interpreter.  Each @main computes sum(op(...) * wt) with a
# fixed random wt (the last argument), so every output element gets its own
# weight; wrt is restricted to the op's differentiable operands.

import os
import sys

import numpy as np

import gradir
from gradir.testing import check_gradient, check_jacobian

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from grad_helpers import check_op_jvp, op_text, verify_adjoint  # noqa: E402

rng = np.random.default_rng(7)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


_NP = {np.dtype(np.float64): "f64", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32"}


def ttype(a):
    a = np.asarray(a)
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + _NP[a.dtype] + ">"


def rtype(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f64>"


def arr(v):
    return "array<i64: " + ", ".join(map(str, v)) + ">"


def main_text(op, args, out_shape, attrs=""):
    """@main(args..., %wt) = sum(op(args...) * wt)."""
    names = [f"%a{i}" for i in range(len(args))]
    types = [ttype(a) for a in args]
    out = rtype(out_shape)
    sig = ", ".join(f"{n}: {t}" for n, t in zip(names, types))
    attr = f" {{{attrs}}}" if attrs else ""
    text = f"""
func.func @main({sig}, %wt: {out}) -> tensor<f64> {{
  %y = "{op}"({", ".join(names)}){attr} : ({", ".join(types)}) -> {out}
  %p = "rlx.multiply"(%y, %wt) : ({out}, {out}) -> {out}
  %s = "rlx.sum"(%p) : ({out}) -> tensor<f64>
  func.return %s : tensor<f64>
}}
"""
    return text


def check(case, op, args, out_shape, wrt, attrs="", **kw):
    """Checks d/d args[wrt] of sum(op(*args) * wt) and prints '<case> ok'."""
    text = main_text(op, args, out_shape, attrs)
    verify_adjoint(text, wrt)
    wt = rng.standard_normal(out_shape)
    check_gradient(text, list(args) + [wt], wrt=wrt, **kw)
    print(f"{case} ok")


def check_second_order(case, op, args, out_shape, wrt, attrs=""):
    """Differentiates @first(args..., wt) = sum_k sum(d main / d args[k] * v_k)
    (the generated @main_adjoint, called) once more, w.r.t. args[wrt] and
    wt, against finite differences of @first."""
    text = main_text(op, args, out_shape, attrs)
    module = gradir.run_pipeline(gradir.parse(text),
                                 "builtin.module(rlx-gradient{wrt=%s})"
                                 % ",".join(map(str, wrt)))
    printed = gradir.print_module(module).rstrip()
    sig_types = [ttype(a) for a in args] + [rtype(out_shape)]
    gtypes = [ttype(args[k]) for k in wrt]
    names = [f"%a{i}" for i in range(len(args))] + ["%wt"]
    lines = [f'  %g:{len(wrt) + 1} = func.call @main_adjoint({", ".join(names)}) : '
             f'({", ".join(sig_types)}) -> (tensor<f64>, {", ".join(gtypes)})']
    total = None
    for j, t in enumerate(gtypes):
        lines.append(f'  %m{j} = "rlx.multiply"(%g#{j + 1}, %v{j}) : ({t}, {t}) -> {t}')
        lines.append(f'  %s{j} = "rlx.sum"(%m{j}) : ({t}) -> tensor<f64>')
        if total is None:
            total = f"%s{j}"
        else:
            lines.append(f'  %t{j} = "rlx.add"({total}, %s{j}) : '
                         "(tensor<f64>, tensor<f64>) -> tensor<f64>")
            total = f"%t{j}"
    sig = ", ".join(f"{n}: {t}" for n, t in zip(names, sig_types))
    vsig = ", ".join(f"%v{j}: {t}" for j, t in enumerate(gtypes))
    first = (f"func.func @first({sig}, {vsig}) -> tensor<f64> {{\n" + "\n".join(lines)
             + f"\n  return {total} : tensor<f64>\n}}")
    text2 = printed[:-1] + first + "\n}"
    vs = [randn(*np.shape(args[k])) for k in wrt]
    wt = rng.standard_normal(out_shape)
    n = len(args)
    check_gradient(text2, list(args) + [wt] + vs, wrt=list(wrt) + [n], func="first",
                   rtol=1e-5, atol=1e-6)
    print(f"{case} second order ok")


def randn(*shape):
    return rng.standard_normal(shape)


def distinct(*shape):
    """Values with no ties (gaps of 0.1 >> the FD step)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) * 0.1 - n * 0.05).reshape(shape)


# ----------------------------------------------------------------------------
# softmax & losses

@run
def test_softmax():
    check("softmax default", "rlx.softmax", [randn(3, 4)], (3, 4), [0])
    check("softmax axis=1", "rlx.softmax", [randn(2, 3, 4)], (2, 3, 4), [0],
          f"axis = {arr([1])}")
    check("softmax axis=-3", "rlx.softmax", [randn(2, 3, 4)], (2, 3, 4), [0],
          f"axis = {arr([-3])}")
    check("softmax 1-d", "rlx.softmax", [randn(5)], (5,), [0], f"axis = {arr([0])}")
# CHECK-LABEL: TEST: test_softmax
# CHECK: softmax default ok
# CHECK: softmax axis=1 ok
# CHECK: softmax axis=-3 ok
# CHECK: softmax 1-d ok


@run
def test_log_softmax():
    check("log_softmax default", "rlx.log_softmax", [randn(3, 4)], (3, 4), [0])
    check("log_softmax axis=0", "rlx.log_softmax", [randn(3, 4)], (3, 4), [0],
          f"axis = {arr([0])}")
    check("log_softmax axis=-2", "rlx.log_softmax", [randn(2, 3, 4)], (2, 3, 4), [0],
          f"axis = {arr([-2])}")
# CHECK-LABEL: TEST: test_log_softmax
# CHECK: log_softmax default ok
# CHECK: log_softmax axis=0 ok
# CHECK: log_softmax axis=-2 ok


@run
def test_cross_entropy_with_logits():
    check("cross_entropy 2-d", "rlx.cross_entropy_with_logits",
          [randn(3, 4), rng.uniform(0, 1, (3, 4))], (), [0, 1])
    check("cross_entropy 1-d", "rlx.cross_entropy_with_logits",
          [randn(5), rng.uniform(0, 1, 5)], (), [0, 1])
# CHECK-LABEL: TEST: test_cross_entropy_with_logits
# CHECK: cross_entropy 2-d ok
# CHECK: cross_entropy 1-d ok


def _red(reduction, ignore_index=None):
    s = f'reduction = "{reduction}"'
    if ignore_index is not None:
        s += f", ignore_index = {ignore_index} : i64"
    return s


@run
def test_nll_loss():
    pred = randn(5, 3)
    t = np.array([0, 2, 1, 2, 0], dtype=np.int64)
    w = rng.uniform(0.5, 2.0, 3)
    for red in ("mean", "sum", "none"):
        out = (5,) if red == "none" else ()
        check(f"nll_loss {red}", "rlx.nll_loss", [pred, t], out, [0], _red(red))
        check(f"nll_loss {red} weights", "rlx.nll_loss", [pred, t, w], out, [0, 2], _red(red))
        # ignore_index inside [0, C): targets 2 are ignored.
        check(f"nll_loss {red} ignore=2", "rlx.nll_loss", [pred, t, w], out, [0, 2],
              _red(red, 2))
    # The default ignore_index (-100) hit by some targets.
    t_ign = np.array([0, -100, 1, 2, -100], dtype=np.int64)
    check("nll_loss mean default ignore", "rlx.nll_loss", [pred, t_ign], (), [0], _red("mean"))
    check("nll_loss sum ignore=-1 weights", "rlx.nll_loss",
          [pred, np.array([0, -1, 1, -1, 2], dtype=np.int64), w], (), [0, 2], _red("sum", -1))
    # (N, C, d) predictions with i32 targets.
    pred3 = randn(2, 3, 4)
    t3 = np.array([[0, 1, 2, 1], [2, 2, 0, 1]], dtype=np.int32)
    for red in ("mean", "sum", "none"):
        out = (2, 4) if red == "none" else ()
        check(f"nll_loss nd {red} weights ignore=1", "rlx.nll_loss", [pred3, t3, w], out,
              [0, 2], _red(red, 1))
    check("nll_loss nd mean", "rlx.nll_loss", [pred3, t3], (), [0], _red("mean"))
    # (C,) predictions with a 0-d target.
    for red in ("mean", "sum", "none"):
        check(f"nll_loss 1-d {red}", "rlx.nll_loss", [randn(4), np.array(2, dtype=np.int64),
                                                      rng.uniform(0.5, 2.0, 4)],
              (), [0, 2], _red(red))
# CHECK-LABEL: TEST: test_nll_loss
# CHECK: nll_loss mean ok
# CHECK: nll_loss mean weights ok
# CHECK: nll_loss mean ignore=2 ok
# CHECK: nll_loss sum ok
# CHECK: nll_loss sum weights ok
# CHECK: nll_loss sum ignore=2 ok
# CHECK: nll_loss none ok
# CHECK: nll_loss none weights ok
# CHECK: nll_loss none ignore=2 ok
# CHECK: nll_loss mean default ignore ok
# CHECK: nll_loss sum ignore=-1 weights ok
# CHECK: nll_loss nd mean weights ignore=1 ok
# CHECK: nll_loss nd sum weights ignore=1 ok
# CHECK: nll_loss nd none weights ignore=1 ok
# CHECK: nll_loss nd mean ok
# CHECK: nll_loss 1-d mean ok
# CHECK: nll_loss 1-d sum ok
# CHECK: nll_loss 1-d none ok


# ----------------------------------------------------------------------------
# convolution

def conv_out(h, k, s, p0, p1, d):
    return (h + p0 + p1 - d * (k - 1) - 1) // s + 1


def conv_case(case, xs, ws, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    n, _, h, w = xs
    o, _, kh, kw = ws
    out = (n, o, conv_out(h, kh, strides[0], padding[0], padding[2], dilation[0]),
           conv_out(w, kw, strides[1], padding[1], padding[3], dilation[1]))
    attrs = (f"strides = {arr(strides)}, padding = {arr(padding)}, "
             f"dilation = {arr(dilation)}, groups = {groups} : i64")
    check(case, "rlx.conv2d", [randn(*xs), randn(*ws)], out, [0, 1], attrs)


@run
def test_conv2d():
    conv_case("conv2d plain", (1, 2, 5, 5), (3, 2, 3, 3))
    conv_case("conv2d stride 2 asym pad", (2, 2, 5, 6), (2, 2, 3, 2), strides=(2, 2),
              padding=(1, 0, 2, 1))
    conv_case("conv2d dilation 2", (1, 2, 6, 6), (2, 2, 2, 2), padding=(1, 1, 0, 0),
              dilation=(2, 2))
    conv_case("conv2d stride 3 uncovered rows", (1, 1, 7, 8), (2, 1, 2, 2), strides=(3, 3))
    conv_case("conv2d groups 2 stride 2 pad 1", (1, 4, 5, 5), (4, 2, 3, 3), strides=(2, 2),
              padding=(1, 1, 1, 1), groups=2)
    conv_case("conv2d groups 2 mixed", (1, 4, 6, 5), (6, 2, 2, 2), strides=(2, 1),
              padding=(0, 2, 1, 0), dilation=(2, 2), groups=2)
    conv_case("conv2d depthwise", (2, 3, 4, 4), (3, 1, 2, 3), strides=(1, 2),
              padding=(1, 1, 1, 1), groups=3)
# CHECK-LABEL: TEST: test_conv2d
# CHECK: conv2d plain ok
# CHECK: conv2d stride 2 asym pad ok
# CHECK: conv2d dilation 2 ok
# CHECK: conv2d stride 3 uncovered rows ok
# CHECK: conv2d groups 2 stride 2 pad 1 ok
# CHECK: conv2d groups 2 mixed ok
# CHECK: conv2d depthwise ok


def convt_case(case, xs, ws, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1,
               output_padding=(0, 0)):
    n, _, h, w = xs
    _, og, kh, kw = ws
    oh = (h - 1) * strides[0] - padding[0] - padding[2] + dilation[0] * (kh - 1) \
        + output_padding[0] + 1
    ow = (w - 1) * strides[1] - padding[1] - padding[3] + dilation[1] * (kw - 1) \
        + output_padding[1] + 1
    attrs = (f"strides = {arr(strides)}, padding = {arr(padding)}, "
             f"dilation = {arr(dilation)}, groups = {groups} : i64, "
             f"output_padding = {arr(output_padding)}")
    check(case, "rlx.conv2d_transpose", [randn(*xs), randn(*ws)], (n, og * groups, oh, ow),
          [0, 1], attrs)


@run
def test_conv2d_transpose():
    convt_case("conv2d_transpose plain", (1, 2, 3, 3), (2, 3, 2, 2))
    convt_case("conv2d_transpose stride 2 pad outpad", (1, 2, 3, 3), (2, 2, 3, 3),
               strides=(2, 2), padding=(1, 1, 0, 1), output_padding=(1, 0))
    convt_case("conv2d_transpose groups 2", (2, 4, 3, 2), (4, 1, 2, 3), strides=(2, 1),
               padding=(0, 1, 1, 0), groups=2)
    # output_padding >= stride (allowed since < dilation).
    convt_case("conv2d_transpose dilation 2 outpad", (1, 2, 3, 3), (2, 2, 2, 2),
               dilation=(2, 2), output_padding=(1, 1))
# CHECK-LABEL: TEST: test_conv2d_transpose
# CHECK: conv2d_transpose plain ok
# CHECK: conv2d_transpose stride 2 pad outpad ok
# CHECK: conv2d_transpose groups 2 ok
# CHECK: conv2d_transpose dilation 2 outpad ok


# ----------------------------------------------------------------------------
# pooling

def pool_out(h, k, s, p0, p1, d, ceil):
    span = h + p0 + p1 - d * (k - 1) - 1
    return (-(-span // s) if ceil else span // s) + 1


def pool_attrs(pool, strides, padding, dilation=None, ceil=False, include_pad=False):
    s = f"pool_size = {arr(pool)}, strides = {arr(strides)}, padding = {arr(padding)}"
    if dilation is not None:
        s += f", dilation = {arr(dilation)}"
    if ceil:
        s += ", ceil_mode = true"
    if include_pad:
        s += ", count_include_pad = true"
    return s


def pool_case(op, case, xs, pool, strides, padding, dilation=None, ceil=False,
              include_pad=False):
    d = dilation or (1, 1)
    out = (xs[0], xs[1], pool_out(xs[2], pool[0], strides[0], padding[0], padding[2], d[0], ceil),
           pool_out(xs[3], pool[1], strides[1], padding[1], padding[3], d[1], ceil))
    check(case, op, [distinct(*xs)], out, [0],
          pool_attrs(pool, strides, padding, dilation, ceil, include_pad))


@run
def test_max_pool2d():
    pool_case("rlx.max_pool2d", "max_pool2d 2x2/2", (1, 2, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0))
    pool_case("rlx.max_pool2d", "max_pool2d 3x3/2 pad 1 overlap", (1, 2, 5, 5), (3, 3), (2, 2),
              (1, 1, 1, 1))
    pool_case("rlx.max_pool2d", "max_pool2d asym pad ceil", (2, 1, 5, 6), (3, 2), (2, 1),
              (0, 1, 1, 0), ceil=True)
    pool_case("rlx.max_pool2d", "max_pool2d dilation 2", (1, 2, 6, 5), (2, 2), (1, 1),
              (1, 0, 0, 1), dilation=(2, 2))
# CHECK-LABEL: TEST: test_max_pool2d
# CHECK: max_pool2d 2x2/2 ok
# CHECK: max_pool2d 3x3/2 pad 1 overlap ok
# CHECK: max_pool2d asym pad ceil ok
# CHECK: max_pool2d dilation 2 ok


@run
def test_avg_pool2d():
    pool_case("rlx.avg_pool2d", "avg_pool2d 3x3/2 pad 1", (1, 2, 5, 5), (3, 3), (2, 2),
              (1, 1, 1, 1))
    pool_case("rlx.avg_pool2d", "avg_pool2d include pad", (1, 2, 5, 5), (3, 3), (2, 2),
              (1, 1, 1, 1), include_pad=True)
    pool_case("rlx.avg_pool2d", "avg_pool2d asym pad ceil", (2, 1, 5, 6), (3, 2), (2, 1),
              (0, 1, 1, 0), ceil=True)
    pool_case("rlx.avg_pool2d", "avg_pool2d ceil include pad dilation", (1, 2, 6, 5), (2, 2),
              (2, 2), (1, 0, 0, 1), dilation=(2, 1), ceil=True, include_pad=True)
# CHECK-LABEL: TEST: test_avg_pool2d
# CHECK: avg_pool2d 3x3/2 pad 1 ok
# CHECK: avg_pool2d include pad ok
# CHECK: avg_pool2d asym pad ceil ok
# CHECK: avg_pool2d ceil include pad dilation ok


@run
def test_avg_pool2d_backward():
    # Linear in output_grad; data only gives the shape (no gradient).
    for case, xs, pool, strides, padding, ceil, inc in (
            ("avg_pool2d_backward 3x3/2 pad 1", (1, 2, 5, 5), (3, 3), (2, 2), (1, 1, 1, 1),
             False, False),
            ("avg_pool2d_backward ceil include pad", (1, 1, 5, 6), (3, 2), (2, 1), (0, 1, 1, 0),
             True, True)):
        gs = (xs[0], xs[1], pool_out(xs[2], pool[0], strides[0], padding[0], padding[2], 1, ceil),
              pool_out(xs[3], pool[1], strides[1], padding[1], padding[3], 1, ceil))
        check(case, "rlx.avg_pool2d_backward", [randn(*gs), randn(*xs)], xs, [0],
              pool_attrs(pool, strides, padding, None, ceil, inc))
# CHECK-LABEL: TEST: test_avg_pool2d_backward
# CHECK: avg_pool2d_backward 3x3/2 pad 1 ok
# CHECK: avg_pool2d_backward ceil include pad ok


# ----------------------------------------------------------------------------
# normalization

def ln_attrs(axes, eps):
    return f"axes = {arr(axes)}, epsilon = {eps:e} : f64"


@run
def test_layer_norm():
    x = randn(2, 3, 4)
    check("layer_norm last axis", "rlx.layer_norm", [x, randn(4), randn(4)], (2, 3, 4),
          [0, 1, 2], ln_attrs([-1], 1e-5))
    check("layer_norm axes 1,2", "rlx.layer_norm", [x, randn(3, 4), randn(3, 4)], (2, 3, 4),
          [0, 1, 2], ln_attrs([1, 2], 1e-3))
    check("layer_norm axes 0", "rlx.layer_norm", [x, randn(2), randn(2)], (2, 3, 4),
          [0, 1, 2], ln_attrs([0], 0.1))
    check("layer_norm axes 2,0 unsorted", "rlx.layer_norm", [x, randn(4, 2), randn(4, 2)],
          (2, 3, 4), [0, 1, 2], ln_attrs([2, 0], 1e-5))
# CHECK-LABEL: TEST: test_layer_norm
# CHECK: layer_norm last axis ok
# CHECK: layer_norm axes 1,2 ok
# CHECK: layer_norm axes 0 ok
# CHECK: layer_norm axes 2,0 unsorted ok


@run
def test_rms_norm():
    x = randn(2, 3, 4)
    check("rms_norm defaults", "rlx.rms_norm", [x, randn(4)], (2, 3, 4), [0, 1])
    check("rms_norm axes 0,2 eps", "rlx.rms_norm", [x, randn(2, 4)], (2, 3, 4), [0, 1],
          f"axes = {arr([0, 2])}, epsilon = 0.01 : f64")
    check("rms_norm axes 1,0 unsorted", "rlx.rms_norm", [x, randn(3, 2)], (2, 3, 4), [0, 1],
          f"axes = {arr([1, 0])}")
# CHECK-LABEL: TEST: test_rms_norm
# CHECK: rms_norm defaults ok
# CHECK: rms_norm axes 0,2 eps ok
# CHECK: rms_norm axes 1,0 unsorted ok


# ----------------------------------------------------------------------------
# second derivatives (the rules' own ops differentiated again)

@run
def test_second_order():
    conv = (f"strides = {arr([2, 1])}, padding = {arr([1, 0, 0, 1])}, "
            f"dilation = {arr([1, 2])}, groups = 2 : i64")
    check_second_order("conv2d", "rlx.conv2d", [randn(1, 4, 5, 5), randn(2, 2, 2, 2)],
                       (1, 2, 3, 4), [0, 1], conv)
    check_second_order("avg_pool2d", "rlx.avg_pool2d", [randn(1, 1, 5, 5)], (1, 1, 3, 3), [0],
                       pool_attrs((3, 3), (2, 2), (1, 1, 1, 1)))
    check_second_order("softmax", "rlx.softmax", [randn(2, 3)], (2, 3), [0],
                       f"axis = {arr([0])}")
    check_second_order("log_softmax", "rlx.log_softmax", [randn(2, 3)], (2, 3), [0])
    check_second_order("layer_norm", "rlx.layer_norm", [randn(2, 3), randn(3), randn(3)],
                       (2, 3), [0, 1, 2], ln_attrs([-1], 1e-3))
    check_second_order("rms_norm", "rlx.rms_norm", [randn(2, 3), randn(3)], (2, 3), [0, 1])
    check_second_order("nll_loss", "rlx.nll_loss",
                       [randn(3, 4), np.array([1, 3, 0], dtype=np.int64),
                        rng.uniform(0.5, 2, 4)], (), [0, 2], _red("mean", 3))
# CHECK-LABEL: TEST: test_second_order
# CHECK: conv2d second order ok
# CHECK: avg_pool2d second order ok
# CHECK: softmax second order ok
# CHECK: log_softmax second order ok
# CHECK: layer_norm second order ok
# CHECK: rms_norm second order ok
# CHECK: nll_loss second order ok


# ----------------------------------------------------------------------------
# JVP rules: mode=jvp against directional differences and, with the tangents
# batched past the leading dims, mode=jacobian against the FD Jacobian

def check_fwd(case, op, args, out_shape, wrt, attrs=""):
    """mode=jvp, and mode=jacobian by forward columns (jacobian-mode=auto
    would take reverse rows for small results, missing the batched rule)."""
    names = ", ".join(f"%a{i}" for i in range(len(args)))
    text = f'"{op}"({names})' + (f" {{{attrs}}}" if attrs else "")
    check_op_jvp(text, list(args), out_shape, wrt=wrt, jacobian=False)
    check_jacobian(op_text(text, list(args), out_shape), list(args), wrt=wrt,
                   jacobian_mode="forward")
    print(f"{case} jvp ok")


@run
def test_softmax_losses_jvp():
    check_fwd("softmax default", "rlx.softmax", [randn(3, 4)], (3, 4), [0])
    check_fwd("softmax axis=1", "rlx.softmax", [randn(2, 3, 4)], (2, 3, 4), [0],
              f"axis = {arr([1])}")
    check_fwd("softmax axis=-3", "rlx.softmax", [randn(2, 3, 4)], (2, 3, 4), [0],
              f"axis = {arr([-3])}")
    check_fwd("log_softmax default", "rlx.log_softmax", [randn(3, 4)], (3, 4), [0])
    check_fwd("log_softmax axis=-2", "rlx.log_softmax", [randn(2, 3, 4)], (2, 3, 4), [0],
              f"axis = {arr([-2])}")
    check_fwd("cross_entropy 2-d", "rlx.cross_entropy_with_logits",
              [randn(3, 4), rng.uniform(0, 1, (3, 4))], (), [0, 1])
    check_fwd("cross_entropy 1-d", "rlx.cross_entropy_with_logits",
              [randn(5), rng.uniform(0, 1, 5)], (), [0, 1])
# CHECK-LABEL: TEST: test_softmax_losses_jvp
# CHECK: softmax default jvp ok
# CHECK: softmax axis=1 jvp ok
# CHECK: softmax axis=-3 jvp ok
# CHECK: log_softmax default jvp ok
# CHECK: log_softmax axis=-2 jvp ok
# CHECK: cross_entropy 2-d jvp ok
# CHECK: cross_entropy 1-d jvp ok


@run
def test_nll_loss_jvp():
    pred = randn(5, 3)
    t = np.array([0, 2, 1, 2, 0], dtype=np.int64)
    w = rng.uniform(0.5, 2.0, 3)
    for red in ("mean", "sum", "none"):
        out = (5,) if red == "none" else ()
        check_fwd(f"nll_loss {red}", "rlx.nll_loss", [pred, t], out, [0], _red(red))
        check_fwd(f"nll_loss {red} weights ignore=2", "rlx.nll_loss", [pred, t, w], out, [0, 2],
                  _red(red, 2))
    t_ign = np.array([0, -100, 1, 2, -100], dtype=np.int64)
    check_fwd("nll_loss mean default ignore", "rlx.nll_loss", [pred, t_ign, w], (), [0, 2],
              _red("mean"))
    pred3 = randn(2, 3, 4)
    t3 = np.array([[0, 1, 2, 1], [2, 2, 0, 1]], dtype=np.int32)
    for red in ("mean", "sum", "none"):
        out = (2, 4) if red == "none" else ()
        check_fwd(f"nll_loss nd {red} weights ignore=1", "rlx.nll_loss", [pred3, t3, w], out,
                  [0, 2], _red(red, 1))
    for red in ("mean", "none"):
        check_fwd(f"nll_loss 1-d {red}", "rlx.nll_loss",
                  [randn(4), np.array(2, dtype=np.int64), rng.uniform(0.5, 2.0, 4)], (), [0, 2],
                  _red(red))
# CHECK-LABEL: TEST: test_nll_loss_jvp
# CHECK: nll_loss mean jvp ok
# CHECK: nll_loss mean weights ignore=2 jvp ok
# CHECK: nll_loss sum jvp ok
# CHECK: nll_loss sum weights ignore=2 jvp ok
# CHECK: nll_loss none jvp ok
# CHECK: nll_loss none weights ignore=2 jvp ok
# CHECK: nll_loss mean default ignore jvp ok
# CHECK: nll_loss nd mean weights ignore=1 jvp ok
# CHECK: nll_loss nd sum weights ignore=1 jvp ok
# CHECK: nll_loss nd none weights ignore=1 jvp ok
# CHECK: nll_loss 1-d mean jvp ok
# CHECK: nll_loss 1-d none jvp ok


@run
def test_nll_loss_all_ignored_jvp():
    # Every target ignored: the mean is 0/0; the JVP, like the VJP, is the
    # guarded one (sum(M) taken as 1, the loss as 0), so <jvp(v), u> = <v, vjp(u)>.
    from gradir import interpret
    from gradir.testing import gradient_module
    pred, t, w = randn(3, 4), np.array([1, 1, 1], dtype=np.int64), rng.uniform(0.5, 2, 4)
    vp, vw = randn(3, 4), randn(4)
    text = op_text('"rlx.nll_loss"(%a0, %a1, %a2) {' + _red("mean", 1) + "}", [pred, t, w], ())
    got = interpret(gradient_module(text, mode="jvp", wrt=[0, 2]), "main_jvp", pred, t, w, vp,
                    vw)[1]
    adj = interpret(gradient_module(main_text("rlx.nll_loss", [pred, t, w], (), _red("mean", 1)),
                                    wrt=[0, 2]), "main_adjoint", pred, t, w, np.array(1.0))
    np.testing.assert_allclose(got, np.sum(adj[1] * vp) + np.sum(adj[2] * vw), rtol=1e-12)
    print("nll_loss all ignored jvp ok")
# CHECK-LABEL: TEST: test_nll_loss_all_ignored_jvp
# CHECK: nll_loss all ignored jvp ok


@run
def test_conv2d_jvp():
    # (x, w, strides, padding, dilation, groups): the VJP tests' cases
    for case, xs, ws, s, p, d, g in (
            ("plain", (1, 2, 5, 5), (3, 2, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
            ("stride 2 asym pad", (2, 2, 5, 6), (2, 2, 3, 2), (2, 2), (1, 0, 2, 1), (1, 1), 1),
            ("dilation 2", (1, 2, 6, 6), (2, 2, 2, 2), (1, 1), (1, 1, 0, 0), (2, 2), 1),
            ("groups 2 mixed", (1, 4, 6, 5), (6, 2, 2, 2), (2, 1), (0, 2, 1, 0), (2, 2), 2),
            ("depthwise", (2, 3, 4, 4), (3, 1, 2, 3), (1, 2), (1, 1, 1, 1), (1, 1), 3)):
        out = (xs[0], ws[0], conv_out(xs[2], ws[2], s[0], p[0], p[2], d[0]),
               conv_out(xs[3], ws[3], s[1], p[1], p[3], d[1]))
        attrs = (f"strides = {arr(s)}, padding = {arr(p)}, dilation = {arr(d)}, "
                 f"groups = {g} : i64")
        check_fwd(f"conv2d {case}", "rlx.conv2d", [randn(*xs), randn(*ws)], out, [0, 1], attrs)
# CHECK-LABEL: TEST: test_conv2d_jvp
# CHECK: conv2d plain jvp ok
# CHECK: conv2d stride 2 asym pad jvp ok
# CHECK: conv2d dilation 2 jvp ok
# CHECK: conv2d groups 2 mixed jvp ok
# CHECK: conv2d depthwise jvp ok


@run
def test_conv2d_transpose_jvp():
    for case, xs, ws, s, p, d, g, op_ in (
            ("plain", (1, 2, 3, 3), (2, 3, 2, 2), (1, 1), (0, 0, 0, 0), (1, 1), 1, (0, 0)),
            ("stride 2 pad outpad", (1, 2, 3, 3), (2, 2, 3, 3), (2, 2), (1, 1, 0, 1), (1, 1), 1,
             (1, 0)),
            ("groups 2", (2, 4, 3, 2), (4, 1, 2, 3), (2, 1), (0, 1, 1, 0), (1, 1), 2, (0, 0))):
        oh = (xs[2] - 1) * s[0] - p[0] - p[2] + d[0] * (ws[2] - 1) + op_[0] + 1
        ow = (xs[3] - 1) * s[1] - p[1] - p[3] + d[1] * (ws[3] - 1) + op_[1] + 1
        attrs = (f"strides = {arr(s)}, padding = {arr(p)}, dilation = {arr(d)}, "
                 f"groups = {g} : i64, output_padding = {arr(op_)}")
        check_fwd(f"conv2d_transpose {case}", "rlx.conv2d_transpose", [randn(*xs), randn(*ws)],
                  (xs[0], ws[1] * g, oh, ow), [0, 1], attrs)
# CHECK-LABEL: TEST: test_conv2d_transpose_jvp
# CHECK: conv2d_transpose plain jvp ok
# CHECK: conv2d_transpose stride 2 pad outpad jvp ok
# CHECK: conv2d_transpose groups 2 jvp ok


def pool_shape(xs, pool, strides, padding, dilation=None, ceil=False):
    d = dilation or (1, 1)
    return (xs[0], xs[1],
            pool_out(xs[2], pool[0], strides[0], padding[0], padding[2], d[0], ceil),
            pool_out(xs[3], pool[1], strides[1], padding[1], padding[3], d[1], ceil))


POOLS = [("2x2/2", (1, 2, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0), None, False),
         ("3x3/2 pad 1 overlap", (1, 2, 5, 5), (3, 3), (2, 2), (1, 1, 1, 1), None, False),
         ("asym pad ceil", (2, 1, 5, 6), (3, 2), (2, 1), (0, 1, 1, 0), None, True),
         ("dilation 2", (1, 2, 6, 5), (2, 2), (1, 1), (1, 0, 0, 1), (2, 2), False)]


@run
def test_pool2d_jvp():
    for op in ("rlx.max_pool2d", "rlx.avg_pool2d"):
        for case, xs, pool, strides, padding, dil, ceil in POOLS:
            check_fwd(f"{op[4:]} {case}", op, [distinct(*xs)],
                      pool_shape(xs, pool, strides, padding, dil, ceil), [0],
                      pool_attrs(pool, strides, padding, dil, ceil))
    check_fwd("avg_pool2d include pad", "rlx.avg_pool2d", [randn(1, 2, 5, 5)], (1, 2, 3, 3),
              [0], pool_attrs((3, 3), (2, 2), (1, 1, 1, 1), include_pad=True))
# CHECK-LABEL: TEST: test_pool2d_jvp
# CHECK: max_pool2d 2x2/2 jvp ok
# CHECK: max_pool2d 3x3/2 pad 1 overlap jvp ok
# CHECK: max_pool2d asym pad ceil jvp ok
# CHECK: max_pool2d dilation 2 jvp ok
# CHECK: avg_pool2d 2x2/2 jvp ok
# CHECK: avg_pool2d 3x3/2 pad 1 overlap jvp ok
# CHECK: avg_pool2d asym pad ceil jvp ok
# CHECK: avg_pool2d dilation 2 jvp ok
# CHECK: avg_pool2d include pad jvp ok


@run
def test_max_pool2d_ties_jvp():
    # Ties (integer data): the tangent of the first maximum in row-major
    # window order, as max_pool2d_backward routes the adjoint, so the JVP is
    # the transpose of the VJP: <jvp(v), u> = <v, vjp(u)>.
    from gradir import interpret
    from gradir.testing import gradient_module
    x = np.round(rng.uniform(0, 2, (1, 2, 5, 5)))
    attrs = pool_attrs((3, 3), (2, 2), (1, 1, 1, 1))
    fwd = gradient_module(op_text('"rlx.max_pool2d"(%a0) {' + attrs + "}", [x], (1, 2, 3, 3)),
                          mode="jvp")
    rev = gradient_module(main_text("rlx.max_pool2d", [x], (1, 2, 3, 3), attrs), wrt=[0])
    for _ in range(3):
        v, u = randn(*x.shape), randn(1, 2, 3, 3)
        jv = interpret(fwd, "main_jvp", x, v)[1]
        vu = interpret(rev, "main_adjoint", x, u)[1]
        np.testing.assert_allclose(np.sum(jv * u), np.sum(v * vu), rtol=1e-12)
    print("max_pool2d ties jvp ok")
# CHECK-LABEL: TEST: test_max_pool2d_ties_jvp
# CHECK: max_pool2d ties jvp ok


@run
def test_pool2d_backward_jvp():
    # Linear in output_grad, zero w.r.t. data (FD agrees away from ties).
    for op in ("rlx.avg_pool2d_backward", "rlx.max_pool2d_backward"):
        for case, xs, pool, strides, padding, dil, ceil in POOLS[1:]:
            gs = pool_shape(xs, pool, strides, padding, dil, ceil)
            check_fwd(f"{op[4:]} {case}", op, [randn(*gs), distinct(*xs)], xs, [0, 1],
                      pool_attrs(pool, strides, padding, dil, ceil))
# CHECK-LABEL: TEST: test_pool2d_backward_jvp
# CHECK: avg_pool2d_backward 3x3/2 pad 1 overlap jvp ok
# CHECK: avg_pool2d_backward asym pad ceil jvp ok
# CHECK: avg_pool2d_backward dilation 2 jvp ok
# CHECK: max_pool2d_backward 3x3/2 pad 1 overlap jvp ok
# CHECK: max_pool2d_backward asym pad ceil jvp ok
# CHECK: max_pool2d_backward dilation 2 jvp ok


MAXPOOL_NET = """
func.func @main(%x: tensor<1x2x5x5xf64>, %w: tensor<2x2x2x2xf64>) -> tensor<f64> {
  %c = "rlx.conv2d"(%x, %w) : (tensor<1x2x5x5xf64>, tensor<2x2x2x2xf64>) -> tensor<1x2x4x4xf64>
  %m = "rlx.max_pool2d"(%c) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x2x4x4xf64>) -> tensor<1x2x2x2xf64>
  %q = "rlx.tanh"(%m) : (tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %s = "rlx.sum"(%q) : (tensor<1x2x2x2xf64>) -> tensor<f64>
  return %s : tensor<f64>
}
"""


@run
def test_max_pool2d_hvp():
    # Forward over reverse through max_pool2d_backward (the VJP of
    # max_pool2d): H v against central differences of the gradient.
    from gradir import interpret
    from gradir.testing import directional_difference, gradient_module
    args = [randn(1, 2, 5, 5), randn(2, 2, 2, 2)]
    vs = [randn(1, 2, 5, 5), randn(2, 2, 2, 2)]
    got = interpret(gradient_module(MAXPOOL_NET, mode="hvp"), "main_hvp", *args, *vs)[1:]
    want = directional_difference(gradient_module(MAXPOOL_NET), "main_adjoint", args, [0, 1],
                                  vs)[1:]
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(g, w_, rtol=1e-5, atol=1e-7)
    print("max_pool2d hvp ok")
# CHECK-LABEL: TEST: test_max_pool2d_hvp
# CHECK: max_pool2d hvp ok


@run
def test_norm_jvp():
    x = randn(2, 3, 4)
    check_fwd("layer_norm last axis", "rlx.layer_norm", [x, randn(4), randn(4)], (2, 3, 4),
              [0, 1, 2], ln_attrs([-1], 1e-5))
    check_fwd("layer_norm axes 1,2", "rlx.layer_norm", [x, randn(3, 4), randn(3, 4)], (2, 3, 4),
              [0, 1, 2], ln_attrs([1, 2], 1e-3))
    check_fwd("layer_norm axes 2,0 unsorted", "rlx.layer_norm", [x, randn(4, 2), randn(4, 2)],
              (2, 3, 4), [0, 1, 2], ln_attrs([2, 0], 1e-5))
    check_fwd("layer_norm gamma only", "rlx.layer_norm", [x, randn(4, 2), randn(4, 2)],
              (2, 3, 4), [1], ln_attrs([2, 0], 1e-5))
    check_fwd("rms_norm defaults", "rlx.rms_norm", [x, randn(4)], (2, 3, 4), [0, 1])
    check_fwd("rms_norm axes 0,2 eps", "rlx.rms_norm", [x, randn(2, 4)], (2, 3, 4), [0, 1],
              f"axes = {arr([0, 2])}, epsilon = 0.01 : f64")
    check_fwd("rms_norm axes 1,0 unsorted", "rlx.rms_norm", [x, randn(3, 2)], (2, 3, 4), [0, 1],
              f"axes = {arr([1, 0])}")
# CHECK-LABEL: TEST: test_norm_jvp
# CHECK: layer_norm last axis jvp ok
# CHECK: layer_norm axes 1,2 jvp ok
# CHECK: layer_norm axes 2,0 unsorted jvp ok
# CHECK: layer_norm gamma only jvp ok
# CHECK: rms_norm defaults jvp ok
# CHECK: rms_norm axes 0,2 eps jvp ok
# CHECK: rms_norm axes 1,0 unsorted jvp ok

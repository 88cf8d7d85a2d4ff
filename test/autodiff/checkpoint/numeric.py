# RUN: %PYTHON %s | FileCheck %s
# Every checkpointed or rematerialised adjoint computes the plain adjoint's
# gradients (float64, reference interpreter) and matches central finite
# differences: Relax's marker structures, markers with wrt subsets, pins,
# and remat=auto at several budgets on chains, residual blocks, attention,
# split/concat, tuples and convolutions, in adjoint, vjp and split modes.

import re
from pathlib import Path

import numpy as np
from mlir import ir
from mlir.dialects import func

import gradir
from gradir import _compat, interpret
from gradir.dialects import grad, rlx
from gradir.testing import check_gradient, gradient_module, oracle

rng = np.random.default_rng(0)
HERE = Path(__file__).resolve().parent


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def r(*shape, scale=0.5):
    return rng.standard_normal(shape) * scale


class Diagnostics:
    """Collects the pass's warnings and remarks instead of printing them."""

    def __enter__(self):
        self.items = []
        _compat.push_diagnostic_sink(lambda sev, loc, msg: self.items.append((sev, msg)))
        return self

    def __exit__(self, *exc):
        _compat.pop_diagnostic_sink()

    def warnings(self):
        return [m for s, m in self.items if s == "warning"]


def adjoint_outputs(text, args, fn="main_adjoint", **options):
    with Diagnostics():
        module = gradient_module(text, **options)
    oracle.record(module, fn, args, name=f"{fn} {options}")    # compiled too, at exit
    return module, interpret(module, fn, *args)


def assert_same(got, want, what):
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, tuple):
            assert_same(g, w, f"{what}[{k}]")
            continue
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13, err_msg=f"{what}: output {k}")


def recomputed(module) -> int:
    return gradir.print_module(module).count("grad.recomputed")


def strip_markers(text: str) -> str:
    """The same function without checkpoint markers (the plain reference)."""
    out = []
    alias = {}
    for line in text.splitlines():
        m = re.match(r'\s*(%\w+) = "grad\.(start|end)_checkpoint"\((%\w+)\)', line)
        if m:
            alias[m.group(1)] = alias.get(m.group(3), m.group(3))
            continue
        out.append(line)
    body = "\n".join(out)
    for name in sorted(alias, key=len, reverse=True):
        body = re.sub(re.escape(name) + r"\b", alias[name], body)
    return body


def marker_cases():
    """The functions of rlx-gradient-checkpoint.mlir, in float64."""
    text = (HERE.parent.parent / "transforms" / "rlx-gradient-checkpoint.mlir").read_text()
    for chunk in text.split("// -----"):
        start = chunk.find("func.func @main(")
        if start >= 0:
            yield chunk[start:].replace("f32", "f64")


@run
def relax_marker_structures():
    n = 0
    for text in marker_cases():
        n_args = text[:text.index(")")].count("tensor<")
        # Near 1: the chains of cubes reach x**81.
        args = [rng.uniform(0.8, 1.05, (3, 3)) for _ in range(n_args)]
        plain = adjoint_outputs(strip_markers(text), args)[1]
        for opts in ({}, {"simplify": False}):
            module, got = adjoint_outputs(text, args, **opts)
            assert_same(got, plain, f"case {n} {opts}")
        check_gradient(text, args, rtol=1e-6, atol=1e-8)
        n += 1
    print(n, "structures: same gradients as without markers, and as finite differences")
# CHECK-LABEL: TEST: relax_marker_structures
# CHECK: 7 structures: same gradients as without markers, and as finite differences


TREE = next(t for t in marker_cases() if "%u: tensor" in t)


@run
def markers_with_wrt_subsets():
    args = [r(3, 3) for _ in range(5)]
    plain = strip_markers(TREE)
    for wrt in ([2], [0, 3], [4, 1], [0, 1, 2, 3, 4]):
        want = adjoint_outputs(plain, args, wrt=wrt)[1]
        module, got = adjoint_outputs(TREE, args, wrt=wrt)
        assert_same(got, want, f"wrt={wrt}")
        check_gradient(TREE, args, wrt=wrt, rtol=1e-6, atol=1e-8)
    # Relax's Expected2: with only z, lv3 = u * v is recomputed and lv2 is not.
    module, _ = adjoint_outputs(TREE, args, wrt=[2], simplify=False)
    text = gradir.print_module(module)
    body = text[text.index("@main_adjoint"):]
    assert body.count("grad.recomputed") == 1, body
    print("wrt subsets: same gradients; wrt=2 recomputes u * v only")
# CHECK-LABEL: TEST: markers_with_wrt_subsets
# CHECK: wrt subsets: same gradients; wrt=2 recomputes u * v only


# ----------------------------------------------------------------------------
# Programs for remat=auto, built with the Python builders.

def f64(*shape):
    return ir.RankedTensorType.get(list(shape), ir.F64Type.get())


def build(arg_types, body) -> str:
    ctx = gradir.make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fop = func.FuncOp("main", ir.FunctionType.get([t() for t in arg_types], []))
            block = fop.add_entry_block()
            with ir.InsertionPoint(block):
                results = body(*block.arguments)
                if not isinstance(results, (list, tuple)):
                    results = [results]
                func.ReturnOp(results)
            fop.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [a.type for a in block.arguments], [v.type for v in results]))
    return gradir.print_module(module)


def c(value):
    """A 0-d f64 constant."""
    from mlir.dialects import arith
    t = f64()
    return arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(
        t, ir.FloatAttr.get(ir.F64Type.get(), value))).result


def dense_chain(n=6, batch=16, width=4):
    def body(x, *params):
        h = x
        for k in range(n):
            h = rlx.tanh(rlx.add(rlx.matmul(h, params[2 * k]), params[2 * k + 1]))
        return rlx.sum(h)
    types = [lambda: f64(batch, width)]
    for _ in range(n):
        types += [lambda: f64(width, width), lambda: f64(width)]
    args = [r(batch, width)] + [a for _ in range(n) for a in (r(width, width), r(width, scale=0.1))]
    return build(types, body), args


def residual(n=4, batch=3, width=4):
    def body(x, *ws):
        h = x
        for w in ws:
            h = rlx.add(h, rlx.sigmoid(rlx.matmul(h, w)))
        return rlx.sum(rlx.multiply(h, h))
    types = [lambda: f64(batch, width)] + [lambda: f64(width, width)] * n
    return build(types, body), [r(batch, width)] + [r(width, width) for _ in range(n)]


def attention(seq=4, d=3):
    def body(x, wq, wk, wv, g, b):
        q, k, v = rlx.matmul(x, wq), rlx.matmul(x, wk), rlx.matmul(x, wv)
        s = rlx.softmax(rlx.multiply(rlx.matmul(q, rlx.permute_dims(k, [1, 0])), c(0.5)), axis=-1)
        o = rlx.add(rlx.matmul(s, v), x)
        y = rlx.layer_norm(o, g, b, axes=[-1], epsilon=1e-5)
        return rlx.sum(rlx.multiply(rlx.exp(y), y))
    types = [lambda: f64(seq, d)] + [lambda: f64(d, d)] * 3 + [lambda: f64(d)] * 2
    args = [r(seq, d)] + [r(d, d) for _ in range(3)] + [1 + r(d, scale=0.1), r(d, scale=0.1)]
    return build(types, body), args


def split_concat(n=3):
    def body(x, y):
        h = x
        for _ in range(n):
            a, b = rlx.split(h, 2, axis=1)
            h = rlx.concat([rlx.multiply(rlx.exp(a), rlx.sin(b)), rlx.tanh(rlx.add(a, y))], axis=1)
        return rlx.sum(rlx.square(h))
    return build([lambda: f64(3, 4), lambda: f64(3, 2)], body), [r(3, 4), r(3, 2)]


def tuples():
    def body(x, y):
        t = rlx.tuple_([rlx.exp(x), rlx.tanh(y)])
        a = rlx.multiply(rlx.tuple_get_item(t, 0), rlx.tuple_get_item(t, 1))
        u = rlx.tuple_([a, t])
        b = rlx.tuple_get_item(rlx.tuple_get_item(u, 1), 0)
        h = rlx.sin(rlx.multiply(rlx.tuple_get_item(u, 0), b))
        h = rlx.tanh(rlx.multiply(h, rlx.tuple_get_item(rlx.tuple_get_item(u, 1), 1)))
        return [rlx.sum(rlx.multiply(h, h)), rlx.tuple_get_item(t, 1)]
    return build([lambda: f64(8), lambda: f64(8)], body), [r(8), r(8)]


def convolution():
    def body(x, w1, w2, w3):
        h = rlx.abs(rlx.conv2d(x, w1, padding=(1, 1, 1, 1)))
        h = rlx.tanh(rlx.conv2d(h, w2, padding=(1, 1, 1, 1)))
        h = rlx.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))
        h = rlx.tanh(rlx.conv2d(h, w3, padding=(1, 1, 1, 1)))
        return rlx.sum(rlx.square(h))
    shapes = [(2, 2, 6, 6), (3, 2, 3, 3), (3, 3, 3, 3), (2, 3, 3, 3)]
    return build([lambda s=s: f64(*s) for s in shapes], body), [r(*s) for s in shapes]


PROGRAMS = {"dense_chain": dense_chain, "residual": residual, "attention": attention,
            "split_concat": split_concat, "tuples": tuples, "convolution": convolution}
BUDGETS = ("1.0", "0.8", "0.6", "0.45", "0.3", "0.1")


@run
def remat_auto_same_gradients():
    for name, make in PROGRAMS.items():
        text, args = make()
        want = adjoint_outputs(text, args)[1]
        clones = 0
        for budget in BUDGETS:
            for simplify in (True, False):
                module, got = adjoint_outputs(text, args, remat="auto", budget=budget,
                                              simplify=simplify)
                assert_same(got, want, f"{name} budget={budget} simplify={simplify}")
                clones += recomputed(module)
        assert clones > 0, f"{name}: no budget made remat=auto recompute anything"
        with Diagnostics():
            check_gradient(text, args, rtol=1e-6, atol=1e-8, remat="auto", budget="0.45")
        print(name, "ok")
# CHECK-LABEL: TEST: remat_auto_same_gradients
# CHECK: dense_chain ok
# CHECK: residual ok
# CHECK: attention ok
# CHECK: split_concat ok
# CHECK: tuples ok
# CHECK: convolution ok


@run
def remat_auto_vjp_and_split():
    text, args = residual()
    cot = np.array(1.7)
    want = adjoint_outputs(text, args + [cot], fn="main_vjp", mode="vjp")[1]
    for budget in ("0.7", "0.4"):
        module, got = adjoint_outputs(text, args + [cot], fn="main_vjp", mode="vjp",
                                      remat="auto", budget=budget)
        assert_same(got, want, f"vjp budget={budget}")
        with Diagnostics():
            module = gradient_module(text, split=True, remat="auto", budget=budget)
        fwd = interpret(module, "main_fwd", *args)
        n_saved = len(fwd) - 1
        bwd = interpret(module, "main_bwd", *fwd[1:], cot)
        assert_same(list(fwd[:1]) + list(bwd), want, f"split budget={budget}")
        # Only kept values cross: fewer than when storing everything.
        full = interpret(gradient_module(text, split=True), "main_fwd", *args)
        assert n_saved < len(full) - 1, (n_saved, len(full) - 1)
    print("vjp and split: same results; split saves fewer values")
# CHECK-LABEL: TEST: remat_auto_vjp_and_split
# CHECK: vjp and split: same results; split saves fewer values


@run
def pins_and_markers_together():
    text, args = dense_chain(n=4)
    lines = text.splitlines()
    # Pin the first tanh (save) and the third (recompute).
    tanhs = [i for i, l in enumerate(lines) if '"rlx.tanh"' in l]
    lines[tanhs[0]] = lines[tanhs[0]].replace(") :", ") {grad.save} :", 1)
    lines[tanhs[2]] = lines[tanhs[2]].replace(") :", ") {grad.recompute} :", 1)
    third = re.search(r"(%\w+) = ", lines[tanhs[2]]).group(1)
    pinned = "\n".join(lines)
    want = adjoint_outputs(text, args)[1]
    for opts in ({}, {"simplify": False}, {"remat": "auto", "budget": "0.5"},
                 {"remat": "auto", "budget": "0.2"}):
        module, got = adjoint_outputs(pinned, args, **opts)
        assert_same(got, want, f"pins {opts}")
        adj = gradir.print_module(module)
        adj = adj[adj.index("@main_adjoint"):]
        assert "grad.save" not in adj and "grad.recompute}" not in adj
        # The third tanh is recomputed (from its add) before its first use.
        assert re.search(r'"rlx.tanh"\([^)]*\) \{grad.recomputed\}', adj), adj
        main = gradir.print_module(module)
        main = main[:main.index("@main_adjoint")]
        assert third in pinned and "{grad.recompute}" in main
    print("pins honoured, same gradients")
# CHECK-LABEL: TEST: pins_and_markers_together
# CHECK: pins honoured, same gradients


@run
def markers_built_with_python():
    """Markers from the Python builders (grad.start_checkpoint/end), as
    Relax's nn.checkpoint emits them, on the dense chain."""
    def body(x, *params):
        h = x
        for k in range(6):
            if k % 2 == 0:
                if k:
                    h = grad.end_checkpoint(h)
                h = grad.start_checkpoint(h)
            h = rlx.tanh(rlx.add(rlx.matmul(h, params[2 * k]), params[2 * k + 1]))
        return rlx.sum(grad.end_checkpoint(h))
    types = [lambda: f64(16, 4)]
    for _ in range(6):
        types += [lambda: f64(4, 4), lambda: f64(4)]
    text = build(types, body)
    _, args = dense_chain()
    want = adjoint_outputs(dense_chain()[0], args)[1]
    module, got = adjoint_outputs(text, args)
    assert_same(got, want, "builders")
    assert recomputed(module) > 0
    print("builder markers: same gradients,", recomputed(module), "ops recomputed")
# CHECK-LABEL: TEST: markers_built_with_python
# CHECK: builder markers: same gradients, {{[0-9]+}} ops recomputed


CONSTANT_MARKED = """
func.func @main(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<f64> {
  %c = arith.constant dense<[2.0, -1.5, 0.5]> : tensor<3xf64>
  %s = "grad.start_checkpoint"(%c) : (tensor<3xf64>) -> tensor<3xf64>
  %0 = "rlx.multiply"(%x, %s) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = "rlx.sin"(%0) : (tensor<3xf64>) -> tensor<3xf64>
  %2 = "rlx.multiply"(%1, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %e = "grad.end_checkpoint"(%2) : (tensor<3xf64>) -> tensor<3xf64>
  %3 = "rlx.exp"(%e) : (tensor<3xf64>) -> tensor<3xf64>
  %4 = "rlx.sum"(%3) : (tensor<3xf64>) -> tensor<f64>
  return %4 : tensor<f64>
}
"""


@run
def marker_on_constant():
    # Relax accepts a start_checkpoint of a Var bound to a constant (it was refused)
    args = [r(3), r(3)]
    plain = adjoint_outputs(strip_markers(CONSTANT_MARKED), args)[1]
    module, got = adjoint_outputs(CONSTANT_MARKED, args)
    assert_same(got, plain, "constant marked")
    check_gradient(CONSTANT_MARKED, args, rtol=1e-6, atol=1e-8)
    print("marker on a constant: same gradients,", recomputed(module), "ops recomputed")
# CHECK-LABEL: TEST: marker_on_constant
# CHECK: marker on a constant: same gradients, 2 ops recomputed

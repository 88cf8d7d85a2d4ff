"""How lean rlx-gradient's adjoints are, raw and after rlx-simplify-gradient,
against backwards written by hand in rlx (not a timed benchmark).

    build/venv/bin/python bench/simplify.py [mlp|convnet|attention ...] [--json PATH]

Three models, float64, gradients with respect to the parameters (not the
input batch), as in training:
  * mlp:       dense(64->128), relu, dense(128->10), log_softmax, nll_loss;
  * convnet:   conv2d(3->8, 3x3, pad 1), relu, max_pool2d(2x2), dense(512->10),
               log_softmax, nll_loss;
  * attention: q/k/v projections, softmax(q k^T) v, residual, layer_norm,
               sum of squares.
For each: ops of @main (the forward), of @main_adjoint raw (simplify=false)
and simplified (rlx-gradient's default), and of a hand-written
@main_hand (the same forward, then a backward written with the rlx
builders, PyTorch-style per-op formulas); every count includes the forward
and excludes the return.  FLOPs come from gradir.autodiff.cost (the model of rlx-memory-report); "bwd/fwd" is
(adjoint FLOPs - forward FLOPs) / forward FLOPs, the backward's own work.
All three adjoints are evaluated with the reference interpreter on the same
random inputs and must agree.

Targets (issue 5): simplified ops <= 1.1 x hand-written; bwd/fwd <= 2 for
the MLP and the attention block.  ``--json PATH``: the table also goes to
PATH with its provenance (bench/_results.py).
"""

from __future__ import annotations

import sys

import _cli  # bench/_cli.py: --help, unknown options
import _results  # bench/_results.py: --json, the results' provenance
import numpy as np
from mlir import ir
from mlir.dialects import arith, func

import gradir
from gradir.autodiff.cost import function_flops
from gradir.autodiff.simplify import count_ops
from gradir.dialects import rlx
from gradir.ir import find_function


def f64(*shape):
    return ir.RankedTensorType.get(list(shape), ir.F64Type.get())


def i64(*shape):
    return ir.RankedTensorType.get(list(shape), ir.IntegerType.get_signless(64))


def const(value, elt=None):
    """A 0-d f64 constant (or a 1-D integer one from a list)."""
    if isinstance(value, list):
        arr = np.asarray(value, dtype=np.int64)
        t = i64(len(arr))
        return arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=t)).result
    t = f64()
    return arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(
        t, ir.FloatAttr.get(ir.F64Type.get(), float(value)))).result


def T(x):
    r = len(ir.RankedTensorType(x.type).shape)
    return rlx.permute_dims(x, list(range(r - 2)) + [r - 1, r - 2])


# --- hand-written backward pieces (PyTorch-style formulas) --------------------

def nll_log_softmax_backward(lp, t, classes):
    """d nll_loss(lp, t, mean) / d logits, through log_softmax."""
    onehot = rlx.astype(rlx.equal(rlx.expand_dims(t, 1), const(list(range(classes)))), "f64")
    count = rlx.sum(onehot)                                       # non-ignored targets
    dlp = rlx.divide(onehot, rlx.negative(count))                 # d loss / d lp
    return rlx.subtract(dlp, rlx.multiply(rlx.exp(lp), rlx.sum(dlp, axis=1, keepdims=True)))


def dense_backward(x, w, dz, need_dx=True):
    """z = x @ w (+ b): (dx, dw, db)."""
    dw = rlx.matmul(T(x), dz)
    db = rlx.sum(dz, axis=0)
    dx = rlx.matmul(dz, T(w)) if need_dx else None
    return dx, dw, db


def relu_backward(a, g):
    zero = const(0.0)
    return rlx.where(rlx.greater(a, zero), g, zero)


# --- models ------------------------------------------------------------------------

def mlp():
    B, D, H, C = 32, 64, 128, 10
    sig = [f64(B, D), f64(D, H), f64(H), f64(H, C), f64(C), i64(B)]

    def forward(x, w1, b1, w2, b2, t):
        a1 = rlx.add(rlx.matmul(x, w1), b1)
        h = rlx.relu(a1)
        lp = rlx.log_softmax(rlx.add(rlx.matmul(h, w2), b2), axis=-1)
        return rlx.nll_loss(lp, t, reduction="mean"), dict(a1=a1, h=h, lp=lp)

    def hand(x, w1, b1, w2, b2, t):
        loss, v = forward(x, w1, b1, w2, b2, t)
        dz2 = nll_log_softmax_backward(v["lp"], t, C)
        dh, dw2, db2 = dense_backward(v["h"], w2, dz2)
        dz1 = relu_backward(v["a1"], dh)
        _, dw1, db1 = dense_backward(x, w1, dz1, need_dx=False)
        return loss, dw1, db1, dw2, db2

    def args(rng):
        return [rng.standard_normal((B, D)), rng.standard_normal((D, H)) * 0.1,
                rng.standard_normal(H) * 0.1, rng.standard_normal((H, C)) * 0.1,
                rng.standard_normal(C) * 0.1, rng.integers(0, C, size=B)]

    return sig, forward, hand, [1, 2, 3, 4], args


def convnet():
    N, C, S, K, CLS = 8, 3, 16, 8, 10
    flat = K * (S // 2) * (S // 2)
    sig = [f64(N, C, S, S), f64(K, C, 3, 3), f64(flat, CLS), f64(CLS), i64(N)]

    def forward(x, k, w, b, t):
        c = rlx.conv2d(x, k, padding=1)
        r = rlx.relu(c)
        p = rlx.max_pool2d(r, pool_size=2, strides=2)
        f = rlx.reshape(p, [N, flat])
        lp = rlx.log_softmax(rlx.add(rlx.matmul(f, w), b), axis=-1)
        return rlx.nll_loss(lp, t, reduction="mean"), dict(c=c, r=r, f=f, lp=lp)

    def hand(x, k, w, b, t):
        loss, v = forward(x, k, w, b, t)
        dz = nll_log_softmax_backward(v["lp"], t, CLS)
        df, dw, db = dense_backward(v["f"], w, dz)
        dp = rlx.reshape(df, [N, K, S // 2, S // 2])
        dr = rlx.max_pool2d_backward(dp, v["r"], pool_size=2, strides=2)
        dc = relu_backward(v["c"], dr)
        # stride-1 weight gradient: correlate the input with the output gradient
        swap = [1, 0, 2, 3]
        dk = rlx.permute_dims(rlx.conv2d(rlx.permute_dims(x, swap), rlx.permute_dims(dc, swap),
                                         padding=1), swap)
        return loss, dk, dw, db

    def args(rng):
        return [rng.standard_normal((N, C, S, S)), rng.standard_normal((K, C, 3, 3)) * 0.3,
                rng.standard_normal((flat, CLS)) * 0.05, rng.standard_normal(CLS) * 0.1,
                rng.integers(0, CLS, size=N)]

    return sig, forward, hand, [1, 2, 3], args


def attention():
    S, D = 16, 32
    eps = 1e-5
    sig = [f64(S, D), f64(D, D), f64(D, D), f64(D, D), f64(D), f64(D)]

    def forward(x, wq, wk, wv, g, b):
        q, k, v = rlx.matmul(x, wq), rlx.matmul(x, wk), rlx.matmul(x, wv)
        p = rlx.softmax(rlx.matmul(q, T(k)), axis=-1)
        r = rlx.add(rlx.matmul(p, v), x)
        y = rlx.layer_norm(r, g, b, axes=[-1], epsilon=eps)
        return rlx.sum(rlx.square(y)), dict(q=q, k=k, v=v, p=p, r=r, y=y)

    def hand(x, wq, wk, wv, g, b):
        loss, f = forward(x, wq, wk, wv, g, b)
        dy = rlx.multiply(f["y"], const(2.0))
        # layer_norm backward (the forward keeps no statistics: recompute them)
        centered = rlx.subtract(f["r"], rlx.mean(f["r"], axis=1, keepdims=True))
        var = rlx.mean(rlx.square(centered), axis=1, keepdims=True)
        rstd = rlx.rsqrt(rlx.add(var, const(eps)))
        xhat = rlx.multiply(centered, rstd)
        dg = rlx.sum(rlx.multiply(dy, xhat), axis=0)
        db = rlx.sum(dy, axis=0)
        dxhat = rlx.multiply(dy, g)
        dr = rlx.multiply(rstd, rlx.subtract(
            rlx.subtract(dxhat, rlx.mean(dxhat, axis=1, keepdims=True)),
            rlx.multiply(xhat, rlx.mean(rlx.multiply(dxhat, xhat), axis=1, keepdims=True))))
        # attention backward (the residual's x needs no gradient)
        dp = rlx.matmul(dr, T(f["v"]))
        dv = rlx.matmul(T(f["p"]), dr)
        ds = rlx.multiply(f["p"], rlx.subtract(
            dp, rlx.sum(rlx.multiply(dp, f["p"]), axis=1, keepdims=True)))
        dq = rlx.matmul(ds, f["k"])
        dk = rlx.matmul(T(ds), f["q"])
        xt = T(x)
        return loss, rlx.matmul(xt, dq), rlx.matmul(xt, dk), rlx.matmul(xt, dv), dg, db

    def args(rng):
        return [rng.standard_normal((S, D)), rng.standard_normal((D, D)) * 0.2,
                rng.standard_normal((D, D)) * 0.2, rng.standard_normal((D, D)) * 0.2,
                1.0 + 0.1 * rng.standard_normal(D), 0.1 * rng.standard_normal(D)]

    return sig, forward, hand, [1, 2, 3, 4, 5], args


MODELS = {"mlp": mlp, "convnet": convnet, "attention": attention}


def build(model) -> str:
    sig, forward, hand, _, _ = model
    with ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(*sig, name="main")
            def main(*a):
                return forward(*a)[0]

            @func.FuncOp.from_py_func(*sig, name="main_hand")
            def main_hand(*a):
                return hand(*a)
        return gradir.print_module(module)


def measure(name: str, model, rng) -> dict:
    text = build(model)
    wrt = ",".join(str(i) for i in model[3])
    raw = gradir.run_pipeline(gradir.parse(text),
                              f"builtin.module(rlx-gradient{{wrt={wrt} simplify=false}})")
    simple = gradir.run_pipeline(gradir.parse(text), f"builtin.module(rlx-gradient{{wrt={wrt}}})")
    fns = {"forward": find_function(raw.operation, "main"),
           "raw": find_function(raw.operation, "main_adjoint"),
           "simplified": find_function(simple.operation, "main_adjoint"),
           "hand": find_function(raw.operation, "main_hand")}
    args = model[4](rng)
    want = gradir.interpret(raw, "main_adjoint", *args)
    for module, fn in ((simple, "main_adjoint"), (raw, "main_hand")):
        got = gradir.interpret(module, fn, *args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=f"{name} {fn}")
    row = {"model": name}
    for key, fn in fns.items():
        row[f"{key}_ops"] = count_ops(fn)
        row[f"{key}_flops"] = function_flops(fn)
    return row


def main(argv) -> int:
    _cli.check(argv, __doc__, positional=None, valued=("--json",))
    path = _results.json_option(argv)
    if path:
        at = argv.index("--json")
        argv = argv[:at] + argv[at + 2:]
    unknown = [n for n in argv if n not in MODELS]
    if unknown:
        print(f"error: no model {unknown[0]!r} (models: {', '.join(MODELS)})", file=sys.stderr)
        return 2
    names = argv or list(MODELS)
    rng = np.random.default_rng(0)
    with gradir.make_context(), ir.Location.unknown():
        rows = [measure(n, MODELS[n](), rng) for n in names]
    print(f"{'model':<10} {'ops: fwd':>8} {'raw':>5} {'simpl':>5} {'hand':>5} {'simpl/hand':>10}"
          f" | {'MFLOP: fwd':>10} {'raw':>7} {'simpl':>7} {'hand':>7}"
          f" | {'bwd/fwd: raw':>12} {'simpl':>6} {'hand':>6}")
    ok = True
    table = []
    for r in rows:
        fwd = r["forward_flops"]
        bwd = {k: (r[f"{k}_flops"] - fwd) / fwd for k in ("raw", "simplified", "hand")}
        ratio = r["simplified_ops"] / r["hand_ops"]
        mf = {k: r[f"{k}_flops"] / 1e6 for k in ("forward", "raw", "simplified", "hand")}
        print(f"{r['model']:<10} {r['forward_ops']:>8} {r['raw_ops']:>5} "
              f"{r['simplified_ops']:>5} {r['hand_ops']:>5} {ratio:>10.2f}"
              f" | {mf['forward']:>10.4f} {mf['raw']:>7.4f} {mf['simplified']:>7.4f} "
              f"{mf['hand']:>7.4f} | {bwd['raw']:>12.3f} {bwd['simplified']:>6.3f} "
              f"{bwd['hand']:>6.3f}")
        table.append([r["model"], r["forward_ops"], r["raw_ops"], r["simplified_ops"],
                      r["hand_ops"], ratio, mf["forward"], mf["raw"], mf["simplified"],
                      mf["hand"], bwd["raw"], bwd["simplified"], bwd["hand"]])
        ok &= ratio <= 1.1
        if r["model"] in ("mlp", "attention"):
            ok &= bwd["simplified"] <= 2.0
    print("targets met" if ok else "targets NOT met")
    print("(all three adjoints agree on random float64 inputs)")
    if path:
        _results.save_results(path, "simplify", [{
            "title": "ops and FLOPs of the forward, the raw and simplified adjoints and a "
                     "hand-written backward",
            "columns": ["model", "fwd ops", "raw ops", "simplified ops", "hand ops",
                        "simplified/hand ops", "fwd MFLOP", "raw MFLOP", "simplified MFLOP",
                        "hand MFLOP", "bwd/fwd raw", "bwd/fwd simplified", "bwd/fwd hand"],
            "formats": [None] * 5 + [".2f"] + [".4f"] * 4 + [".3f"] * 3,
            "rows": table}], notes=[
            "Float64, gradients with respect to the parameters; op counts include the "
            "forward and exclude the return; bwd/fwd = (adjoint FLOPs - forward FLOPs) / "
            "forward FLOPs (gradir.autodiff.cost).",
            "Targets: simplified ops <= 1.1 x hand-written; bwd/fwd <= 2 for the MLP and "
            "the attention block: " + ("met." if ok else "NOT met."),
            "All three adjoints agree on random float64 inputs (reference interpreter)."])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# RUN: %PYTHON %s | FileCheck %s
# An MLP end to end (dense, relu, log_softmax, nll_loss), built with the
# Python builders; every parameter's gradient is checked against finite
# differences (float64) and against a hand-written numpy backward.

import numpy as np
from mlir import ir
from mlir.dialects import func

import gradir
from gradir.dialects import rlx
from gradir.testing import check_gradient


def build(batch=4, d_in=5, hidden=6, classes=3):
    ctx = gradir.make_context()
    f64 = lambda *s: ir.RankedTensorType.get(s, ir.F64Type.get())  # noqa: E731
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(f64(batch, d_in), f64(d_in, hidden), f64(hidden),
                                      f64(hidden, classes), f64(classes),
                                      ir.RankedTensorType.get([batch], ir.IntegerType.get_signless(64)))
            def main(x, w1, b1, w2, b2, t):
                h = rlx.relu(rlx.add(rlx.matmul(x, w1), b1))
                logits = rlx.add(rlx.matmul(h, w2), b2)
                return rlx.nll_loss(rlx.log_softmax(logits, axis=-1), t, reduction="mean")
    return gradir.print_module(module)


def numpy_backward(x, w1, b1, w2, b2, t):
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0)
    z2 = h @ w2 + b2
    p = np.exp(z2 - z2.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    n = len(t)
    dz2 = p.copy()
    dz2[np.arange(n), t] -= 1
    dz2 /= n
    dw2, db2 = h.T @ dz2, dz2.sum(0)
    dz1 = (dz2 @ w2.T) * (z1 > 0)
    return [x.T @ dz1, dz1.sum(0), dw2, db2]


rng = np.random.default_rng(0)
text = build()
args = [rng.standard_normal(s) for s in [(4, 5), (5, 6), (6,), (6, 3), (3,)]]
args.append(np.array([0, 2, 1, 2], dtype=np.int64))
grads = check_gradient(text, args, wrt=[1, 2, 3, 4], rtol=1e-5, atol=1e-8)
for g, e in zip(grads, numpy_backward(*args)):
    np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
print("mlp gradients match finite differences and numpy")
# CHECK: mlp gradients match finite differences and numpy

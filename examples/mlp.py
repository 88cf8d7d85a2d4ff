"""An MLP classifier in rlx, shared by the training demo and the benchmarks.

    loss = nll_loss(log_softmax(dense_L(relu(... relu(dense_1(x))))), labels)

``build_mlp`` returns a module whose ``@main(x, labels, w1, b1, ..., wL, bL)``
returns ``(loss, logits)``; ``differentiate`` adds ``@main_adjoint`` returning
``(loss, logits, dw1, db1, ...)`` with rlx-gradient.
"""

from __future__ import annotations

import numpy as np

__all__ = ["build_mlp", "differentiate", "init_params", "numpy_step"]


def build_mlp(batch: int, sizes: list[int], dtype: str = "f32"):
    """sizes = [inputs, hidden..., classes]."""
    # MLIR is imported here, not at the top: the numpy half of this module
    # (init_params, numpy_step) also runs where MLIR is not installed
    # (bench/gpu.py on the GPU machine).
    from mlir import ir
    from mlir.dialects import func

    import gradir
    from gradir.dialects import rlx

    ctx = gradir.make_context()
    with ctx, ir.Location.unknown():
        elt = rlx.to_dtype(dtype)
        t = lambda *s: ir.RankedTensorType.get(list(s), elt)  # noqa: E731
        i64 = ir.IntegerType.get_signless(64)
        arg_types = [t(batch, sizes[0]), ir.RankedTensorType.get([batch], i64)]
        for a, b in zip(sizes, sizes[1:]):
            arg_types += [t(a, b), t(b)]
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(*arg_types)
            def main(x, labels, *params):
                h = x
                n_layers = len(params) // 2
                for i in range(n_layers):
                    h = rlx.add(rlx.matmul(h, params[2 * i]), params[2 * i + 1])
                    if i + 1 < n_layers:
                        h = rlx.relu(h)
                loss = rlx.nll_loss(rlx.log_softmax(h, axis=-1), labels, reduction="mean")
                return loss, h
    return module


def differentiate(module, simplify: bool = True):
    """Adds @main_adjoint: gradients with respect to every parameter."""
    import gradir
    n_args = len(list(module.body.operations)[0].arguments)
    wrt = ",".join(str(i) for i in range(2, n_args))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt} "
                                f"simplify={'true' if simplify else 'false'}}})")
    return module


def init_params(sizes: list[int], dtype=np.float32, seed: int = 0,
                bias: float = 0.0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes, sizes[1:]):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(dtype))
        params.append(np.full(b, bias, dtype))
    return params


def numpy_step(x, labels, *params):
    """A hand-written numpy forward+backward: (loss, logits, grads...)."""
    n_layers = len(params) // 2
    acts, pre = [x], []
    h = x
    for i in range(n_layers):
        z = h @ params[2 * i] + params[2 * i + 1]
        pre.append(z)
        h = np.maximum(z, 0) if i + 1 < n_layers else z
        acts.append(h)
    logits = acts[-1]
    m = logits.max(1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(1, keepdims=True)
    logp = logits - m - np.log(s)
    n = len(labels)
    loss = -logp[np.arange(n), labels].mean()
    dz = e / s
    dz[np.arange(n), labels] -= 1
    dz /= n
    grads = [None] * len(params)
    for i in reversed(range(n_layers)):
        grads[2 * i] = acts[i].T @ dz
        grads[2 * i + 1] = dz.sum(0)
        if i:
            dz = (dz @ params[2 * i].T) * (pre[i - 1] > 0)
    return (np.asarray(loss, dtype=x.dtype), logits, *grads)

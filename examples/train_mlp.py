"""gradir's demo: train an MLP with a compiled gradient.

Builds a 2-64-64-3 MLP classifier in rlx, differentiates it with
rlx-gradient, compiles @main_adjoint to machine code (linalg -> LLVM, JIT),
and trains it with plain SGD on a generated, deterministic 3-arm spiral.
Checks one gradient against central finite differences (float64 build) and
exits non-zero if the loss does not fall.

    cmake -S . -B build && cmake --build build --target demo
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp import build_mlp, differentiate, init_params  # noqa: E402

import gradir  # noqa: E402

SIZES = [2, 64, 64, 3]
BATCH = 100
EPOCHS = 60
LR = 0.5


def spiral(points_per_class=200, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for c in range(classes):
        r = np.linspace(0.05, 1.0, points_per_class)
        theta = c * 2 * np.pi / classes + r * 4.0 + rng.normal(0, 0.15, points_per_class)
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], 1))
        ys.append(np.full(points_per_class, c))
    x = np.concatenate(xs).astype(np.float32)
    y = np.concatenate(ys).astype(np.int64)
    order = rng.permutation(len(x))
    return x[order], y[order]


def progress(epoch, total, loss, acc, width=30):
    done = int(width * epoch / total)
    return (f"epoch {epoch:3d}/{total} [{'#' * done}{'.' * (width - done)}] "
            f"loss {loss:.4f}  accuracy {acc:5.1%}")


def gradient_check() -> bool:
    """dloss/dw2[3, 5] of the compiled float64 adjoint vs finite differences
    of the compiled float64 forward."""
    module = differentiate(build_mlp(BATCH, SIZES, "f64"))
    exe = gradir.compile(module)
    x, y = spiral()
    params = init_params(SIZES, np.float64, seed=1)
    args = [x[:BATCH].astype(np.float64), y[:BATCH], *params]
    grad = exe["main_adjoint"](*args)[2 + 2]        # (loss, logits, dw1, db1, dw2, ...)
    eps = 1e-6
    w2 = params[2]
    w2[3, 5] += eps
    up = exe["main"](*args)[0]
    w2[3, 5] -= 2 * eps
    down = exe["main"](*args)[0]
    w2[3, 5] += eps
    fd = (up - down) / (2 * eps)
    rel = abs(grad[3, 5] - fd) / max(abs(fd), 1e-12)
    ok = rel < 1e-5
    print(f"gradient check (float64): dloss/dw2[3,5] compiled {grad[3, 5]:.10f}, "
          f"finite differences {fd:.10f}, relative error {rel:.1e} "
          f"{'OK' if ok else 'FAILED'}")
    return ok


def main() -> int:
    t0 = time.perf_counter()
    module = differentiate(build_mlp(BATCH, SIZES))
    exe = gradir.compile(module)
    step = exe["main_adjoint"]
    print(f"compiled @main_adjoint of a {'-'.join(map(str, SIZES))} MLP "
          f"(batch {BATCH}) in {time.perf_counter() - t0:.2f} s")

    x, y = spiral()
    params = init_params(SIZES)
    n_batches = len(x) // BATCH
    first = last = None
    t0 = time.perf_counter()
    for epoch in range(1, EPOCHS + 1):
        losses, correct = [], 0
        for b in range(n_batches):
            xb, yb = x[b * BATCH:(b + 1) * BATCH], y[b * BATCH:(b + 1) * BATCH]
            loss, logits, *grads = step(xb, yb, *params)
            for p, g in zip(params, grads):
                p -= LR * g
            losses.append(float(loss))
            correct += int((logits.argmax(1) == yb).sum())
        mean = float(np.mean(losses))
        first = mean if first is None else first
        last = mean
        if epoch == 1 or epoch % 10 == 0:
            print(progress(epoch, EPOCHS, mean, correct / len(x)), flush=True)
    steps = EPOCHS * n_batches
    print(f"{steps} SGD steps in {time.perf_counter() - t0:.2f} s; "
          f"loss {first:.4f} -> {last:.4f}")

    ok = gradient_check()
    if not last < 0.5 * first:
        print(f"training FAILED: the loss fell only from {first:.4f} to {last:.4f}",
              file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

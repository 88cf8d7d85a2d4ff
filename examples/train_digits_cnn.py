"""gradir's PyTorch demo: a CNN written in PyTorch, trained by gradir.

The model is an ordinary ``torch.nn.Module`` (conv-relu-pool twice, then a
linear classifier; the cross-entropy loss inside).  gradir imports it
(``gradir.frontends.torch.import_module``, via torch.export), differentiates
it (``rlx-gradient``), compiles ``@main_adjoint`` to machine code
(``gradir.compile``: rlx -> linalg -> LLVM, JIT) and trains it with Adam
written in numpy on scikit-learn's 8x8 handwritten digits (1,797 images that
ship inside the package: no download).  The same model, from the same
initial weights and on the same batches, is trained by PyTorch eager for
comparison, and twice more with ``torch.optim.Adam`` on gradir's gradients:
through ``gradir.frontends.torch.compile`` (an ``nn.Module`` whose forward and
backward are gradir's compiled code) and through ``torch.compile(model,
backend="gradir")``.  Time per epoch side by side, held-out test accuracy,
and the loss curves in a PNG.

Checks itself, and exits non-zero otherwise: the test accuracy of every
gradir run must reach the threshold, the first step's loss of the two
``torch.optim`` runs must equal eager PyTorch's, one gradient of a float64
import must match central finite differences, and every float64 gradient
must match torch.autograd.

    cmake -S . -B build && cmake --build build --target demo
    build/venv/bin/python examples/train_digits_cnn.py --quick     # 3 epochs
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time

import numpy as np

EPOCHS = 12
QUICK_EPOCHS = 3
BATCH = 64
LR = 3e-3
SEED = 0


def load_digits_split(seed=SEED):
    """scikit-learn's digits as (N, 1, 8, 8) float32 in [0, 1] and int64
    labels; 80% train, 20% test (stratified, fixed seed)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


def make_model():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class DigitsCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
            self.fc = nn.Linear(32 * 2 * 2, 10)

        def forward(self, x, labels):
            h = F.max_pool2d(F.relu(self.conv1(x)), 2)          # 16 x 4 x 4
            h = F.max_pool2d(F.relu(self.conv2(h)), 2)          # 32 x 2 x 2
            logits = self.fc(torch.flatten(h, 1))
            return F.cross_entropy(logits, labels), logits

    torch.manual_seed(SEED)
    return DigitsCNN()


def compile_step(model, batch):
    """import -> rlx-gradient (w.r.t. the parameters) -> compile."""
    import torch

    import gradir
    from gradir.frontends.torch import import_module

    dtype = next(model.parameters()).dtype
    example = (torch.zeros(batch, 1, 8, 8, dtype=dtype), torch.zeros(batch, dtype=torch.int64))
    module = import_module(model, example)
    n_params = len(list(model.parameters()))
    wrt = ",".join(str(i) for i in range(2, 2 + n_params))
    gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    return module, gradir.compile(module, target="cpu")


class Adam:
    def __init__(self, params, lr=LR, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, params, grads):
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            p -= (self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)).astype(p.dtype)


def batches(n, epoch, batch=BATCH):
    order = np.random.default_rng(SEED + epoch).permutation(n)
    return [order[i:i + batch] for i in range(0, n - batch + 1, batch)]


def bar(done, total, width=24):
    k = int(width * done / total)
    return "[" + "#" * k + "." * (width - k) + "]"


def evaluate(forward, params, x, y):
    """Accuracy with the batch-shaped compiled @main (last batch padded)."""
    correct = 0
    for i in range(0, len(x), BATCH):
        xb, yb = x[i:i + BATCH], y[i:i + BATCH]
        n = len(xb)
        if n < BATCH:
            xb = np.concatenate([xb, np.zeros((BATCH - n,) + xb.shape[1:], xb.dtype)])
            yb = np.concatenate([yb, np.zeros(BATCH - n, yb.dtype)])
        _, logits = forward(xb, yb, *params)
        correct += int((logits[:n].argmax(1) == y[i:i + n]).sum())
    return correct / len(x)


def train_gradir(model, data, epochs, live):
    xtr, xte, ytr, yte = data
    t0 = time.perf_counter()
    _, exe = compile_step(model, BATCH)
    compile_s = time.perf_counter() - t0
    print(f"gradir: imported, differentiated and compiled the model in {compile_s:.2f} s")
    step, forward = exe["main_adjoint"], exe["main"]
    params = [p.detach().numpy().copy() for p in model.parameters()]
    opt = Adam(params)
    losses, epoch_times, accs = [], [], []
    for epoch in range(1, epochs + 1):
        plan = batches(len(xtr), epoch)
        t0 = time.perf_counter()
        epoch_losses = []
        for k, idx in enumerate(plan, 1):
            loss, _, *grads = step(xtr[idx], ytr[idx], *params)
            opt.step(params, grads)
            epoch_losses.append(float(loss))
            if live:
                print(f"\r  epoch {epoch:2d}/{epochs} {bar(k, len(plan))} loss "
                      f"{np.mean(epoch_losses):.4f}", end="", flush=True)
        epoch_times.append(time.perf_counter() - t0)
        losses.extend(epoch_losses)
        accs.append(evaluate(forward, params, xte, yte))
        print(f"\r  epoch {epoch:2d}/{epochs} {bar(epoch, epochs)} loss "
              f"{np.mean(epoch_losses):.4f}  test accuracy {accs[-1]:6.2%}  "
              f"{epoch_times[-1]:.3f} s", flush=True)
    return losses, epoch_times, accs, compile_s


def train_torch(model, data, epochs):
    import torch

    xtr, xte, ytr, yte = (torch.from_numpy(a) for a in data)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    losses, epoch_times = [], []
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        for idx in batches(len(xtr), epoch):
            idx = torch.from_numpy(idx)
            loss, _ = model(xtr[idx], ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        epoch_times.append(time.perf_counter() - t0)
    with torch.no_grad():
        acc = float((model(xte, yte)[1].argmax(1) == yte).double().mean())
    return losses, epoch_times, acc


def train_torch_gradir(model, data, epochs, how):
    """``torch.optim.Adam`` on gradir's gradients: ``how`` is "module"
    (``gradir.frontends.torch.compile``) or "backend" (``torch.compile(model,
    backend="gradir")``).  Returns the losses, epoch times, the test
    accuracy (batch-shaped calls under no_grad: the training variant's
    compiled forward), the compile time and the fallback warnings."""
    import warnings

    import torch

    import gradir.frontends.torch as gt
    from gradir.frontends.torch.backend import GradirFallbackWarning

    xtr, xte, ytr, yte = (torch.from_numpy(a) for a in data)
    t0 = time.perf_counter()
    first = batches(len(xtr), 1)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GradirFallbackWarning)
        if how == "module":
            net = gt.compile(model, (xtr[first], ytr[first]))
        else:
            net = torch.compile(model, backend="gradir")
            net(xtr[first], ytr[first])         # Dynamo's graph, compiled by gradir
        compile_s = time.perf_counter() - t0
        opt = torch.optim.Adam(model.parameters(), lr=LR)
        losses, epoch_times = [], []
        for epoch in range(1, epochs + 1):
            t0 = time.perf_counter()
            for idx in batches(len(xtr), epoch):
                idx = torch.from_numpy(idx)
                loss, _ = net(xtr[idx], ytr[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            epoch_times.append(time.perf_counter() - t0)
        correct = 0
        with torch.no_grad():
            for i in range(0, len(xte), BATCH):
                xb, yb = xte[i:i + BATCH], yte[i:i + BATCH]
                n = len(xb)
                if n < BATCH:                        # padded: the same shapes
                    xb = torch.cat([xb, xb.new_zeros((BATCH - n,) + xb.shape[1:])])
                    yb = torch.cat([yb, yb.new_zeros(BATCH - n)])
                correct += int((net(xb, yb)[1][:n].argmax(1) == yte[i:i + n]).sum())
    fallbacks = [w for w in caught if issubclass(w.category, GradirFallbackWarning)]
    return losses, epoch_times, correct / len(xte), compile_s, fallbacks


def gradient_checks(model, data) -> bool:
    """float64 import: one gradient against central finite differences of the
    compiled @main, and all of them against torch.autograd."""
    import torch

    model = copy.deepcopy(model).double()
    xtr, _, ytr, _ = data
    n = 16
    module, exe = compile_step(model, n)
    x, y = xtr[:n].astype(np.float64), ytr[:n]
    params = [p.detach().numpy().copy() for p in model.parameters()]
    loss, _, *grads = exe["main_adjoint"](x, y, *params)

    w, where = params[0], (3, 0, 1, 1)          # conv1.weight[3, 0, 1, 1]
    eps = 1e-6
    w[where] += eps
    up = exe["main"](x, y, *params)[0]
    w[where] -= 2 * eps
    down = exe["main"](x, y, *params)[0]
    w[where] += eps
    fd = (up - down) / (2 * eps)
    got = grads[0][where]
    rel = abs(got - fd) / max(abs(fd), 1e-12)
    fd_ok = rel < 1e-6
    print(f"gradient check (float64): dloss/dconv1.weight[3,0,1,1] gradir {got:.10f}, "
          f"finite differences {fd:.10f}, relative error {rel:.1e} "
          f"{'OK' if fd_ok else 'FAILED'}")

    tloss, _ = model(torch.from_numpy(x), torch.from_numpy(y))
    tgrads = torch.autograd.grad(tloss, list(model.parameters()))
    worst = max(float(np.max(np.abs(g - t.numpy())) / (np.max(np.abs(t.numpy())) + 1e-30))
                for g, t in zip(grads, tgrads))
    torch_ok = worst < 1e-9 and abs(float(loss) - float(tloss.detach())) < 1e-9
    print(f"gradient check (float64): every gradient vs torch.autograd, largest relative "
          f"difference {worst:.1e} {'OK' if torch_ok else 'FAILED'}")
    return fd_ok and torch_ok


def plot(path, gradir_losses, torch_losses, steps_per_epoch, more=()):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    steps = np.arange(1, len(gradir_losses) + 1) / steps_per_epoch
    ax.plot(steps, gradir_losses, label="gradir (compiled rlx-gradient, numpy Adam)", lw=1.2)
    ax.plot(steps, torch_losses, label="PyTorch eager", lw=1.0, ls="--")
    for label, losses in more:
        ax.plot(steps, losses, label=label, lw=1.0, ls=":")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss (cross-entropy)")
    ax.set_yscale("log")
    ax.set_title("DigitsCNN on scikit-learn's 8x8 digits")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"training epochs (default {EPOCHS}; --quick: {QUICK_EPOCHS})")
    parser.add_argument("--quick", action="store_true",
                        help="a short run (the test suite's), same checks")
    parser.add_argument("--plot", default="digits_cnn_loss.png", help="loss-curve PNG")
    parser.add_argument("--min-accuracy", type=float, default=None,
                        help="test accuracy to reach (default 0.93; --quick: 0.85)")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="PyTorch's intra-op threads (gradir's code is single-threaded)")
    args = parser.parse_args(argv)
    epochs = args.epochs or (QUICK_EPOCHS if args.quick else EPOCHS)
    threshold = args.min_accuracy or (0.85 if args.quick else 0.93)

    import torch
    torch.set_num_threads(args.torch_threads)

    data = load_digits_split()
    xtr, xte = data[0], data[1]
    print(f"digits: {len(xtr)} training and {len(xte)} test images (8x8), batch {BATCH}, "
          f"Adam lr {LR}, {epochs} epochs")
    model = make_model()
    initial = copy.deepcopy(model)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {type(model).__name__} (PyTorch), {n_params} parameters")

    live = sys.stdout.isatty()
    g_losses, g_times, g_accs, _ = train_gradir(model, data, epochs, live)
    t_losses, t_times, t_acc = train_torch(copy.deepcopy(initial), data, epochs)

    steady = slice(1, None) if epochs > 1 else slice(None)   # epoch 1 warms up caches
    g_epoch, t_epoch = np.mean(g_times[steady]), np.mean(t_times[steady])
    print(f"time per epoch: gradir {g_epoch * 1000:.0f} ms, PyTorch eager "
          f"({args.torch_threads} thread{'s' if args.torch_threads > 1 else ''}) "
          f"{t_epoch * 1000:.0f} ms  (PyTorch / gradir = {t_epoch / g_epoch:.2f})")
    print(f"test accuracy: gradir {g_accs[-1]:.2%}, PyTorch eager {t_acc:.2%}; final "
          f"epoch loss gradir {np.mean(g_losses[-len(batches(len(xtr), 1)):]):.4f}, "
          f"PyTorch {np.mean(t_losses[-len(batches(len(xtr), 1)):]):.4f}")

    ok = True
    more = []
    for how, label in (("module", "gradir.frontends.torch.compile"),
                       ("backend", 'torch.compile(backend="gradir")')):
        losses, times, acc, compile_s, fallbacks = train_torch_gradir(
            copy.deepcopy(initial), data, epochs, how)
        first = abs(losses[0] - t_losses[0]) / abs(t_losses[0])
        same = first < 1e-5 and not fallbacks
        print(f"{label} + torch.optim.Adam: compiled in {compile_s:.2f} s, "
              f"{np.mean(times[steady]) * 1000:.0f} ms per epoch, test accuracy {acc:.2%}, "
              f"final epoch loss {np.mean(losses[-len(batches(len(xtr), 1)):]):.4f}; first "
              f"step's loss vs eager: relative difference {first:.1e} "
              f"{'OK' if same else 'FAILED'}" + (f" ({len(fallbacks)} graphs fell back to "
                                                   "eager)" if fallbacks else ""))
        more.append((f"{label} + torch.optim.Adam", losses))
        if acc < threshold:
            print(f"FAILED: {label}: test accuracy {acc:.2%} is below {threshold:.0%}",
                  file=sys.stderr)
        ok = ok and same and acc >= threshold

    plot(args.plot, g_losses, t_losses, len(batches(len(xtr), 1)), more)
    print(f"loss curves written to {os.path.abspath(args.plot)}")

    ok = gradient_checks(initial, data) and ok
    if g_accs[-1] < threshold:
        print(f"FAILED: test accuracy {g_accs[-1]:.2%} is below {threshold:.0%}",
              file=sys.stderr)
        return 1
    print(f"accuracy check: {g_accs[-1]:.2%} >= {threshold:.0%} OK")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

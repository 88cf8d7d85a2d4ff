"""ADBench's LSTM objective (l = 2 layers, b = 14, sequence length c): the
gradient w.r.t. main_params and extra_params, gradir (scf.for over time
steps, rlx-gradient, compiled for the CPU) against JAX (lax.scan + grad,
jit) and PyTorch eager, side by side in one run; gradir with every
iteration's state stored ("all") and with loop checkpointing ("sqrt",
"revolve").

    build/venv/bin/python bench/lstm_gradient.py [--lengths 100,1000] [--repeat 30] [--json PATH]

Peers: ``build/venv/bin/pip install jax torch==2.13.0`` (skipped if missing).
Float64 (ADBench's doubles).  Times: median of --repeat calls after a
warm-up, one process, the gradir policies' calls interleaved.  Memory:
rlx-memory-report's peak of @main_adjoint (arguments + saved for the
backward + temporaries) and its saved-for-backward part (the stacks of
loop states); JAX's is XLA's temp_size_in_bytes of the compiled gradient.
(At b = 14 a stack of 1000 states is ~440 KiB: below what the process's
resident-set counters resolve, so no RSS column.)  ``--json PATH``: the
table also goes to PATH with its provenance (bench/_results.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
from lstm import lstm_ir, lstm_objective, random_inputs  # noqa: E402

import _results  # noqa: E402  bench/_results.py: --json, the results' provenance

L, B = 2, 14
POLICIES = ("all", "sqrt", "revolve")


def median_ms(fn, args, repeat):
    """(median ms, best ms) of ``repeat`` calls after one warm-up call."""
    fn(*args)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts)), 1e3 * float(np.min(ts))


def gradir_adjoint(c: int, policy: str):
    import gradir
    text = lstm_ir(L, B, c, None if policy == "all" else policy)
    module = gradir.parse(text)
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{wrt=0,1})")
    return module


def gradir_cases(c: int, repeat: int) -> dict:
    """policy -> (median ms, memory report, outputs); calls interleaved."""
    import gradir
    from gradir.autodiff.gradient import find_function
    from gradir.autodiff.memory import memory_report
    args = random_inputs(L, B, c)
    fns, reports, outs = {}, {}, {}
    for pol in POLICIES:
        module = gradir_adjoint(c, pol)
        reports[pol] = memory_report(find_function(module.operation, "main_adjoint"))
        fns[pol] = gradir.compile(module)["main_adjoint"]
        outs[pol] = fns[pol](*args)
    times = {pol: [] for pol in POLICIES}
    for _ in range(repeat):
        for pol in POLICIES:
            t = time.perf_counter()
            fns[pol](*args)
            times[pol].append(time.perf_counter() - t)
    return {pol: (1e3 * float(np.median(times[pol])), reports[pol], outs[pol],
                  1e3 * float(np.min(times[pol]))) for pol in POLICIES}


def jax_case(c: int, repeat: int):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def objective(mp, ep, state, seq):
        def step(carry, t):
            s, total = carry
            xp = seq[t] * ep[0]
            new = []
            for k in range(L):
                w, bb = mp[2 * k].reshape(4, B), mp[2 * k + 1].reshape(4, B)
                h, cell = s[2 * k], s[2 * k + 1]
                forget = jax.nn.sigmoid(xp * w[0] + bb[0])
                ingate = jax.nn.sigmoid(h * w[1] + bb[1])
                outgate = jax.nn.sigmoid(xp * w[2] + bb[2])
                change = jnp.tanh(h * w[3] + bb[3])
                cell = cell * forget + ingate * change
                h = outgate * jnp.tanh(cell)
                new += [h, cell]
                xp = h
            ypred = xp * ep[1] + ep[2]
            ynorm = ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2)
            return (jnp.stack(new), total + jnp.sum(seq[t + 1] * ynorm)), None
        (_, total), _ = jax.lax.scan(step, (state, 0.0), jnp.arange(c - 1))
        return -total / ((c - 1) * B)

    g = jax.jit(jax.value_and_grad(objective, argnums=(0, 1)))
    args = [jnp.asarray(a) for a in random_inputs(L, B, c)]
    mem = g.lower(*args).compile().memory_analysis()
    temp = getattr(mem, "temp_size_in_bytes", None) if mem is not None else None
    call = lambda *a: jax.block_until_ready(g(*a))  # noqa: E731
    loss, (gm, ge) = call(*args)
    med, best = median_ms(call, args, repeat)
    return med, temp, (np.asarray(loss), np.asarray(gm), np.asarray(ge)), best


def torch_case(c: int, repeat: int):
    try:
        import torch
    except ImportError:
        return None
    torch.set_default_dtype(torch.float64)
    mp0, ep0, state0, seq0 = (torch.from_numpy(a) for a in random_inputs(L, B, c))

    def step():
        mp = mp0.clone().requires_grad_()
        ep = ep0.clone().requires_grad_()
        s = [state0[i] for i in range(2 * L)]
        total = torch.zeros(())
        for t in range(c - 1):
            xp = seq0[t] * ep[0]
            for k in range(L):
                w, bb = mp[2 * k].reshape(4, B), mp[2 * k + 1].reshape(4, B)
                forget = torch.sigmoid(xp * w[0] + bb[0])
                ingate = torch.sigmoid(s[2 * k] * w[1] + bb[1])
                outgate = torch.sigmoid(xp * w[2] + bb[2])
                change = torch.tanh(s[2 * k] * w[3] + bb[3])
                s[2 * k + 1] = s[2 * k + 1] * forget + ingate * change
                s[2 * k] = outgate * torch.tanh(s[2 * k + 1])
                xp = s[2 * k]
            ypred = xp * ep[1] + ep[2]
            ynorm = ypred - torch.log(torch.exp(ypred).sum() + 2)
            total = total + (seq0[t + 1] * ynorm).sum()
        loss = -total / ((c - 1) * B)
        loss.backward()
        return loss.detach().numpy(), mp.grad.numpy(), ep.grad.numpy()

    out = step()
    med, best = median_ms(lambda: step(), [], max(3, repeat // 5))
    return med, out, best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lengths", default="100,1000")
    p.add_argument("--repeat", type=int, default=30)
    _results.add_json_option(p)
    a = p.parse_args(argv)
    import platform
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    print(f"# ADBench LSTM gradient, l={L} b={B}, float64; {cpu}")
    rows = []
    for c in [int(x) for x in a.lengths.split(",")]:
        args = random_inputs(L, B, c)
        want = lstm_objective(*args)
        res = gradir_cases(c, a.repeat)
        base = res["all"][2]
        for pol, (_, _, outs, _) in res.items():
            np.testing.assert_allclose(outs[0], want, rtol=1e-12)
            for g, w in zip(outs[1:], base[1:]):
                np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)
        jx = jax_case(c, a.repeat)
        if jx is not None:
            for g, w in zip(jx[2], base):
                np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-14)
        th = torch_case(c, a.repeat)
        if th is not None:
            for g, w in zip(th[1], base):
                np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-14)
        rows.append((c, res, jx, th))
    print("# every gradient equals gradir-all's (and JAX's / PyTorch's) to 1e-9")
    print()
    print("| c | gradir | ms (best) | peak KiB | peak - args KiB | saved KiB | ms / all "
          "| (peak - args) all / this | saved all / this | JAX ms (best) | JAX / gradir "
          "| torch ms | torch / gradir |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    table = []
    for c, res, jx, th in rows:
        t_all = res["all"][0]
        s_all = res["all"][1].saved_total
        w_all = res["all"][1].peak - res["all"][1].arguments
        for pol in POLICIES:
            ms, rep, _, best = res[pol]
            jms = f"{jx[0]:.2f} ({jx[3]:.2f})" if jx else "-"
            jr = f"{jx[0] / ms:.2f}" if jx else "-"
            tms = f"{th[0]:.1f}" if th else "-"
            tr = f"{th[0] / ms:.0f}" if th else "-"
            work = rep.peak - rep.arguments
            print(f"| {c} | {pol} | {ms:.2f} ({best:.2f}) | {rep.peak / 1024:.1f} "
                  f"| {work / 1024:.1f} | {rep.saved_total / 1024:.1f} | {ms / t_all:.2f} "
                  f"| {w_all / work:.1f} | {s_all / max(rep.saved_total, 1):.1f} | {jms} | {jr} "
                  f"| {tms} | {tr} |")
            table.append([c, pol, ms, best, rep.peak / 1024, work / 1024,
                          rep.saved_total / 1024, ms / t_all, w_all / work,
                          s_all / max(rep.saved_total, 1), jx[0] if jx else None,
                          jx[3] if jx else None, jx[0] / ms if jx else None,
                          th[0] if th else None, th[0] / ms if th else None])
        if jx and jx[1] is not None:
            print(f"| {c} | JAX: XLA temp buffers | | | {jx[1] / 1024:.1f} | | | | | | | | |")
            table.append([c, "JAX: XLA temp buffers", None, None, None, jx[1] / 1024]
                         + [None] * 9)
    if a.json:
        _results.save_results(a.json, "lstm_gradient", [{
            "title": f"ADBench LSTM gradient, l={L} b={B}, float64",
            "columns": ["c", "gradir", "ms", "best ms", "peak KiB", "peak - args KiB",
                        "saved KiB", "ms / all", "(peak - args) all / this",
                        "saved all / this", "JAX ms", "JAX best ms", "JAX / gradir",
                        "torch ms", "torch / gradir"],
            "formats": [None, None, ".2f", ".2f", ".1f", ".1f", ".1f", ".2f", ".1f", ".1f",
                        ".2f", ".2f", ".2f", ".1f", ".0f"],
            "rows": table}], notes=[
            f"{cpu}; gradir compiled with its default thread count (the usable cores).",
            f"Times: median (and best) of {a.repeat} calls after a warm-up, one process, the "
            f"gradir policies' calls interleaved; PyTorch: {max(3, a.repeat // 5)} calls.",
            "Every gradient equals gradir-all's (and JAX's / PyTorch's) to 1e-9.",
            "Memory: rlx-memory-report's model of @main_adjoint; JAX's row is XLA's "
            "temp_size_in_bytes of the compiled gradient."])
    return 0


if __name__ == "__main__":
    sys.exit(main())

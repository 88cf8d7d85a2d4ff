"""lstm: ADBench's LSTM (diagonal weights) over a character sequence, the
average log-loss (objective) and its gradient w.r.t. main_params and
extra_params, flattened and concatenated (jacobian).

PyTorch as GradBench's tools/pytorch (ADBench's PyTorch module) writes it:
eager, a Python loop over the time steps and, per step, over the layers,
each layer's gates from cat((x, h, x, h)) * weight + bias; the jacobian
by one backward() of the scalar loss. ADBench's ``sum(exp(y), 2)`` (Python's
sum, starting at 2) and ``sum(ygold * ynorm)`` are written as tensor sums
(the same numbers, not one op per element). GradBench's JAX tool has no
LSTM; the JAX peer is the same function with the time loop a lax.scan
carrying the state and the running total, under jit, and jax.grad.

Inputs as GradBench's eval builds them (gen_lstm): the characters' bits
(7 per character) as the sequence, state and parameters uniform; numpy's
global generator seeded 31337, and a fixed pseudo-random lowercase text in
place of GradBench's evals/lstm/data/lstm_full.txt (only its bits enter).
(l, c) among GradBench's {2, 4, 6} x {1024, 4096, 8192}; the PyTorch loop
takes seconds per call at the larger ones."""

from . import f64, jax

NOTES = ["lstm: PyTorch as GradBench's tool writes it (eager Python loops over time and "
         "layers, one backward()), with tensor sums where ADBench's code calls Python's sum "
         "over elements; GradBench's JAX tool has no LSTM, the peer is the same function "
         "with the time loop a lax.scan under jit, and jax.grad. The text is a fixed "
         "pseudo-random lowercase one (7 bits per character), not GradBench's lstm_full.txt."]
SIZES = [(2, 1024), (4, 1024), (4, 4096)]
BITS = 7


def lstm_input(layers, chars):
    import numpy as np
    np.random.seed(31337)
    text = np.random.choice(list("abcdefghijklmnopqrstuvwxyz  .,"), chars)
    seq = [[int(b) for b in bin(ord(ch))[2:].zfill(BITS)] for ch in text]
    state = np.random.random((2 * layers, BITS))
    main = np.random.random((2 * layers, BITS * 4))
    extra = np.random.random((3, BITS))
    return {"main_params": main.tolist(), "extra_params": extra.tolist(),
            "state": state.tolist(), "sequence": np.asarray(seq, np.float64).tolist()}


def workloads(quick):
    out = []
    for l, c in SIZES[:1] if quick else SIZES:
        inp = lstm_input(l, c)
        out += [(fn, f"l={l},c={c}", inp, (l, c) == SIZES[0]) for fn in ("objective", "jacobian")]
    return out


def _arrays(inp):
    return tuple(f64(inp[k]) for k in ("main_params", "extra_params", "state", "sequence"))


def jax_peer(function, inp):
    import numpy as np
    jx, jnp = jax()
    main, extra, state, seq = (jnp.asarray(a) for a in _arrays(inp))
    layers, b = main.shape[0] // 2, seq.shape[1]

    def objective(main, extra):
        def step(carry, t):
            s, total = carry
            x, new = seq[t] * extra[0], []
            for i in range(layers):
                h, c = s[2 * i], s[2 * i + 1]
                gates = jnp.concatenate([x, h, x, h]) * main[2 * i] + main[2 * i + 1]
                forget, ingate, outgate = (jx.nn.sigmoid(gates[j * b:(j + 1) * b])
                                           for j in range(3))
                c = c * forget + ingate * jnp.tanh(gates[3 * b:])
                h = outgate * jnp.tanh(c)
                new += [h, c]
                x = h
            y = x * extra[1] + extra[2]
            ynorm = y - jnp.log(2 + jnp.sum(jnp.exp(y)))
            return (jnp.stack(new), total + jnp.sum(seq[t + 1] * ynorm)), None
        (_, total), _ = jx.lax.scan(step, (state, 0.0), jnp.arange(seq.shape[0] - 1))
        return -total / ((seq.shape[0] - 1) * b)
    if function == "objective":
        f = jx.jit(objective)
        return lambda: float(f(main, extra))
    g = jx.jit(jx.grad(objective, argnums=(0, 1)))

    def jacobian():
        gm, ge = g(main, extra)
        return np.concatenate([np.asarray(gm).ravel(), np.asarray(ge).ravel()])
    return jacobian


def torch_peer(function, inp):
    import torch
    main, extra, state, seq = (torch.tensor(a) for a in _arrays(inp))
    params = (main, extra)
    if function == "jacobian":
        for v in params:
            v.requires_grad_(True)
    layers, b = main.shape[0] // 2, seq.shape[1]

    def layer(weight, bias, hidden, cell, x):
        gates = torch.cat((x, hidden, x, hidden)) * weight + bias
        forget = torch.sigmoid(gates[0:b])
        ingate = torch.sigmoid(gates[b:2 * b])
        outgate = torch.sigmoid(gates[2 * b:3 * b])
        cell = cell * forget + ingate * torch.tanh(gates[3 * b:])
        return outgate * torch.tanh(cell), cell

    def objective(main, extra):
        total, s = 0.0, [state[r] for r in range(2 * layers)]
        for t in range(seq.shape[0] - 1):
            x = seq[t] * extra[0]
            for i in range(layers):
                s[2 * i], s[2 * i + 1] = layer(main[2 * i], main[2 * i + 1], s[2 * i],
                                               s[2 * i + 1], x)
                x = s[2 * i]
            y = x * extra[1] + extra[2]
            ynorm = y - torch.log(torch.sum(torch.exp(y)) + 2)
            total = total + torch.sum(seq[t + 1] * ynorm)
        return -total / ((seq.shape[0] - 1) * b)
    if function == "objective":
        return lambda: float(objective(*params))

    def jacobian():
        for v in params:
            v.grad = None
        objective(*params).backward()
        return torch.cat([v.grad.flatten() for v in params]).numpy()
    return jacobian

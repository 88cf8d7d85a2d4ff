"""ADBench's LSTM objective (microsoft/ADBench, src/cpp/shared/lstm.h) in rlx,
with an ``scf.for`` over the time steps, plus a numpy reference.

    main_params  (2l, 4b): per layer k, row 2k = the 4 gate weights, row 2k+1
                           the 4 gate biases (forget, in, out, change)
    extra_params (3, b):   input weights, output weights, output bias
    state        (2l, b):  row 2k = layer k's hidden state, 2k+1 its cell
    sequence     (c, b)

    loss = -(1 / ((c-1) b)) sum_t <sequence[t+1], ynorm_t>,
    ynorm_t = ypred_t - log(sum(exp(ypred_t)) + 2),
    ypred_t = lstm_predict(sequence[t]) (the state carried from step to step)

``lstm_ir(l, b, c, checkpoint=None, dtype="f64")`` returns the module text;
``checkpoint`` sets the time loop's ``grad.checkpoint`` ("sqrt", "revolve",
an int period).
"""

from __future__ import annotations

import numpy as np

__all__ = ["lstm_ir", "lstm_objective", "random_inputs"]


def lstm_ir(l: int, b: int, c: int, checkpoint=None, dtype: str = "f64") -> str:
    v = f"tensor<{b}x{dtype}>"
    s = f"tensor<{dtype}>"
    g4 = f"tensor<4x{b}x{dtype}>"
    mp = f"tensor<{2 * l}x{4 * b}x{dtype}>"
    ep = f"tensor<3x{b}x{dtype}>"
    st = f"tensor<{2 * l}x{b}x{dtype}>"
    sq = f"tensor<{c}x{b}x{dtype}>"
    out = [f"func.func @main(%main_params: {mp}, %extra_params: {ep}, %state: {st}, "
           f"%sequence: {sq}) -> {s} {{"]
    n = [0]

    def emit(text: str) -> str:
        n[0] += 1
        name = f"%v{n[0]}"
        out.append(f"  {name} = {text}")
        return name

    def const_index_tensor(k: int) -> str:
        return emit(f"arith.constant dense<{k}> : tensor<i64>")

    def take(src: str, k: str, src_t: str, res_t: str) -> str:
        return emit(f"\"rlx.take\"({src}, {k}) {{axis = array<i64: 0>}} : ({src_t}, tensor<i64>) "
                    f"-> {res_t}")

    # Loop-invariant parameters, sliced once before the loop.
    params = {}
    for k in range(l):
        for part, row in (("w", 2 * k), ("b", 2 * k + 1)):
            flat = take("%main_params", const_index_tensor(row), mp, f"tensor<{4 * b}x{dtype}>")
            rows = emit(f"\"rlx.reshape\"({flat}) : (tensor<{4 * b}x{dtype}>) -> {g4}")
            for gate in range(4):
                params[(k, part, gate)] = take(rows, const_index_tensor(gate), g4, v)
    extra = [take("%extra_params", const_index_tensor(i), ep, v) for i in range(3)]
    init = [take("%state", const_index_tensor(r), st, v) for r in range(2 * l)]
    zero = emit(f"\"rlx.zeros\"() : () -> {s}")
    out.append("  %c0 = arith.constant 0 : index")
    out.append("  %c1 = arith.constant 1 : index")
    out.append(f"  %cT = arith.constant {c - 1} : index")
    carried = ", ".join(f"%s{r} = {init[r]}" for r in range(2 * l))
    types = ", ".join([v] * (2 * l) + [s])
    out.append(f"  %loop:{2 * l + 1} = scf.for %t = %c0 to %cT step %c1 iter_args({carried}, "
               f"%total = {zero}) -> ({types}) {{")
    body_start = len(out)
    out.append("    %t64 = arith.index_cast %t : index to i64")
    out.append("    %t1 = arith.addi %t64, %one64 : i64")
    out.append("    %ti = tensor.from_elements %t64 : tensor<i64>")
    out.append("    %tg = tensor.from_elements %t1 : tensor<i64>")
    out.insert(body_start, "    %one64 = arith.constant 1 : i64")

    def bemit(text: str) -> str:
        n[0] += 1
        name = f"%v{n[0]}"
        out.append(f"    {name} = {text}")
        return name

    def binary(op, a, b_, t=v):
        return bemit(f"\"rlx.{op}\"({a}, {b_}) : ({t}, {t}) -> {t}")

    def unary(op, a, t=v):
        return bemit(f"\"rlx.{op}\"({a}) : ({t}) -> {t}")

    x = bemit(f"\"rlx.take\"(%sequence, %ti) {{axis = array<i64: 0>}} : ({sq}, tensor<i64>) -> {v}")
    ygold = bemit(f"\"rlx.take\"(%sequence, %tg) {{axis = array<i64: 0>}} : ({sq}, tensor<i64>) "
                  f"-> {v}")
    xp = binary("multiply", x, extra[0])
    new_state = []
    for k in range(l):
        hidden, cell = f"%s{2 * k}", f"%s{2 * k + 1}"
        p = lambda part, gate: params[(k, part, gate)]  # noqa: E731
        forget = unary("sigmoid", binary("add", binary("multiply", xp, p("w", 0)), p("b", 0)))
        ingate = unary("sigmoid", binary("add", binary("multiply", hidden, p("w", 1)), p("b", 1)))
        outgate = unary("sigmoid", binary("add", binary("multiply", xp, p("w", 2)), p("b", 2)))
        change = unary("tanh", binary("add", binary("multiply", hidden, p("w", 3)), p("b", 3)))
        cell2 = binary("add", binary("multiply", cell, forget), binary("multiply", ingate, change))
        hidden2 = binary("multiply", outgate, unary("tanh", cell2))
        new_state += [hidden2, cell2]
        xp = hidden2
    ypred = binary("add", binary("multiply", xp, extra[1]), extra[2])
    lse_sum = bemit(f"\"rlx.sum\"({unary('exp', ypred)}) : ({v}) -> {s}")
    two = bemit(f"arith.constant dense<2.0> : {s}")
    lse = unary("log", binary("add", lse_sum, two, s), s)
    ynorm = bemit(f"\"rlx.subtract\"({ypred}, {lse}) : ({v}, {s}) -> {v}")
    dot = bemit(f"\"rlx.sum\"({binary('multiply', ygold, ynorm)}) : ({v}) -> {s}")
    total = binary("add", "%total", dot, s)
    out.append(f"    scf.yield {', '.join(new_state + [total])} : {types}")
    attr = ""
    if checkpoint is not None:
        val = f"\"{checkpoint}\"" if isinstance(checkpoint, str) else f"{int(checkpoint)} : i64"
        attr = f" {{grad.checkpoint = {val}}}"
    out.append(f"  }}{attr}")
    scale = emit(f"arith.constant dense<{-1.0 / ((c - 1) * b)!r}> : {s}")
    loss = emit(f"\"rlx.multiply\"(%loop#{2 * l}, {scale}) : ({s}, {s}) -> {s}")
    out.append(f"  return {loss} : {s}")
    out.append("}")
    return "\n".join(out) + "\n"


def random_inputs(l: int, b: int, c: int, seed: int = 0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, size=shape).astype(dtype)
            for shape in ((2 * l, 4 * b), (3, b), (2 * l, b), (c, b))]


def lstm_objective(main_params, extra_params, state, sequence):
    """numpy transcription of ADBench's lstm_objective (state not updated in place)."""
    l = main_params.shape[0] // 2
    b = extra_params.shape[1]
    c = sequence.shape[0]
    s = state.copy()
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    total = 0.0
    for t in range(c - 1):
        xp = sequence[t] * extra_params[0]
        for k in range(l):
            w = main_params[2 * k].reshape(4, b)
            bb = main_params[2 * k + 1].reshape(4, b)
            h, cell = s[2 * k], s[2 * k + 1]
            forget = sig(xp * w[0] + bb[0])
            ingate = sig(h * w[1] + bb[1])
            outgate = sig(xp * w[2] + bb[2])
            change = np.tanh(h * w[3] + bb[3])
            cell = cell * forget + ingate * change
            h = outgate * np.tanh(cell)
            s[2 * k], s[2 * k + 1] = h, cell
            xp = h
        ypred = xp * extra_params[1] + extra_params[2]
        ynorm = ypred - np.log(np.exp(ypred).sum() + 2)
        total += (sequence[t + 1] * ynorm).sum()
    return -total / ((c - 1) * b)

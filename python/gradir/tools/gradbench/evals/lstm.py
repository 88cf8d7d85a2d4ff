"""GradBench's ``lstm`` eval (ADBench's LSTM, diagonal weights): the average
log-loss of predicting each character of a sequence from the previous ones
(``objective``) and its gradient with respect to ``main_params`` and
``extra_params``, flattened row-major and concatenated (``jacobian``).

Per time step t < c - 1, with x = sequence[t] * in_weight, through each
layer i (weights w, biases v: rows 2i and 2i + 1 of main_params, in four
b-long blocks forget, ingate, outgate, change; state rows 2i (hidden) and
2i + 1 (cell)):

    forget = sigmoid(x w_f + v_f)     ingate = sigmoid(h w_i + v_i)
    outgate = sigmoid(x w_o + v_o)    change = tanh(h w_c + v_c)
    c' = c forget + ingate change     h' = outgate tanh(c');  x = h'

then y = x out_weight + out_bias, and the loss adds
sequence[t + 1] . (y - log(2 + sum(exp(y)))) (ADBench's quirk: the ``2 +``);
the objective is -total / ((c - 1) b).

The time loop is an ``scf.for`` over the c - 1 steps carrying each layer's
hidden and cell vectors and the running total (its size does not grow with
the sequence); the layers are unrolled in its body. The weight slices are
taken once, before the loop. ``rlx-gradient`` differentiates through the
loop (its adjoint stores the carried state of every step).
"""

import numpy as np

from ..build import Program, axes, function

FUNCTIONS = ("objective", "jacobian")


def program(l, c, b):
    p = Program()
    main, extra = p.arg((2 * l, 4 * b)), p.arg((3, b))
    state, seq = p.arg((2 * l, b)), p.arg((c, b))
    vec = (b,)

    def row(m, i, cols, start=0):
        r = p.op("rlx.strided_slice", [m], (1, cols),
                 f"axes = {axes(0, 1)}, begin = {axes(i, start)}, end = {axes(i + 1, start + cols)}")
        return p.op("rlx.reshape", [r], (cols,))

    w = [[row(main, 2 * i + j, b, g * b) for g in range(4)] for i in range(l) for j in range(2)]
    in_w, out_w, out_b = (row(extra, i, b) for i in range(3))
    init = [row(state, r, b) for r in range(2 * l)]           # h_0, c_0, h_1, c_1, ...
    total0 = p.const(0.0)
    for name, v in (("c0", 0), ("c1", 1), ("cn", c - 1)):
        p.raw(f"%{name} = arith.constant {v} : index")

    body = p.block()
    carried = [body.value(f"%s{r}", vec) for r in range(2 * l)]
    acc = body.value("%acc", ())
    body.raw("%t64 = arith.index_cast %t : index to i64")
    body.raw("%t1 = arith.addi %t64, %one64 : i64")
    body.raw("%it = tensor.from_elements %t64 : tensor<i64>")
    body.raw("%it1 = tensor.from_elements %t1 : tensor<i64>")
    it, it1 = body.value("%it", (), "i64"), body.value("%it1", (), "i64")
    xin = body.op("rlx.take", [seq, it], vec, f"axis = {axes(0)}")
    gold = body.op("rlx.take", [seq, it1], vec, f"axis = {axes(0)}")

    def affine(a, wt, bias):
        return body.op("rlx.add", [body.op("rlx.multiply", [a, wt], vec), bias], vec)

    x = body.op("rlx.multiply", [xin, in_w], vec)
    new = []
    for i in range(l):
        (wf, wi, wo, wc), (bf, bi, bo, bc) = w[2 * i], w[2 * i + 1]
        h, cell = carried[2 * i], carried[2 * i + 1]
        forget = body.op("rlx.sigmoid", [affine(x, wf, bf)], vec)
        ingate = body.op("rlx.sigmoid", [affine(h, wi, bi)], vec)
        outgate = body.op("rlx.sigmoid", [affine(x, wo, bo)], vec)
        change = body.op("rlx.tanh", [affine(h, wc, bc)], vec)
        cell = body.op("rlx.add", [body.op("rlx.multiply", [cell, forget], vec),
                                   body.op("rlx.multiply", [ingate, change], vec)], vec)
        h = body.op("rlx.multiply", [outgate, body.op("rlx.tanh", [cell], vec)], vec)
        new += [h, cell]
        x = h
    y = affine(x, out_w, out_b)
    sexp = body.op("rlx.sum", [body.op("rlx.exp", [y], vec)], ())
    lse = body.op("rlx.log", [body.op("rlx.add", [sexp, body.const(2.0)], ())], ())
    ynorm = body.op("rlx.subtract", [y, lse], vec)
    step = body.op("rlx.sum", [body.op("rlx.multiply", [gold, ynorm], vec)], ())
    new.append(body.op("rlx.add", [acc, step], ()))

    vt = f"tensor<{b}xf64>"
    types = ", ".join([vt] * (2 * l) + ["tensor<f64>"])
    inits = ", ".join([f"%s{r} = {v.name}" for r, v in enumerate(init)]
                      + [f"%acc = {total0.name}"])
    res = p.fresh()
    p.raw("%one64 = arith.constant 1 : i64")
    p.raw(f"{res}:{2 * l + 1} = scf.for %t = %c0 to %cn step %c1 iter_args({inits}) "
          f"-> ({types}) {{")
    p.lines += ["  " + line for line in body.lines]
    p.raw(f"  scf.yield {', '.join(v.name for v in new)} : {types}")
    p.raw("}")
    total = p.value(f"{res}#{2 * l}", ())
    scale = p.const(-1.0 / ((c - 1) * b))
    return p.text([p.op("rlx.multiply", [total, scale], ())])


def prepare(name, input):
    f64 = np.float64
    main = np.asarray(input["main_params"], f64)
    extra = np.asarray(input["extra_params"], f64)
    state = np.asarray(input["state"], f64)
    seq = np.asarray(input["sequence"], f64)
    l, b, c = main.shape[0] // 2, seq.shape[1], seq.shape[0]
    args = (main, extra, state, seq)
    text = program(l, c, b)
    if name == "objective":
        fn = function(text)
        return lambda: fn(*args)
    fn = function(text, "builtin.module(rlx-gradient{wrt=0,1})", "main_adjoint")

    def jacobian():
        _, gmain, gextra = fn(*args)
        return np.concatenate([gmain.ravel(), gextra.ravel()])
    return jacobian

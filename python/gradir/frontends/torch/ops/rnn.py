"""Recurrent layers: the cells (gru_cell, lstm_cell, rnn_tanh_cell,
rnn_relu_cell: one step each; a model that unrolls them over time in Python
reaches the importer flattened) and the whole-sequence layers nn.GRU,
nn.LSTM and nn.RNN (aten.gru/lstm/rnn_tanh/rnn_relu.input: unrolled here over
the static sequence length, any number of layers, bidirectional,
batch_first; the input projection of each layer is one matmul over the
whole sequence)."""

from __future__ import annotations

from gradir.dialects import rlx

from .registry import aten
from ._helpers import concat_many, float_operands, split_sizes

__all__: list[str] = []


def _dense(cx, x, w, b):
    y = rlx.matmul(x, rlx.permute_dims(w))
    return y if b is None else rlx.add(y, cx.value(b, cx.dtype(y)))


def _gates(cx, x, n):
    size = cx.shape(x)[-1] // n
    return split_sizes(x, [size] * n, cx.rank(x) - 1)


# One step of each cell, given the input projection ``gi`` = x W_ih^T + b_ih.

def _gru_step(cx, gi, h, w_hh, b_hh):
    i_r, i_z, i_n = _gates(cx, gi, 3)
    h_r, h_z, h_n = _gates(cx, _dense(cx, h, w_hh, b_hh), 3)
    r = rlx.sigmoid(rlx.add(i_r, h_r))
    z = rlx.sigmoid(rlx.add(i_z, h_z))
    n = rlx.tanh(rlx.add(i_n, rlx.multiply(r, h_n)))
    # (1 - z) * n + z * h = n + z * (h - n)
    return rlx.add(n, rlx.multiply(z, rlx.subtract(h, n)))


def _lstm_step(cx, gi, h, c, w_hh, b_hh):
    i, f, g, o = _gates(cx, rlx.add(gi, _dense(cx, h, w_hh, b_hh)), 4)
    c2 = rlx.add(rlx.multiply(rlx.sigmoid(f), c), rlx.multiply(rlx.sigmoid(i), rlx.tanh(g)))
    return rlx.multiply(rlx.sigmoid(o), rlx.tanh(c2)), c2


def _rnn_step(cx, gi, h, w_hh, b_hh, relu):
    pre = rlx.add(gi, _dense(cx, h, w_hh, b_hh))
    return rlx.relu(pre) if relu else rlx.tanh(pre)


@aten("aten.gru_cell.default")
def gru_cell(cx, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    x, h, w_ih, w_hh = float_operands(cx, x, hx, w_ih, w_hh)
    return _gru_step(cx, _dense(cx, x, w_ih, b_ih), h, w_hh, b_hh)


@aten("aten.lstm_cell.default")
def lstm_cell(cx, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    x, h, c, w_ih, w_hh = float_operands(cx, x, h, c, w_ih, w_hh)
    return list(_lstm_step(cx, _dense(cx, x, w_ih, b_ih), h, c, w_hh, b_hh))


@aten("aten.rnn_tanh_cell.default", "aten.rnn_relu_cell.default")
def rnn_cell(cx, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    x, h, w_ih, w_hh = float_operands(cx, x, hx, w_ih, w_hh)
    return _rnn_step(cx, _dense(cx, x, w_ih, b_ih), h, w_hh, b_hh,
                     cx.op == "aten.rnn_relu_cell.default")


@aten("aten.lstm.input", "aten.gru.input", "aten.rnn_tanh.input", "aten.rnn_relu.input")
def recurrent(cx, x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
    kind = cx.op.split(".")[1]
    if dropout and train and num_layers > 1:
        raise cx.error(f"dropout={dropout} between recurrent layers in training mode is "
                       "random: import the model in eval mode or with dropout 0")
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != num_layers * dirs * per:
        raise cx.error("recurrent layers with projections (proj_size > 0) have no rlx mapping")
    (seq,) = float_operands(cx, x)
    dtype = cx.dtype(seq)
    unbatched = cx.rank(seq) == 2
    if unbatched:
        seq = rlx.expand_dims(seq, [1])
    elif batch_first:
        seq = rlx.permute_dims(seq, [1, 0, 2])                 # (T, B, I)
    steps = cx.shape(seq)[0]
    states = [hx[0], hx[1]] if kind == "lstm" else [hx]
    states = [cx.value(s, dtype) for s in states]
    if unbatched:
        states = [rlx.expand_dims(s, [1]) for s in states]
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = (layer * dirs + d) * per
            w_ih, w_hh = cx.value(params[k], dtype), cx.value(params[k + 1], dtype)
            b_ih, b_hh = (params[k + 2], params[k + 3]) if has_biases else (None, None)
            gi = _dense(cx, seq, w_ih, b_ih)                          # (T, B, G)
            gis = [rlx.squeeze(g, [0]) for g in split_sizes(gi, [1] * steps, 0)]
            idx = layer * dirs + d
            h = rlx.squeeze(rlx.strided_slice(states[0], [0], [idx], [idx + 1]), [0])
            c = (rlx.squeeze(rlx.strided_slice(states[1], [0], [idx], [idx + 1]), [0])
                 if kind == "lstm" else None)
            hs = []
            for t in (range(steps) if d == 0 else range(steps - 1, -1, -1)):
                if kind == "lstm":
                    h, c = _lstm_step(cx, gis[t], h, c, w_hh, b_hh)
                elif kind == "gru":
                    h = _gru_step(cx, gis[t], h, w_hh, b_hh)
                else:
                    h = _rnn_step(cx, gis[t], h, w_hh, b_hh, kind == "rnn_relu")
                hs.append(h)
            if d == 1:
                hs.reverse()
            outs.append(hs)
            h_n.append(h)
            c_n.append(c)
        steps_out = [concat_many([o[t] for o in outs], 1) for t in range(steps)]
        seq = concat_many([rlx.expand_dims(o, [0]) for o in steps_out], 0)   # (T, B, D*H)
    if unbatched:
        seq = rlx.squeeze(seq, [1])
    elif batch_first:
        seq = rlx.permute_dims(seq, [1, 0, 2])
    finals = [h_n] + ([c_n] if kind == "lstm" else [])
    finals = [concat_many([rlx.expand_dims(v, [0]) for v in f], 0) for f in finals]
    if unbatched:
        finals = [rlx.squeeze(f, [1]) for f in finals]
    return [seq] + finals

"""Recurrent cells: gru_cell, lstm_cell, rnn_tanh_cell, rnn_relu_cell (one
step each; a model unrolls them over time in Python, which torch.export
flattens into the graph)."""

from __future__ import annotations

from gradir.dialects import rlx

from . import aten
from ._helpers import float_operands, split_sizes

__all__: list[str] = []


def _dense(cx, x, w, b):
    y = rlx.matmul(x, rlx.permute_dims(w))
    return y if b is None else rlx.add(y, cx.value(b, cx.dtype(y)))


def _gates(cx, x, n):
    size = cx.shape(x)[-1] // n
    return split_sizes(x, [size] * n, cx.rank(x) - 1)


@aten("aten.gru_cell.default")
def gru_cell(cx, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    x, h, w_ih, w_hh = float_operands(cx, x, hx, w_ih, w_hh)
    i_r, i_z, i_n = _gates(cx, _dense(cx, x, w_ih, b_ih), 3)
    h_r, h_z, h_n = _gates(cx, _dense(cx, h, w_hh, b_hh), 3)
    r = rlx.sigmoid(rlx.add(i_r, h_r))
    z = rlx.sigmoid(rlx.add(i_z, h_z))
    n = rlx.tanh(rlx.add(i_n, rlx.multiply(r, h_n)))
    # (1 - z) * n + z * h = n + z * (h - n)
    return rlx.add(n, rlx.multiply(z, rlx.subtract(h, n)))


@aten("aten.lstm_cell.default")
def lstm_cell(cx, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    x, h, c, w_ih, w_hh = float_operands(cx, x, h, c, w_ih, w_hh)
    gates = rlx.add(_dense(cx, x, w_ih, b_ih), _dense(cx, h, w_hh, b_hh))
    i, f, g, o = _gates(cx, gates, 4)
    c2 = rlx.add(rlx.multiply(rlx.sigmoid(f), c), rlx.multiply(rlx.sigmoid(i), rlx.tanh(g)))
    h2 = rlx.multiply(rlx.sigmoid(o), rlx.tanh(c2))
    return [h2, c2]


@aten("aten.rnn_tanh_cell.default", "aten.rnn_relu_cell.default")
def rnn_cell(cx, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    x, h, w_ih, w_hh = float_operands(cx, x, hx, w_ih, w_hh)
    pre = rlx.add(_dense(cx, x, w_ih, b_ih), _dense(cx, h, w_hh, b_hh))
    return rlx.tanh(pre) if cx.op == "aten.rnn_tanh_cell.default" else rlx.relu(pre)

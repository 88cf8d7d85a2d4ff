"""scaled_dot_product_attention: matmul, scale, mask (causal: a constant
lower-triangular mask and where; boolean masks: where; float masks: add),
softmax, matmul.  Multi-head attention reaches the importer already split
into linear/view/transpose ops by torch.export."""

from __future__ import annotations

import math

import numpy as np

from gradir.dialects import rlx

from .registry import aten
from ._helpers import float_operands, reshape_to

__all__: list[str] = []


def _repeat_heads(cx, kv, groups):
    # (..., Hkv, S, E) -> (..., Hkv * groups, S, E), each head repeated in place
    shape = cx.shape(kv)
    lead, hkv, rest = shape[:-3], shape[-3], shape[-2:]
    wide = rlx.broadcast_to(rlx.expand_dims(kv, [len(shape) - 2]),
                            lead + [hkv, groups] + rest)
    return reshape_to(wide, lead + [hkv * groups] + rest)


@aten("aten.scaled_dot_product_attention.default")
def sdpa(cx, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
         enable_gqa=False):
    if dropout_p:
        raise cx.error(f"attention dropout (dropout_p={dropout_p}) is random: import the "
                       "model in eval mode or with dropout 0")
    q, k, v = float_operands(cx, q, k, v)
    dtype = cx.dtype(q)
    if enable_gqa and cx.shape(k)[-3] != cx.shape(q)[-3]:
        groups = cx.shape(q)[-3] // cx.shape(k)[-3]
        k, v = _repeat_heads(cx, k, groups), _repeat_heads(cx, v, groups)
    rank = cx.rank(q)
    kt = rlx.permute_dims(k, list(range(rank - 2)) + [rank - 1, rank - 2])
    if scale is None:
        scale = 1.0 / math.sqrt(cx.shape(q)[-1])
    s = rlx.multiply(rlx.matmul(q, kt), cx.scalar(scale, dtype))
    L, S = cx.shape(q)[-2], cx.shape(k)[-2]
    neg_inf = cx.scalar(float("-inf"), dtype)
    if is_causal:
        s = rlx.where(cx.const(np.tril(np.ones((L, S), dtype=bool))), s, neg_inf)
    if attn_mask is not None:
        if str(cx.dtype(attn_mask)) == "torch.bool":
            s = rlx.where(cx.value(attn_mask), s, neg_inf)
        else:
            s = rlx.add(s, cx.value(attn_mask, dtype))
    return rlx.matmul(rlx.softmax(s, [-1]), v)

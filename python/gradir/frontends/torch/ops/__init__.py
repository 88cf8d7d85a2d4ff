"""aten -> rlx mappings: one function per aten op, in a table keyed by the
op's name with its overload (``"aten.linear.default"``).

A mapping receives the ``Emitter`` (``cx``) and the op's arguments in schema
order with defaults filled in (tensors are ``ir.Value``s or constant
``torch.Tensor``s) and returns an ``ir.Value``, a constant tensor or a list
of those (multi-result ops).  It builds rlx ops with the
``gradir.dialects.rlx`` builders (insertion point and location are set) and
refuses with ``raise cx.error("...")``.

    @aten("aten.relu.default")
    def relu(cx, x):
        return rlx.relu(cx.value(x))

Mappings live in modules by op group (elementwise, shape, reduce, nn, loss,
attention, rnn, resize, einsum, pad); importing this package registers them
all.
"""

from __future__ import annotations

from .registry import OPS, aten

__all__ = ["OPS", "aten"]

from . import elementwise, shape, reduce, nn, loss, attention, rnn, resize, einsum, pad  # noqa: E402,F401,E501

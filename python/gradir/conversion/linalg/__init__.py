"""rlx/grad -> linalg lowering patterns, one module per op group.

``LOWERINGS`` maps every rlx/grad op name (except ``rlx.tuple`` and
``rlx.tuple_get_item``, which ``tuples.flatten_tuples`` removes) to its
lowering; ``patterns()`` gives them as ``(op name, fn(op, rewriter))``.
"""

from __future__ import annotations

# (imported to register their lowerings)
from . import (conv, elementwise, losses, matmul, normalization, pool_indices,  # noqa: F401
               pooling, reduce, shape)
from .registry import LOWERINGS, pattern_for
from .tuples import ORIGINAL_TYPE_ATTR, flatten_tuples, flatten_type

__all__ = ["LOWERINGS", "patterns", "flatten_tuples", "flatten_type", "ORIGINAL_TYPE_ATTR",
           "TUPLE_OPS"]

TUPLE_OPS = ("rlx.tuple", "rlx.tuple_get_item")


def patterns():
    """``(root op name, pattern)`` for every lowering, in a fixed order."""
    return [(name, pattern_for(name)) for name in sorted(LOWERINGS)]

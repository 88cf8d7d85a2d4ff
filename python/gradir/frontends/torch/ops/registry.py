"""The aten mapping table (``OPS``) and its ``@aten`` decorator; the op-group
modules register into it and the package imports them all."""

from __future__ import annotations

from typing import Callable

__all__ = ["OPS", "aten"]

OPS: dict[str, Callable] = {}


def aten(*names: str):
    """Registers the decorated function as the mapping of ``names``."""
    def register(fn):
        for name in names:
            if name in OPS:
                raise ValueError(f"two mappings for {name}")
            OPS[name] = fn
        return fn
    return register

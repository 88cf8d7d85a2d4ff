"""The aten op table the mapping modules fill (``@aten("aten.add.Tensor")``)."""

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

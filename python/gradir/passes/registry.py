"""How ``passes/`` finds gradir's passes by name.

The table itself (name -> lazy factory of the pass class) is
``gradir.registry``: it names every pass module, so it lives above
``transforms/`` and ``conversion/``, which import ``passes/``.  This module
looks it up by module name when a pass is first asked for, as a plugin's
entry point is found, so that ``passes/`` imports no pass and no pass
package imports ``passes/`` in a cycle.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

__all__ = ["PASSES", "get_pass_class", "pass_names"]

REGISTRY_MODULE = "gradir.registry"


def _table() -> dict:
    return importlib.import_module(REGISTRY_MODULE).PASSES


class _Passes(Mapping):
    """A read-only view of the registry's table (name -> factory)."""

    def __getitem__(self, name):
        return _table()[name]

    def __iter__(self):
        return iter(_table())

    def __len__(self):
        return len(_table())

    def __contains__(self, name):
        return name in _table()


PASSES = _Passes()


def pass_names() -> list[str]:
    return sorted(_table())


def get_pass_class(name: str):
    """The pass class registered as ``name`` (KeyError if none)."""
    return _table()[name]()

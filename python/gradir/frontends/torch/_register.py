"""Registers ``backend="gradir"`` with TorchDynamo without importing PyTorch.

``install()`` runs when ``gradir.frontends.torch`` is imported (not by
``import gradir``: the backend imports the ``gradir`` facade, which must not
import it back).  Where TorchDynamo's backend registry
(``torch._dynamo.backends.registry``) is already loaded, the backend is
registered at once; otherwise a ``sys.meta_path`` finder registers it right
after the registry module is loaded (by ``torch.compile``, or by anything that
imports ``torch._dynamo``), so importing gradir's PyTorch front end costs no PyTorch import.
The registered function imports ``backend.py`` (and gradir's compiler) on the
first graph.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

from ..torch_dynamo import gradir

__all__ = ["install", "NAME"]

NAME = "gradir"
_REGISTRY = "torch._dynamo.backends.registry"


def _register(registry) -> None:
    if NAME not in registry._COMPILER_FNS:
        registry.register_backend(compiler_fn=gradir, name=NAME)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the registry module as Python would, and registers the backend
    once it has been executed."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _REGISTRY:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _register(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)

        spec.loader.exec_module = exec_and_register
        return spec


def install() -> None:
    registry = sys.modules.get(_REGISTRY)
    if registry is not None and hasattr(registry, "register_backend"):
        _register(registry)
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())

"""Importers into rlx from other frameworks.

    from gradir.frontends.torch import import_module
    module = import_module(model, (x, labels))     # torch.export -> rlx @main

Each importer lives in its own subpackage and imports its framework only when
called, so ``import gradir`` never pulls in PyTorch.
"""

__all__ = ["torch"]

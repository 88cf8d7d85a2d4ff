"""The ``torch_dynamo_backends`` entry point of ``backend="gradir"``
(pyproject.toml), so that ``torch.compile(model, backend="gradir")`` works
with no import of gradir at all.

It lives outside ``gradir.frontends.torch`` on purpose: importing that package
registers the backend itself (``_register.install``), and TorchDynamo
registers what an entry point loads under the same name, which must happen
once.  The backend imports ``gradir.frontends.torch`` on its first graph,
when the name is already taken, so nothing is registered twice.
"""

from __future__ import annotations

__all__ = ["gradir"]


def gradir(gm, example_inputs, options=None, mode=None):
    """TorchDynamo backend ``"gradir"``: see ``gradir.frontends.torch.backend``."""
    from .torch.backend import gradir_backend
    return gradir_backend(gm, example_inputs, options=options, mode=mode)

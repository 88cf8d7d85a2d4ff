"""The PyTorch front door: ``torch.nn.Module`` -> rlx through ``torch.export``.

    import gradir
    from gradir.frontends.torch import import_module

    module = import_module(model, (x, labels))        # builtin.module with @main
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
    exe = gradir.compile(module)

``@main`` takes the forward inputs in signature order (integer inputs such as
token ids and class labels stay integer tensors), then every parameter in
``model.named_parameters()`` order; it returns the model's outputs flattened
in order (pytree order, as ``torch.export`` flattens them).  Each argument
carries its name: a ``gradir.name`` argument attribute and a name location.
Buffers (BatchNorm statistics, masks) and tensors the forward creates become
constants.  BatchNorm in training mode normalizes with the batch statistics;
the running-statistics update of a training step is not imported (it is not
an output of ``@main``).  The element types follow the model (f32 or f64).

The mapping from aten ops to rlx lives in ``ops/`` (one module per op group,
one function per aten op in ``ops.OPS``).  An aten op without a mapping, or a
mapped op used in a way rlx cannot express (dropout in training mode, integer
arithmetic on run-time tensors, ...), raises ``UnsupportedOpError`` naming the
op and the model's source line.  PyTorch is imported only when
``import_module`` is called.

Training: ``compile(model, example_args)`` returns an ``nn.Module`` sharing
the model's parameters whose forward and ``backward()`` run gradir's
``@main_fwd``/``@main_bwd`` (``training.py``); importing this package
registers ``torch.compile(model, backend="gradir")`` (``_register.py``,
``backend.py``).
"""

from __future__ import annotations

from ._register import install as _install_backend
from .errors import TorchImportError, UnsupportedOpError

_install_backend()        # torch.compile(model, backend="gradir"), without importing torch

__all__ = ["import_module", "compile", "supported_ops", "TorchImportError", "UnsupportedOpError"]


def import_module(model, example_args, example_kwargs=None, *, func_name: str = "main",
                  context=None, buffers: bool = False, input_mutations: bool = False):
    """Exports ``model`` with ``torch.export`` on ``example_args`` (a tuple of
    tensors, or one tensor) and returns an ``mlir.ir.Module`` holding
    ``@main(inputs..., parameters...)``.  ``context``: an MLIR context with
    gradir's dialects (default: a new one).  ``buffers=True``: the buffers
    are arguments after the parameters and the mutated ones' new values
    results after the outputs; ``input_mutations=True``: the new values of
    the inputs mutated in place too (see ``importer.import_program``).
    Raises ``UnsupportedOpError``."""
    from .importer import import_module as _import
    return _import(model, example_args, example_kwargs, func_name=func_name, context=context,
                   buffers=buffers, input_mutations=input_mutations)


def compile(model, example_args, **options):  # noqa: A001 (gradir.compile's name)
    """Returns an ``nn.Module`` sharing ``model``'s ``Parameter`` objects whose
    forward runs gradir's compiled ``@main_fwd`` and whose ``backward()``
    runs ``@main_bwd`` (``rlx-gradient{split=true}``), filling ``.grad``.  One
    compiled variant per input shapes/dtypes and training mode.  Options:
    ``remat``/``budget`` go to ``rlx-gradient``; ``fuse_attention`` (True by
    default, False, or a number of bytes) runs ``rlx-fuse-attention`` before
    it (long sequences' attention per block of query rows); the others to
    ``gradir.compile`` (``threads``, ``opt_level``, ``cache``, ...;
    ``target="cuda"``, ``chip``: a CUDA executable per variant, taking CPU
    or CUDA tensors)."""
    from .training import compile as _compile
    return _compile(model, example_args, **options)


def supported_ops() -> list[str]:
    """The aten ops (``"aten.linear.default"``) that have a mapping."""
    from .ops import OPS
    return sorted(OPS)

"""``torch.compile(model, backend="gradir")``: TorchDynamo's graphs run on gradir.

Dynamo hands the backend an FX ``GraphModule`` whose inputs are the graph's
tensors (parameters lifted to inputs, as Dynamo inlines ``nn`` modules) and,
where it made a size dynamic, ``SymInt``s.  ``gradir_backend`` wraps the graph
as a module (``_Graph``: the integers bound, one per set of values) and runs
it through ``training.Program``: the graph is imported with ``torch.export``,
``rlx-gradient{split=true}`` differentiates it w.r.t. every input that
requires grad, and a ``torch.autograd.Function`` runs ``@main_fwd`` and, in
``backward()``, ``@main_bwd``.  AOTAutograd is not involved: the gradients are
gradir's.  Dynamo lifts the model's buffers to graph inputs too, and a
training-mode BatchNorm mutates them in place (``num_batches_tracked.add_``,
``F.batch_norm``'s running statistics): the graph is imported with
``input_mutations=True``, so ``@main`` returns their new values after the
outputs, and ``Program`` copies them into the buffers after each call.  A graph gradir cannot take (an op without an rlx mapping, a
gradient it refuses) runs in eager PyTorch instead, after one
``GradirFallbackWarning`` naming the op and the model's source line.
"""

from __future__ import annotations

import os
import warnings

import torch

from .errors import UnsupportedOpError
from .importer import _FRAME
from .training import Program

__all__ = ["gradir_backend", "GradirFallbackWarning"]

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


class GradirFallbackWarning(UserWarning):
    """A ``torch.compile(backend="gradir")`` graph runs in eager PyTorch."""


class _Graph(torch.nn.Module):
    """``gm`` as a module of its tensor inputs, its integer inputs bound."""

    def __init__(self, gm, ints: dict):
        super().__init__()
        self.gm = gm
        self.ints = ints          # position -> value
        self.n = len(ints)

    def forward(self, *tensors):
        args, it = [], iter(tensors)
        for i in range(len(tensors) + self.n):
            args.append(self.ints[i] if i in self.ints else next(it))
        return self.gm(*args)


def _source(gm, err) -> str:
    """Where the op that ``err`` names is in the model: the graph node's own
    stack trace (torch.export records only the line of Dynamo's generated
    code, ``name = torch.cumprod(...)``)."""
    node = None
    if err.code:
        name = err.code.split("=", 1)[0].strip()
        node = next((n for n in gm.graph.nodes if n.name == name), None)
    if node is not None:
        frames = [m.groupdict() for m in _FRAME.finditer(node.meta.get("stack_trace") or "")]
        outside = [f for f in frames if not os.path.abspath(f["file"]).startswith(_TORCH_DIR)]
        if outside or frames:
            f = (outside or frames)[-1]
            return f"{f['file']}:{f['line']} in {f['fn']}: {f['code'].strip()}"
    if err.source:
        return f"{err.source}: {err.code}" if err.code else err.source
    return "unknown source line"


class _Backend:
    """The compiled callable of one Dynamo graph."""

    def __init__(self, gm, options):
        self.gm = gm
        self.options = options
        self.programs: dict = {}
        self.eager = False

    def _fallback(self, err):
        self.eager = True
        if isinstance(err, UnsupportedOpError):
            what = f"{err.op}: {err.reason}\n  at {_source(self.gm, err)}"
        else:
            what = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        warnings.warn(f"gradir cannot compile this graph, it runs in eager PyTorch: {what}",
                      GradirFallbackWarning, stacklevel=2)

    def _program(self, args):
        ints = {i: a for i, a in enumerate(args) if not isinstance(a, torch.Tensor)}
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        key = tuple(sorted(ints.items()))
        program = self.programs.get(key)
        if program is None:
            program = self.programs[key] = Program(_Graph(self.gm, ints), self.options)
        return program, tensors

    def prepare(self, args):
        """Compiles the variant for ``args`` now (so that a graph gradir
        cannot take warns when Dynamo compiles it)."""
        program, tensors = self._program(args)
        params = program.params()
        grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors + params)
        try:
            program.variant(tensors, params, grad)
        except Exception as err:   # noqa: BLE001 (any refusal: the graph runs eagerly)
            if not getattr(err, "_gradir_build", False):
                raise
            self._fallback(err)

    def __call__(self, *args):
        if self.eager:
            return self.gm(*args)
        program, tensors = self._program(args)
        try:
            return program(*tensors)
        except Exception as err:   # noqa: BLE001
            if not getattr(err, "_gradir_build", False):
                raise
            self._fallback(err)
            return self.gm(*args)


def gradir_backend(gm, example_inputs, options=None, mode=None):
    """A TorchDynamo backend: returns the callable that runs ``gm`` with
    gradir, one compiled variant per set of input shapes (the example
    inputs' now, unless Dynamo made a size dynamic).
    ``torch.compile(..., options={...})`` go to ``gradir.compile`` and
    ``rlx-gradient`` as for ``gradir.frontends.torch.compile``; ``mode``
    (an Inductor setting) is ignored."""
    backend = _Backend(gm, dict(options or {}))
    if not any(isinstance(a, torch.SymInt) for a in example_inputs):
        backend.prepare(list(example_inputs))
    return backend

"""Training PyTorch models with gradir's compiled forward and backward.

``compile(model, example_args, **options)`` returns a ``GradirModule``: an
``nn.Module`` holding ``model`` (as ``.module``, so its parameters are the
model's own ``Parameter`` objects) whose forward runs gradir's code.  Per
variant (input shapes and dtypes, ``model.training``, which inputs and
parameters require grad) the model is imported once (``import_program``),
``rlx-gradient{mode=vjp split=true}`` adds ``@main_fwd`` (the results and the
saved values) and ``@main_bwd`` (saved values + one cotangent per result ->
one gradient per differentiated value), and ``gradir.compile`` compiles
``@main``, ``@main_fwd`` and ``@main_bwd``.  A call runs ``@main_fwd`` inside
a ``torch.autograd.Function`` whose backward runs ``@main_bwd``: autograd then
accumulates the gradients into ``.grad`` (so ``torch.optim``, gradient
clipping and DistributedDataParallel's hooks work unchanged).  Under
``torch.no_grad()``, or when nothing requires grad, the call runs ``@main``
only and saves nothing.  The model's buffers are arguments too
(``import_program(..., buffers=True)``), read at each call; the new values
of those the forward mutates (BatchNorm's running statistics in training
mode) come back after the outputs and are copied into the buffers, as
PyTorch updates them.

``Program`` is the same machinery for any module whose inputs are all
tensors; the ``torch.compile`` backend (``backend.py``) builds one per graph.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils._pytree import tree_unflatten

__all__ = ["compile", "GradirModule", "Program", "GRADIENT_OPTIONS"]

# options of rlx-gradient; the others go to gradir.compile
GRADIENT_OPTIONS = ("remat", "budget")
_FLOATS = ("float16", "float32", "float64")


def _split_options(options: dict) -> tuple[dict, dict]:
    grad = {k: v for k, v in options.items() if k in GRADIENT_OPTIONS}
    comp = {k: v for k, v in options.items() if k not in GRADIENT_OPTIONS}
    return grad, comp


def _is_float(t) -> bool:
    return str(t.dtype).removeprefix("torch.") in _FLOATS


class _Variant:
    """One compiled program: ``@main`` and, when some value is
    differentiated, ``@main_fwd``/``@main_bwd``.  ``wrt``: the positions (in
    inputs + parameters) that get gradients; ``out_spec``: the pytree of the
    model's outputs; ``buffers``: the names of the buffers ``@main`` takes
    after the parameters, ``mutated``: those whose new values it returns
    after the outputs (empty unless imported with ``buffers=True``)."""

    def __init__(self, exe, wrt, out_spec, n_saved, buffers=(), mutated=()):
        self.exe = exe
        self.wrt = wrt
        self.out_spec = out_spec
        self.n_saved = n_saved
        self.buffers = list(buffers)
        self.mutated = list(mutated)
        if wrt:
            sig = exe.signatures["main_bwd"]
            self.cotangent_types = [(tuple(a.shape), np.dtype(a.dtype))
                                    for a in sig.inputs[n_saved:]]


def _build(module_like, args, wrt, options, buffers=False) -> _Variant:
    """Imports ``module_like`` on ``args`` and compiles it (see the module
    docstring).  ``wrt``: positions in args + parameters to differentiate.
    An exception raised here carries ``_gradir_build = True``."""
    try:
        return _build_variant(module_like, args, wrt, options, buffers)
    except Exception as err:
        err._gradir_build = True
        raise


def _build_variant(module_like, args, wrt, options, buffers=False) -> _Variant:
    import gradir
    from .importer import buffer_arguments, import_program, mutated_buffers

    grad_opts, comp_opts = _split_options(options)
    module, exported = import_program(module_like, tuple(args), buffers=buffers)
    bufs = buffer_arguments(module_like, exported) if buffers else []
    mutated = mutated_buffers(module_like, exported) if buffers else []
    functions = ["main"]
    n_saved = 0
    if wrt:
        opts = " ".join(f"{k}={v}" for k, v in grad_opts.items())
        pipeline = ("builtin.module(rlx-gradient{func=main mode=vjp split=true "
                    f"wrt={','.join(map(str, wrt))} {opts}}})")
        gradir.run_pipeline(module, pipeline)
        functions += ["main_fwd", "main_bwd"]
    exe = gradir.compile(module, functions=functions, **comp_opts)
    if wrt:
        n_results = len(exe.signatures["main"].outputs)
        n_saved = len(exe.signatures["main_fwd"].outputs) - n_results
    return _Variant(exe, list(wrt), exported.call_spec.out_spec, n_saved, bufs, mutated)


def _to_numpy(t):
    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    return t.numpy()


def _results(out):
    return out if isinstance(out, tuple) else (out,)


def _from_numpy(a):
    a = np.asarray(a)     # (np.ascontiguousarray would make a 0-d array 1-d)
    return torch.from_numpy(a if a.flags.c_contiguous else a.copy())


class GradirFunction(torch.autograd.Function):
    """``@main_fwd`` forward, ``@main_bwd`` backward.  The saved values stay
    numpy arrays on ``ctx`` until the backward has used them."""

    @staticmethod
    def forward(ctx, variant, *tensors):
        out = _results(variant.exe["main_fwd"](*map(_to_numpy, tensors)))
        n = len(out) - variant.n_saved
        ctx.variant = variant
        ctx.saved = out[n:]
        ctx.n_inputs = len(tensors)
        results = tuple(_from_numpy(a) for a in out[:n])
        n_out = n - len(variant.mutated)   # the buffers' new values carry no gradient
        ctx.mark_non_differentiable(*[r for i, r in enumerate(results)
                                      if i >= n_out or not _is_float(r)])
        return results

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *cotangents):
        variant = ctx.variant
        if ctx.saved is None:
            raise RuntimeError("gradir: backward through the same forward twice "
                               "(the saved values are freed after the first backward)")
        cts = []
        for ct, (shape, dtype) in zip(cotangents, variant.cotangent_types):
            if ct is None or not _is_float(ct):
                cts.append(np.zeros(shape, dtype))
            else:
                cts.append(_to_numpy(ct).astype(dtype, copy=False))
        grads = _results(variant.exe["main_bwd"](*ctx.saved, *cts))
        ctx.saved = None
        out = [None] * ctx.n_inputs
        for i, g in zip(variant.wrt, grads):
            out[i] = _from_numpy(g)
        return (None, *out)


class Program:
    """Runs ``module_like(*inputs)`` (tensors only) with gradir: one compiled
    ``_Variant`` per key (shapes, dtypes, training mode, what requires
    grad), built on first use.  ``params``: the tensors ``@main`` takes after
    the inputs (``module_like``'s parameters in ``named_parameters()``
    order).  ``buffers=True``: the buffers are arguments too, read at each
    call, and those the forward mutates (BatchNorm's running statistics in
    training mode) are updated in place from ``@main``'s extra results, as
    PyTorch does; otherwise they are constants of each variant."""

    def __init__(self, module_like, options, buffers=False):
        self.module = module_like
        self.options = dict(options)
        self.buffers = buffers
        self.variants: dict = {}

    def params(self):
        return list(self.module.parameters())

    def key(self, inputs, grad):
        bufs = tuple((tuple(b.shape), b.dtype) for b in self.module.buffers()) \
            if self.buffers else ()
        return (self.module.training, grad,
                tuple((tuple(t.shape), t.dtype, grad and t.requires_grad) for t in inputs), bufs)

    def variant(self, inputs, params, grad):
        key = self.key(list(inputs) + list(params), grad)
        v = self.variants.get(key)
        if v is None and not grad:
            # a variant compiled for training has the same @main
            shapes = [k[:2] for k in key[2]]
            v = next((w for k, w in self.variants.items()
                      if k[0] == key[0] and [x[:2] for x in k[2]] == shapes
                      and k[3] == key[3]), None)
        if v is None:
            tensors = list(inputs) + list(params)
            wrt = [i for i, t in enumerate(tensors)
                   if grad and t.requires_grad and _is_float(t)]
            v = self.variants[key] = _build(self.module, list(inputs), wrt, self.options,
                                            self.buffers)
        return v

    def flat_call(self, inputs):
        """The outputs, flattened (a tuple of tensors)."""
        for t in inputs:
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"gradir: the compiled module takes tensors only, "
                                f"got {type(t).__name__}")
        params = self.params()
        tensors = list(inputs) + params
        for t in tensors:
            if t.device.type != "cpu" or t.dtype == torch.bfloat16:
                raise TypeError(f"gradir: the compiled module runs on CPU tensors of "
                                f"numpy's dtypes, got a {t.dtype} tensor on {t.device}")
        grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
        v = self.variant(inputs, params, grad)
        bufs = [self.module.get_buffer(name) for name in v.buffers]
        for b in bufs:
            if b.device.type != "cpu":
                raise TypeError(f"gradir: the compiled module runs on CPU tensors, got a "
                                f"buffer on {b.device}")
        tensors += bufs
        if v.wrt:
            out = GradirFunction.apply(v, *tensors)
        else:
            out = tuple(_from_numpy(a) for a in _results(v.exe["main"](*map(_to_numpy, tensors))))
        return v, self._update_buffers(v, out)

    def _update_buffers(self, v, out):
        """Copies the mutated buffers' new values (``out``'s tail) into the
        buffers; returns the outputs."""
        if not v.mutated:
            return out
        n = len(out) - len(v.mutated)
        with torch.no_grad():
            for name, new in zip(v.mutated, out[n:]):
                self.module.get_buffer(name).copy_(new)
        return out[:n]

    def __call__(self, *inputs):
        v, flat = self.flat_call(inputs)
        return tree_unflatten(list(flat), v.out_spec)


class GradirModule(torch.nn.Module):
    """``model`` with its forward and backward compiled by gradir; the model
    is ``.module`` (as in DistributedDataParallel), so this module's
    parameters are the model's own ``Parameter`` objects."""

    def __init__(self, model, options):
        super().__init__()
        self.module = model
        self._program = Program(model, options, buffers=True)

    @property
    def variants(self) -> dict:
        """The compiled variants: key -> compiled program."""
        return self._program.variants

    def forward(self, *args):
        return self._program(*args)


def compile(model, example_args, **options):  # noqa: A001 (gradir.compile's name)
    """Returns an ``nn.Module`` sharing ``model``'s parameters whose forward
    and ``backward()`` run gradir's compiled code.  ``example_args``: a
    tensor or a tuple of tensors; the variant for their shapes is compiled
    now, others on first use.  ``options``: ``remat``/``budget`` go to
    ``rlx-gradient``, the rest (``threads``, ``opt_level``, ``cache``, ...)
    to ``gradir.compile``."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    compiled = GradirModule(model, options)
    params = compiled._program.params()
    inputs = tuple(example_args)
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in list(inputs) + params)
    compiled._program.variant(inputs, params, grad)
    return compiled

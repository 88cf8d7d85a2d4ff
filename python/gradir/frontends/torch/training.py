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
only and saves nothing, also on a variant compiled for training (the
same ``@main``, BatchNorm's running statistics updated the same way).  The
model's buffers are arguments too (``import_program(..., buffers=True)``),
read at each call; the new values
of those the forward mutates (BatchNorm's running statistics in training
mode) come back after the outputs and are copied into the buffers, as
PyTorch updates them; so do the new values of inputs the forward mutates in
place (``input_mutations=True``: a ``torch.compile`` graph's lifted buffers).
A BatchNorm with ``momentum=None`` (a cumulative average, which torch.export
cannot trace) is imported with momentum 1 (its new running statistics are the
batch statistics) and averaged in ``Program._update_buffers``.  With
``target="cuda"`` the compiled CUDA executable copies its arguments to the GPU
and its results back itself: the module takes CPU tensors, or CUDA tensors
(copied through the host; the results are put on their device).
A call checks its tensors and finds its variant in full once; the calls
after it that match (same modes, shapes, dtypes, parameter and buffer
objects, plain CPU tensors) run on the plan it left (``call_plan.py``),
passing the tensors' data pointers straight to the compiled code.

``Program`` is the same machinery for any module whose inputs are all
tensors; the ``torch.compile`` backend (``backend.py``) builds one per graph.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils._pytree import tree_unflatten

from .call_plan import CallPlan
from .errors import TorchImportError, UnsupportedOpError

__all__ = ["compile", "GradirModule", "Program", "GRADIENT_OPTIONS"]

# options of rlx-gradient; ``fuse_attention`` is rlx-fuse-attention's budget
# (run before it); the others go to gradir.compile
GRADIENT_OPTIONS = ("remat", "budget")
FUSE_ATTENTION = "fuse_attention"
# rlx-fuse-attention's own default: an attention whose one (batch, head)
# score matrix is over 512 KiB runs per block of query rows (bench/attention.py:
# seq 1024, 8 heads, the forward 46 -> 34 ms and 66 -> 10 MiB)
FUSE_ATTENTION_BYTES = 524288
_FLOATS = ("float16", "float32", "float64")


def _split_options(options: dict) -> tuple[dict, dict]:
    grad = {k: v for k, v in options.items() if k in GRADIENT_OPTIONS}
    comp = {k: v for k, v in options.items()
            if k not in GRADIENT_OPTIONS and k != FUSE_ATTENTION}
    return grad, comp


def _fuse_step(options: dict) -> str:
    """The ``rlx-fuse-attention`` step the ``fuse_attention`` option asks
    for (True, the default: its 512 KiB budget; a positive int: that many
    bytes; False or 0: none), followed by a comma, or ""."""
    fuse = options.get(FUSE_ATTENTION, True)
    if fuse is True:
        fuse = FUSE_ATTENTION_BYTES
    if fuse is False or fuse == 0:
        return ""
    if not isinstance(fuse, int) or fuse < 0:
        raise ValueError(f"fuse_attention must be True, False or a positive number of bytes "
                         f"(the score matrix of one batch element and head above which "
                         f"attention runs per block of query rows), got {fuse!r}")
    return f"rlx-fuse-attention{{cache-bytes={fuse}}},"


_FLOAT_DTYPES = frozenset(getattr(torch, name) for name in _FLOATS)


def _is_float(t) -> bool:
    return t.dtype in _FLOAT_DTYPES


class _Variant:
    """One compiled program: ``@main`` and, when some value is
    differentiated, ``@main_fwd``/``@main_bwd``.  ``wrt``: the positions (in
    inputs + parameters) that get gradients; ``out_spec``: the pytree of the
    model's outputs; ``buffers``: the names of the buffers ``@main`` takes
    after the parameters, ``mutated``: those whose new values it returns
    after the outputs (empty unless imported with ``buffers=True``), after
    the new values of the inputs at positions ``mutated_inputs``."""

    def __init__(self, exe, wrt, out_spec, n_saved, buffers=(), mutated=(), mutated_inputs=()):
        self.exe = exe
        self.mutated_inputs = list(mutated_inputs)
        self.wrt = wrt
        self.out_spec = out_spec
        self.n_saved = n_saved
        self.buffers = list(buffers)
        self.mutated = list(mutated)
        # buffer name -> num_batches_tracked's: the cumulative averages among
        # ``mutated``, traced with momentum 1.0 (``_build_variant``)
        self.averages: dict = {}
        if wrt:
            sig = exe.signatures["main_bwd"]
            self.cotangent_types = [(tuple(a.shape), np.dtype(a.dtype))
                                    for a in sig.inputs[n_saved:]]

    @property
    def n_extra(self) -> int:
        """How many results follow the outputs (new values of mutated inputs
        and buffers)."""
        return len(self.mutated_inputs) + len(self.mutated)


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
    from .importer import buffer_arguments, import_program, mutated_buffers, mutated_inputs

    grad_opts, comp_opts = _split_options(options)
    fuse = _fuse_step(options)
    averages = cumulative_averages(module_like)
    with _momentum_one(averages):
        module, exported = import_program(module_like, tuple(args), buffers=buffers,
                                          input_mutations=True)
    bufs = buffer_arguments(module_like, exported) if buffers else []
    mutated = mutated_buffers(module_like, exported) if buffers else []
    functions = ["main"]
    n_saved = 0
    if wrt:
        opts = " ".join(f"{k}={v}" for k, v in grad_opts.items())
        pipeline = (f"builtin.module({fuse}rlx-gradient{{func=main mode=vjp split=true "
                    f"wrt={','.join(map(str, wrt))} {opts}}})")
        gradir.run_pipeline(module, pipeline)
        functions += ["main_fwd", "main_bwd"]
    elif fuse:
        gradir.run_pipeline(module, f"builtin.module({fuse[:-1]})")
    exe = gradir.compile(module, functions=functions, **comp_opts)
    if wrt:
        n_results = len(exe.signatures["main"].outputs)
        n_saved = len(exe.signatures["main_fwd"].outputs) - n_results
    v = _Variant(exe, list(wrt), exported.call_spec.out_spec, n_saved, bufs, mutated,
                 mutated_inputs(exported))
    v.module = module          # what was compiled (@main, @main_fwd, @main_bwd)
    # the cumulative averages this variant was traced with (momentum 1.0)
    v.averages = dict(averages) if mutated else {}
    return v


def cumulative_averages(model) -> dict:
    """The BatchNorm layers of ``model`` that keep a cumulative average
    (``momentum=None``) and update it in this mode: {``running_mean`` or
    ``running_var`` buffer name: ``num_batches_tracked`` buffer name}
    (``named_buffers()`` names), or {} (the layers are the dict's
    ``.layers`` attribute, for ``_momentum_one``)."""
    from torch.nn.modules.batchnorm import _BatchNorm

    out = _Averages()
    by_id = {id(b): name for name, b in model.named_buffers()}
    for _, m in model.named_modules():
        if (isinstance(m, _BatchNorm) and m.momentum is None and m.training
                and m.track_running_stats and m.num_batches_tracked is not None):
            out.layers.append(m)
            count = by_id[id(m.num_batches_tracked)]
            for stat in (m.running_mean, m.running_var):
                out[by_id[id(stat)]] = count
    return out


class _Averages(dict):
    def __init__(self):
        super().__init__()
        self.layers = []


class _momentum_one:
    """Traces the layers of ``averages`` with ``momentum=1.0``: the running
    statistics' new values are then the batch statistics themselves (torch.export
    cannot trace the cumulative average's ``1 / float(num_batches_tracked)``);
    ``Program`` folds them into the cumulative average."""

    def __init__(self, averages):
        self.layers = averages.layers

    def __enter__(self):
        for m in self.layers:
            m.momentum = 1.0

    def __exit__(self, *exc):
        for m in self.layers:
            m.momentum = None


def _to_numpy(t):
    t = t.detach()
    if not t.is_cpu:              # target "cuda": the executable copies to the GPU itself
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    return t.numpy()


def _results(out):
    return out if isinstance(out, tuple) else (out,)


def _from_numpy(a, device=None):
    a = np.asarray(a)     # (np.ascontiguousarray would make a 0-d array 1-d)
    t = torch.from_numpy(a if a.flags.c_contiguous else a.copy())
    return t if device is None or device.type == "cpu" else t.to(device)


# dtype -> whether ``Program._check`` refuses tensors of it (filled on first sight)
_REFUSED_DTYPES: dict = {}


class GradirFunction(torch.autograd.Function):
    """``@main_fwd`` forward, ``@main_bwd`` backward.  The saved values stay
    numpy arrays on ``ctx`` until the backward has used them."""

    @staticmethod
    def forward(ctx, variant, device, *tensors):
        if type(variant) is CallPlan:     # a plan's call: ``device`` is its pointers and extras
            return variant.forward(ctx, *device)
        out = _results(variant.exe["main_fwd"](*map(_to_numpy, tensors)))
        n = len(out) - variant.n_saved
        # no zero tensors for the results without a gradient (the buffers'
        # new values): the backward makes its numpy zeros for a None
        ctx.set_materialize_grads(False)
        ctx.variant = variant
        ctx.saved = out[n:]
        ctx.devices = [t.device for t in tensors]
        results = tuple(_from_numpy(a, device) for a in out[:n])
        n_out = n - variant.n_extra   # the buffers' new values carry no gradient
        ctx.mark_non_differentiable(*[r for i, r in enumerate(results)
                                      if i >= n_out or not _is_float(r)])
        return results

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *cotangents):
        plan = getattr(ctx, "plan", None)
        if plan is not None:
            return (None, None, *plan.backward(ctx, cotangents))
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
        out = [None] * len(ctx.devices)
        for i, g in zip(variant.wrt, grads):
            out[i] = _from_numpy(g, ctx.devices[i])
        return (None, None, *out)


class Program:
    """Runs ``module_like(*inputs)`` (tensors only) with gradir: one compiled
    ``_Variant`` per key (shapes, dtypes, training mode, what requires
    grad), built on first use.  ``params``: the tensors ``@main`` takes after
    the inputs (``module_like``'s parameters in ``named_parameters()``
    order).  ``buffers=True``: the buffers are arguments too, read at each
    call, and those the forward mutates (BatchNorm's running statistics in
    training mode) are updated in place from ``@main``'s extra results, as
    PyTorch does; otherwise they are constants of each variant."""

    def __init__(self, module_like, options, buffers=False, name_inputs=False):
        if options.get("keep_resident"):
            raise ValueError("gradir: keep_resident does not apply to a trained module: "
                             "its parameters change at every optimizer step, so every call "
                             "uploads them")
        _fuse_step(options)    # a bad fuse_attention: now, not at the first call
        self.module = module_like
        self.options = dict(options)
        self.buffers = buffers
        self.variants: dict = {}
        self.name_inputs = name_inputs   # errors name the inputs (not a Dynamo graph's)
        self.example = None              # the first variant's input shapes and dtypes
        self._signature = (None, [])     # (forward function, its positional parameters)
        self.plans: dict = {}            # (training, grad enabled) -> CallPlan (call_plan.py)

    def params(self):
        return list(self.module.parameters())

    def key(self, inputs, grad, buffers=None):
        """``buffers``: ``self.module.buffers()`` when the caller has them."""
        if buffers is None and self.buffers:
            buffers = self.module.buffers()
        bufs = tuple((tuple(b.shape), b.dtype) for b in buffers) if self.buffers else ()
        return (self.module.training, grad,
                tuple((tuple(t.shape), t.dtype, grad and t.requires_grad) for t in inputs), bufs)

    def variant(self, inputs, params, grad, buffers=None):
        key = self.key(list(inputs) + list(params), grad, buffers)
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
            try:
                v = _build(self.module, list(inputs), wrt, self.options, self.buffers)
            except TorchImportError as err:
                if isinstance(err, UnsupportedOpError) or not self.name_inputs:
                    raise
                raise self._input_error(inputs, err) from err
            self.variants[key] = v
            if self.example is None:
                self.example = [(tuple(t.shape), t.dtype) for t in inputs]
        return v

    def _input_error(self, inputs, err) -> Exception:
        """``err`` (the model could not be imported for ``inputs``) naming
        the inputs that differ from the first compiled variant's (all of
        them before one is compiled)."""
        names = self.input_names(len(inputs))

        def spell(shape, dtype):
            return f"{str(dtype).removeprefix('torch.')}[{', '.join(map(str, shape))}]"

        seen = self.example or []
        parts = []
        for i, t in enumerate(inputs):
            mine = (tuple(t.shape), t.dtype)
            if i >= len(seen):
                parts.append(f"input {names[i]} {spell(*mine)}")
            elif mine != seen[i]:
                parts.append(f"input {names[i]} {spell(*mine)} (compiled before for "
                             f"{spell(*seen[i])})")
        reason = str(err).removeprefix("torch.export failed: ")
        new = TorchImportError(f"gradir: cannot compile the model for "
                               f"{', '.join(parts) or 'these inputs'}: {reason}")
        new._gradir_build = True
        return new

    def input_names(self, n: int) -> list[str]:
        """Names of the forward's first ``n`` inputs, for error messages:
        its parameters' names where its signature tells them."""
        import inspect
        forward = self.module.forward
        function = getattr(forward, "__func__", forward)
        if self._signature[0] is not function:
            try:
                params = [p.name for p in inspect.signature(forward).parameters.values()
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            except (TypeError, ValueError):
                params = []
            self._signature = (function, params)
        params = self._signature[1]
        return [f"'{params[i]}'" if i < len(params) else f"{i}" for i in range(n)]

    def _check(self, named) -> "torch.device | None":
        """Refuses a tensor the executable cannot take, naming it; returns
        the CUDA device of the tensors (None: the CPU's)."""
        cuda = self.options.get("target", "cpu") == "cuda"
        device = None
        refused = _REFUSED_DTYPES
        for what, t in named:
            bad = refused.get(t.dtype)
            if bad is None:     # complex and quantized tensors are so by their dtype
                bad = refused[t.dtype] = bool(t.dtype == torch.bfloat16 or t.is_complex()
                                              or t.is_quantized)
            if bad:
                raise TypeError(f"gradir: {what} is a {t.dtype} tensor; the compiled module "
                                "takes tensors of numpy's dtypes (float16/32/64, integers, "
                                "bool)")
            if t.is_cpu:
                continue
            if not cuda or t.device.type != "cuda":
                raise TypeError(f"gradir: {what} is on {t.device}; the compiled module runs "
                                "on CPU tensors (compile with target='cuda' for CUDA tensors)")
            if device is not None and t.device != device:
                raise TypeError(f"gradir: {what} is on {t.device}, others on {device}")
            device = t.device
        return device

    def prepare(self, inputs, buffers=None):
        """Checks ``inputs`` and the parameters (an error names the
        argument) and returns the variant for them (compiled now if new),
        the parameters and the CUDA device of the tensors (or None)."""
        names = self.input_names(len(inputs))
        for name, t in zip(names, inputs):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"gradir: input {name} is a {type(t).__name__}; the compiled "
                                "module takes tensors only")
        named_params = list(self.module.named_parameters())
        params = [p for _, p in named_params]
        device = self._check([(f"input {n}", t) for n, t in zip(names, inputs)]
                             + [(f"parameter '{n}'", p) for n, p in named_params])
        self._check_float_dtypes(names, inputs, params)
        grad = torch.is_grad_enabled() and any(t.requires_grad for t in list(inputs) + params)
        return self.variant(inputs, params, grad, buffers), params, device

    def _check_float_dtypes(self, names, inputs, params):
        """Refuses a floating-point input whose dtype is neither the one it
        had when first compiled nor the parameters' (a float64 batch for a
        float32 model: PyTorch's matmuls refuse the mix, torch.export's
        trace does not)."""
        dtypes = {p.dtype for p in params if p.is_floating_point()}
        if self.example is None or len(dtypes) != 1:
            return
        (want,) = dtypes
        for name, t, (_, first) in zip(names, inputs, self.example):
            if (t.is_floating_point() and first.is_floating_point and t.dtype != first
                    and t.dtype != want):
                spell = str(t.dtype).removeprefix("torch.")
                raise TypeError(f"gradir: input {name} is a {spell} tensor; the module was "
                                f"compiled for {str(first).removeprefix('torch.')} and the "
                                f"model's parameters are {str(want).removeprefix('torch.')} "
                                f"(convert the input, or the model)")

    def flat_call(self, inputs):
        """The outputs, flattened (a tuple of tensors): on the plan of the
        last call in these modes when this call matches it (``call_plan.py``),
        else through the general path, which leaves a plan."""
        grad_enabled = torch.is_grad_enabled()
        plan = self.plans.get((self.module.training, grad_enabled))
        if plan is not None:
            found = plan.pointers(inputs)
            if found is not None:
                return plan.v, self._planned_call(plan, inputs, *found)
        # the buffers looked up once a call (named_buffers() walks the modules)
        named = dict(self.module.named_buffers()) if self.buffers else {}
        v, params, device = self.prepare(inputs, named.values() if self.buffers else None)
        tensors = list(inputs) + params
        bufs = [self._buffer(named, name) for name in v.buffers]
        device = self._check([(f"buffer '{n}'", b) for n, b in zip(v.buffers, bufs)]) or device
        tensors += bufs
        # @main_fwd (which saves the backward's values) only when this call
        # differentiates: under no_grad, or with nothing requiring grad, a
        # variant compiled for training runs its @main, which saves nothing
        grad = bool(v.wrt) and grad_enabled and any(
            t.requires_grad for t in tensors[:len(inputs) + len(params)])
        if grad:
            out = GradirFunction.apply(v, device, *tensors)
        else:
            out = tuple(_from_numpy(a, device)
                        for a in _results(v.exe["main"](*map(_to_numpy, tensors))))
        out = self._update_buffers(v, inputs, out, named)
        if device is None and CallPlan.eligible(self, v, tensors):
            self.plans[(self.module.training, grad_enabled)] = \
                CallPlan(self, v, tensors, len(inputs), grad)
        return v, out

    @staticmethod
    def _planned_call(plan, inputs, tensors, ptrs):
        """``flat_call`` on ``plan`` (``tensors``: the inputs, parameters
        and buffers; ``ptrs``: their data pointers)."""
        if plan.apply:
            extras: list = []
            out = GradirFunction.apply(plan, (ptrs, extras),
                                       *[tensors[i] for i in plan.v.wrt])
        else:
            extras = plan.run_main(ptrs)
            out = tuple(extras[:plan.n_out])
            extras = extras[plan.n_out:]
        plan.update(inputs, extras)
        return out

    def _buffer(self, named, name):
        """The buffer ``name``: from ``named`` (``named_buffers()``), else
        (a buffer shared under another name) ``get_buffer``."""
        buf = named.get(name)
        return buf if buf is not None else self.module.get_buffer(name)

    def _update_buffers(self, v, inputs, out, named=None):
        """Copies the new values of the mutated inputs and buffers
        (``out``'s tail) into them, as PyTorch updates them in place; returns
        the outputs.  The running statistics of a cumulative average
        (BatchNorm with ``momentum=None``, imported with ``momentum=1.0``:
        their new values are the batch statistics) become ``(1 - 1/n) *
        running + 1/n * batch`` with ``n`` the new ``num_batches_tracked``,
        as PyTorch computes them."""
        if not v.n_extra:
            return out
        n = len(out) - v.n_extra
        new = out[n:]
        named = {} if named is None else named
        averages = v.averages
        with torch.no_grad():
            for i, value in zip(v.mutated_inputs, new):
                inputs[i].copy_(value)
            later = []
            for name, value in zip(v.mutated, new[len(v.mutated_inputs):]):
                if name in averages:
                    later.append((name, value))
                else:
                    self._buffer(named, name).copy_(value)
            for name, batch in later:
                factor = 1.0 / float(self._buffer(named, averages[name]))
                buf = self._buffer(named, name)
                buf.copy_(batch.double() * factor + buf.double() * (1.0 - factor))
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
        self._program = Program(model, options, buffers=True, name_inputs=True)

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
    ``rlx-gradient``; ``fuse_attention`` (True by default, False, or a
    number of bytes) runs ``rlx-fuse-attention`` first: an attention whose
    score matrix of one batch element and head is over 512 KiB (or that
    many bytes) runs per block of query rows; the rest (``threads``,
    ``opt_level``, ``cache``, ...) go to ``gradir.compile``."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    compiled = GradirModule(model, options)
    compiled._program.prepare(tuple(example_args))
    return compiled

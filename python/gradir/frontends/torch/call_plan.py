"""The drop-in module's call path once a variant has run: a ``CallPlan``.

``Program.flat_call`` (``training.py``) checks every call in full: the
inputs' types, the parameters (a ``named_parameters()`` walk) and buffers
(``named_buffers()``), their dtypes and devices, the variant's key; it then
hands numpy views of the ~36 tensors of a CIFAR ResNet to the compiled
``@main_fwd``, which checks them again, allocates its results as numpy
arrays, and the results become tensors (``torch.from_numpy``); the backward
does the same for the cotangents and the gradients.  None of that changes
from one training step to the next.  So a call through the general path
leaves a plan (one per training mode and grad mode): the parameter and
buffer objects it used, the shapes, dtypes and ``requires_grad`` of every
tensor, the names and objects of every module's parameters, buffers and
submodules (``structure``), and for the variant's functions the shapes and
dtypes of their results.  The next call runs on the plan when it matches:
the same modes, tensors of the plan's shapes, dtypes and ``requires_grad``,
plain contiguous CPU tensors, the same module structure (one list
comparison); it then passes the tensors' ``data_ptr()`` to the compiled
code (``abi.Function.call_pointers``: no numpy view, no check), allocates
the results as numpy arrays seen as tensors, and gives
``torch.autograd.Function`` only the tensors that get gradients (the others,
and the buffers' new values, go around autograd).  The saved values of a
finished backward are kept (one set) for the next forward to write over:
the 47 arrays (31.8 MB) of the ResNet were 47 allocations and frees a step
(126 -> 60 us of the forward's Python, 63 -> 35 us of the backward's), and
a training loop allocates them again at once anyway; the plan holds that
memory between steps, as the heap does.  A call that does not
match (another shape, a parameter replaced or frozen, a non-contiguous
input) takes the general path, which checks it and makes a new plan.
The compiled code, its inputs and so its results are the same either way,
bit for bit.

The CIFAR ResNet of bench/cnn.py (batch 32, 36 tensors in, 63 results and
saved values out of ``@main_fwd``, 19 gradients out of ``@main_bwd``; one
training step with SGD, one thread, one pinned core, the general path and
the plan alternated in one process, CPU time of the calling thread, median
of 250 steps at load 9): the CPU time outside the two compiled calls
2.22 -> 1.82 ms a step (the forward's 0.87 -> 0.59 ms, the backward's
0.74 -> 0.61 ms; the optimizer's 0.5 ms is the rest).  With the compiled
calls replaced by no-ops (the Python alone, warm caches, 1000 steps): the
forward 215 -> 102 us, ``loss.backward()`` 131 -> 82 us.  The rest is
autograd's (the Function's node, the engine, AccumulateGrad, which takes
the gradient tensors as they are) and the buffers' copies.
"""

from __future__ import annotations

import ctypes

import numpy as np
import torch

__all__ = ["CallPlan", "structure"]

_FLOAT_DTYPES = frozenset((torch.float16, torch.float32, torch.float64))
# a module whose type redefines one of these may list other tensors than
# its dicts say: its calls always take the general path
_WALKS = ("named_parameters", "named_buffers", "parameters", "buffers", "named_modules",
          "modules", "_named_members")
_ALIGN = 64     # bytes: the zero cotangents' offsets in their block


def structure(module) -> "tuple[list, list] | None":
    """The modules of ``module`` and the dicts that decide its
    ``named_parameters()`` and ``named_buffers()`` (every module's
    ``_parameters``, ``_buffers`` and ``_modules``), or None when a module's
    type redefines how they are walked."""
    base = torch.nn.Module
    modules = list(module.modules())
    dicts = []
    for m in modules:
        kind = type(m)
        if any(getattr(kind, name) is not getattr(base, name) for name in _WALKS):
            return None
        dicts += (m._parameters, m._buffers, m._modules)
    return modules, dicts


def fingerprint(dicts) -> list:
    """What ``dicts`` hold: (name, object id) pairs, in order.  The plan
    keeps the modules, parameters and buffers it saw alive, so none of
    their ids is reused by a new object while the plan compares them (a
    submodule replaced by a new one at the old one's address would look
    the same)."""
    return [(k, id(v)) for d in dicts for k, v in d.items()]


def _address(array: np.ndarray) -> int:
    """The address of ``array``'s data: through the buffer protocol (0.25
    us) where the array is writable and not empty, else
    ``array.ctypes.data`` (0.8 us), as ``runtime.abi`` does."""
    try:
        return ctypes.addressof(ctypes.c_byte.from_buffer(array))
    except (TypeError, ValueError, BufferError):
        return array.ctypes.data


def _plain(t) -> bool:
    """A tensor whose ``data_ptr()`` is its data as the compiled code
    reads it: on the CPU, contiguous, no negative or conjugate bit."""
    return t.is_cpu and t.is_contiguous() and not t.is_neg() and not t.is_conj()


def _specs(sig, start=0, stop=None):
    return [(tuple(s.shape), np.dtype(s.dtype)) for s in sig.outputs[start:stop]]


class CallPlan:
    """One variant's calls with the parameters and buffers of the call that
    made it (see the module docstring).  ``tensors``: the inputs, then the
    parameters, then the buffers ``v.buffers`` names, as that call passed
    them; ``grad``: whether that call differentiated (ran ``@main_fwd``)."""

    def __init__(self, program, v, tensors, n_inputs, grad):
        module = program.module
        self.module = module
        self.v = v
        self.training = module.training
        self.grad = grad
        self.n_inputs = n_inputs
        self.held = list(tensors[n_inputs:])          # the parameters and buffers
        self.specs = [(t.shape, t.dtype, t.requires_grad) for t in tensors]
        self.modules, self.dicts = structure(module)
        self.fingerprint = fingerprint(self.dicts)
        exe = v.exe
        n_results = len(exe.signatures["main"].outputs)
        self.n_out = n_results - v.n_extra
        # as flat_call: @main_fwd when the call differentiates (grad mode and
        # something requires grad), else @main, which saves nothing
        self.apply = bool(v.wrt) and grad
        if self.apply:
            self.fwd, self.bwd = exe["main_fwd"], exe["main_bwd"]
            sig = self.fwd.signature
            self.results = _specs(sig, 0, n_results)
            self.saved = _specs(sig, n_results)
            self.grads = _specs(self.bwd.signature)
            cts = self.bwd.signature.inputs[v.n_saved:]
            self.cotangents = [(tuple(s.shape), np.dtype(s.dtype),
                                torch.from_numpy(np.empty(0, s.dtype)).dtype)
                               for s in cts[:self.n_out]]
            # the cotangents of the mutated tensors' new values are zeros:
            # one block per call, one slice each
            self.zero_offsets, self.zero_bytes = [], 0
            for s in cts[self.n_out:]:
                self.zero_offsets.append(self.zero_bytes)
                size = int(np.prod(s.shape, dtype=np.int64)) * np.dtype(s.dtype).itemsize
                self.zero_bytes += -(-max(size, 1) // _ALIGN) * _ALIGN
        else:
            self.main = exe["main"]
            self.results = _specs(self.main.signature)
        self.non_float = [i for i, (_, d) in enumerate(self.results[:self.n_out])
                          if d.kind != "f"]
        # the buffers' new values: copied (in v.mutated order), then the
        # cumulative averages, as Program._update_buffers does
        bufs = dict(zip(v.buffers, tensors[len(tensors) - len(v.buffers):]))
        first = len(v.mutated_inputs)
        self.copies, self.averages = [], []
        for j, name in enumerate(v.mutated, first):
            if name in v.averages:
                self.averages.append((bufs[name], bufs[v.averages[name]], j))
            else:
                self.copies.append((bufs[name], j))
        # copies into buffers that do not require grad record nothing in
        # grad mode: no torch.no_grad() around them (with it, the 15 copies
        # of the ResNet's running statistics took 127 us, without 93)
        self.bare = not (v.mutated_inputs or self.averages
                         or any(b.requires_grad for b, _ in self.copies))
        # the saved values of the last finished backward, for the next
        # forward to write over (at most one set; see the module docstring)
        self.spare: list = []

    @staticmethod
    def eligible(program, v, tensors) -> bool:
        """Whether a call of ``v`` with ``tensors`` (inputs, parameters,
        buffers) can leave a plan."""
        if program.options.get("target", "cpu") == "cuda" or structure(program.module) is None:
            return False
        for name in ("main", "main_fwd", "main_bwd"):
            if name in v.exe:
                sig = v.exe.signatures[name]
                if sig.input_tree != tuple(range(len(sig.inputs))) or \
                        sig.output_tree != tuple(range(len(sig.outputs))):
                    return False
        n_results = len(v.exe.signatures["main"].outputs)
        if v.wrt and n_results == v.n_extra:
            return False
        return all(type(t) in (torch.Tensor, torch.nn.Parameter) and _plain(t) for t in tensors)

    def pointers(self, inputs) -> "tuple[list, list] | None":
        """The tensors of a call with ``inputs`` and their data pointers,
        or None when the call is not this plan's."""
        if (len(inputs) != self.n_inputs or self.module.training != self.training
                or fingerprint(self.dicts) != self.fingerprint):
            return None
        tensors = [*inputs, *self.held]
        ptrs = []
        for t, (shape, dtype, rg) in zip(tensors, self.specs):
            if (type(t) is not torch.Tensor and type(t) is not torch.nn.Parameter) \
                    or t.shape != shape or t.dtype != dtype or t.requires_grad != rg \
                    or not _plain(t):
                return None
            ptrs.append(t.data_ptr())
        return tensors, ptrs

    # --- the calls ---------------------------------------------------------

    def run_main(self, ptrs) -> list:
        """``@main``: the results (outputs, then the new values)."""
        results = [torch.from_numpy(np.empty(s, d)) for s, d in self.results]
        self.main.call_pointers(ptrs + [r.data_ptr() for r in results])
        return results

    def forward(self, ctx, ptrs, extras: list):
        """``GradirFunction.forward`` on the plan: ``@main_fwd``; the new
        values of the mutated tensors go to ``extras``, not through
        autograd (they have no gradient)."""
        results = [torch.from_numpy(np.empty(s, d)) for s, d in self.results]
        spare = self.spare
        if spare:
            saved, saved_ptrs = spare.pop()
        else:
            saved = [np.empty(s, d) for s, d in self.saved]
            saved_ptrs = [_address(a) for a in saved]
        self.fwd.call_pointers(ptrs + [r.data_ptr() for r in results] + saved_ptrs)
        ctx.set_materialize_grads(False)
        ctx.plan = self
        ctx.saved = saved
        ctx.saved_ptrs = saved_ptrs
        outs = results[:self.n_out]
        extras += results[self.n_out:]
        if self.non_float:
            ctx.mark_non_differentiable(*[outs[i] for i in self.non_float])
        return tuple(outs)

    def backward(self, ctx, cotangents) -> list:
        """``GradirFunction.backward`` on the plan: ``@main_bwd``; the
        gradients of the differentiated tensors, in order."""
        if ctx.saved is None:
            raise RuntimeError("gradir: backward through the same forward twice "
                               "(the saved values are freed after the first backward)")
        ptrs = list(ctx.saved_ptrs)
        keep = []
        for ct, (shape, dtype, want) in zip(cotangents, self.cotangents):
            if ct is None or ct.dtype not in _FLOAT_DTYPES:
                a = np.zeros(shape, dtype)
            elif ct.dtype == want and type(ct) is torch.Tensor and _plain(ct):
                ptrs.append(ct.data_ptr())
                continue
            else:
                a = np.ascontiguousarray(ct.detach().cpu().resolve_conj().resolve_neg()
                                         .numpy()).astype(dtype, copy=False)
            keep.append(a)
            ptrs.append(_address(a))
        if self.zero_bytes:
            zeros = np.zeros(self.zero_bytes, np.uint8)
            base = _address(zeros)
            ptrs += [base + o for o in self.zero_offsets]
        grads = [torch.from_numpy(np.empty(s, d)) for s, d in self.grads]
        self.bwd.call_pointers(ptrs + [g.data_ptr() for g in grads])
        if not self.spare:
            self.spare.append((ctx.saved, ctx.saved_ptrs))
        ctx.saved = ctx.saved_ptrs = None
        return grads

    def update(self, inputs, extras) -> None:
        """The mutated inputs and buffers take their new values
        (``Program._update_buffers``, with the buffers known)."""
        if not extras:
            return
        if self.bare:
            for buf, j in self.copies:
                buf.copy_(extras[j])
            return
        with torch.no_grad():
            for i, value in zip(self.v.mutated_inputs, extras):
                inputs[i].copy_(value)
            for buf, j in self.copies:
                buf.copy_(extras[j])
            for buf, count, j in self.averages:
                factor = 1.0 / float(count)
                buf.copy_(extras[j].double() * factor + buf.double() * (1.0 - factor))

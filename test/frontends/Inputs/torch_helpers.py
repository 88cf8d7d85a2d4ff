"""Shared by the importer tests: import a torch model, compare the
interpreted @main with PyTorch, and rlx-gradient's gradients with
torch.autograd (float64)."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils._pytree import tree_flatten, tree_leaves, tree_unflatten

import gradir
from gradir.frontends.torch import import_module

torch.manual_seed(0)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def np_args(model, args):
    """@main's arguments: the inputs (flattened), then the parameters."""
    return ([a.detach().numpy() for a in tree_leaves(args)]
            + [p.detach().numpy() for _, p in model.named_parameters()])


class Weighted(torch.nn.Module):
    """sum_i sum(out_i * r_i): a scalar loss of every float output, with
    fixed random weights r_i (buffers: constants in the import)."""

    def __init__(self, model, args):
        super().__init__()
        self.model = model
        with torch.no_grad():
            outs = [o for o in tree_leaves(model(*args)) if o.is_floating_point()]
        for i, o in enumerate(outs):
            self.register_buffer(f"r{i}", torch.randn(o.shape, dtype=o.dtype))

    def forward(self, *args):
        outs = [o for o in tree_leaves(self.model(*args)) if o.is_floating_point()]
        return sum((o * getattr(self, f"r{i}")).sum() for i, o in enumerate(outs))


def check_forward(model, args, rtol=1e-10, atol=1e-12):
    module = import_module(model, args)
    got = gradir.interpret(module, "main", *np_args(model, args))
    with torch.no_grad():
        want = [o.numpy() for o in tree_leaves(model(*args))]
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        f32 = g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=max(rtol, 1e-5) if f32 else rtol,
                                   atol=max(atol, 1e-6) if f32 else atol)
    return module


def check_gradients(model, args, rtol=1e-8, atol=1e-10, loss=None):
    """rlx-gradient of ``loss`` (default: Weighted(model)) against
    torch.autograd, w.r.t. every float input and parameter."""
    loss = loss or Weighted(model, args)
    module = import_module(loss, args)
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main})")
    arrays = np_args(loss, args)
    outs = gradir.interpret(module, "main_adjoint", *arrays)
    flat, spec = tree_flatten(args)
    leaves = [a.detach().clone().requires_grad_(a.is_floating_point()) for a in flat]
    params = [p for _, p in loss.named_parameters()]
    value = loss(*tree_unflatten(leaves, spec))
    wrt = [x for x in leaves if x.is_floating_point()] + params
    grads = torch.autograd.grad(value, wrt, allow_unused=True)
    f32 = outs[0].dtype == np.float32
    np.testing.assert_allclose(outs[0], value.detach().numpy(), rtol=1e-5 if f32 else 1e-10)
    assert len(outs) == 1 + len(wrt), (len(outs), len(wrt))
    for i, (g, w) in enumerate(zip(outs[1:], grads)):
        w = np.zeros_like(g) if w is None else w.numpy()
        tol = (1e-5, 1e-6) if f32 else (rtol, atol)
        np.testing.assert_allclose(g, w, rtol=tol[0], atol=tol[1], err_msg=f"gradient {i}")
    return module


def check(model, args, grad_rtol=1e-8, **kw):
    """Forward, then gradients (when some output is floating-point)."""
    check_forward(model, args, **kw)
    with torch.no_grad():
        outs = tree_leaves(model(*args))
    if any(o.is_floating_point() for o in outs):
        check_gradients(model, args, rtol=grad_rtol)


def check_compiled(module, model, args, fn="main", rtol=1e-9):
    """gradir.compile(module) against the interpreter on ``fn``."""
    exe = gradir.compile(module, target="cpu")
    arrays = np_args(model, args)
    got = exe[fn](*arrays)
    got = got if isinstance(got, tuple) else (got,)
    want = gradir.interpret(module, fn, *arrays)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-10)
    return exe


def randn(*shape):
    return torch.randn(*shape)


class Fn(torch.nn.Module):
    """A module around a function of the inputs (and optional parameters)."""

    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        for k, v in params.items():
            setattr(self, k, torch.nn.Parameter(v))

    def forward(self, *args):
        return self.fn(self, *args)

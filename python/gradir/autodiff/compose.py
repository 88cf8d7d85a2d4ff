"""Forward mode and its compositions: JVPs, Jacobians, Hessian-vector
products and Hessians, built on ``autodiff/forward.py``.

- ``jvp``: ``@f_jvp(args..., tangent per wrt argument) -> (results...,
  tangent per result)``.
- ``jacobian``: ``@f_jacobian(args) -> (results..., d result / d arg per
  (float result, wrt argument), shaped result.shape + arg.shape)``.  Forward
  columns push the identity of all wrt elements through one batched forward
  sweep; reverse rows push the identity of all result elements through the
  forward sweep of ``@f_vjp`` w.r.t. its cotangents (the VJP is linear in its
  cotangent, so its tangent along basis vector e_k *is* row k: batched
  reverse mode without batched VJP rules).  ``auto`` takes the side with
  fewer basis vectors.
- ``hvp``: forward-over-reverse, the tangent of ``@f_adjoint``'s gradients
  along ``v``.
- ``hessian``: the forward Jacobian of ``@f_adjoint``'s gradients.

``reverse(fn, mode, wrt)`` is the caller's (the pass's) way to build a
reverse-mode function (``"adjoint"`` or ``"vjp"``) next to ``fn``; it
returns the new function, which this module erases when done.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ..dialects import rlx
from .forward import build_forward, materialize_tangent, prepared_clone
from .gradient import GradientError, function_type
from .rules import is_float_type

__all__ = ["jvp", "jacobian", "hvp", "hessian", "unique_name"]


def unique_name(module: ir.Operation, base: str, suffixes=("",)) -> str:
    """``base`` (or ``base1``, ``base2``...) such that no function is named
    it followed by any of ``suffixes``."""
    from ..ir import find_function
    name, k = base, 0
    while any(find_function(module, name + s) is not None for s in suffixes):
        k += 1
        name = f"{base}{k}"
    return name


def _shape(t: ir.Type) -> list[int]:
    return list(ir.RankedTensorType(t).shape)


def _size(t: ir.Type) -> int:
    return int(math.prod(_shape(t)))


def _elt(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type


def _sweep(module, fn, name, arg_types, bind, outputs, batch=()):
    src = prepared_clone(module, fn, unique_name(module, f"{name}__src"))
    try:
        return build_forward(module, src, name, arg_types, bind, outputs, batch)
    finally:
        src.erase()


def jvp(module: ir.Operation, fn: ir.Operation, name: str, wrt: list[int]) -> ir.Operation:
    ftype = function_type(fn)
    inputs = list(ftype.inputs)
    n = len(inputs)

    def bind(args):
        tangents = [None] * n
        for k, i in enumerate(wrt):
            tangents[i] = args[n + k]
        return args[:n], tangents

    def outputs(results, tangents, batch):
        return results + [materialize_tangent(t, r.type) for r, t in zip(results, tangents)]

    return _sweep(module, fn, name, inputs + [inputs[i] for i in wrt], bind, outputs)


# ----------------------------------------------------------------------------
# Bases and Jacobian blocks

class _Basis:
    """The identity of ``n`` basis vectors, built once per element type
    (``equal`` of two iotas, cast), and its column blocks."""

    def __init__(self, n: int):
        self.n = n
        self._eye: dict = {}

    def eye(self, elt: ir.Type) -> ir.Value:
        key = str(elt)
        if key not in self._eye:
            i64 = ir.IntegerType.get_signless(64)
            t = ir.RankedTensorType.get([self.n], i64)
            iota = arith.ConstantOp(t, ir.DenseElementsAttr.get(
                np.arange(self.n, dtype=np.int64), type=t)).result
            rows = rlx.reshape(iota, [self.n, 1])
            cols = rlx.reshape(iota, [1, self.n])
            self._eye[key] = rlx.astype(rlx.equal(rows, cols), elt)
        return self._eye[key]

    def block(self, offset: int, t: ir.Type) -> ir.Value:
        """Basis vectors restricted to a value of type ``t`` whose elements
        are numbers ``offset..offset+size``: shape ``[n] + shape``."""
        size = _size(t)
        e = self.eye(_elt(t))
        if offset != 0 or size != self.n:
            e = rlx.strided_slice(e, [1], [offset], [offset + size])
        return rlx.reshape(e, [self.n] + _shape(t))


def _offsets(types) -> list[int]:
    out, k = [], 0
    for t in types:
        out.append(k)
        k += _size(t)
    return out


def _columns(t, offset: int, arg_t, result_t) -> ir.Value:
    """From a result's batched tangent ``t`` ([n] + result shape) the
    Jacobian block of the argument numbered ``offset..``: result.shape +
    arg.shape."""
    rshape, ashape = _shape(result_t), _shape(arg_t)
    size, r = _size(arg_t), _size(result_t)
    if t is None:
        return rlx.zeros(rshape + ashape, _elt(result_t))
    n = ir.RankedTensorType(t.type).shape[0]
    if offset != 0 or size != n:
        t = rlx.strided_slice(t, [0], [offset], [offset + size])
    t = rlx.reshape(t, [size, r])
    return rlx.reshape(rlx.permute_dims(t, [1, 0]), rshape + ashape)


def _rows(t, offset: int, result_t, arg_t) -> ir.Value:
    """From an argument's batched tangent ([m] + arg shape, basis over
    result elements) the block of the result numbered ``offset..``."""
    rshape, ashape = _shape(result_t), _shape(arg_t)
    size = _size(result_t)
    if t is None:
        return rlx.zeros(rshape + ashape, _elt(result_t))
    m = ir.RankedTensorType(t.type).shape[0]
    if offset != 0 or size != m:
        t = rlx.strided_slice(t, [0], [offset], [offset + size])
    t = rlx.reshape(t, rshape + ashape)
    # a block has the result's element type, whichever way it was built
    return t if _elt(arg_t) == _elt(result_t) else rlx.astype(t, _elt(result_t))


def _refuse_tuples(fn, types, what: str) -> None:
    for t in types:
        if isinstance(t, ir.TupleType):
            raise GradientError(fn, f"rlx-gradient: mode=jacobian/hessian needs tensor {what}, "
                                    f"not {t} (return the tuple's fields)")


def _forward_columns(module, fn, name, wrt, select: Callable, n_keep: int):
    """The forward Jacobian of ``fn``: results[:n_keep] then, for each
    result picked by ``select(results)`` (pairs of (index, value type)) and
    each wrt argument, one block."""
    inputs = list(function_type(fn).inputs)
    wtypes = [inputs[i] for i in wrt]
    offs = _offsets(wtypes)
    n = sum(_size(t) for t in wtypes)
    basis = _Basis(n)

    def bind(args):
        tangents = [None] * len(inputs)
        for k, i in enumerate(wrt):
            tangents[i] = basis.block(offs[k], inputs[i])
        return args, tangents

    def outputs(results, tangents, batch):
        out = list(results[:n_keep])
        for r, rt in select(results):
            for k, i in enumerate(wrt):
                out.append(_columns(tangents[r], offs[k], inputs[i], rt))
        return out

    return _sweep(module, fn, name, inputs, bind, outputs, (n,))


def jacobian(module, fn, name, wrt, how: str, reverse: Callable) -> ir.Operation:
    ftype = function_type(fn)
    inputs, outs = list(ftype.inputs), list(ftype.results)
    _refuse_tuples(fn, [inputs[i] for i in wrt], "arguments")
    _refuse_tuples(fn, outs, "results")
    floats = [r for r, t in enumerate(outs) if is_float_type(t)]
    n_in = sum(_size(inputs[i]) for i in wrt)
    n_out = sum(_size(outs[r]) for r in floats)
    if how == "auto":
        how = "forward" if n_in <= n_out else "reverse"
    if how == "forward":
        return _forward_columns(module, fn, name, wrt,
                                lambda results: [(r, outs[r]) for r in floats], len(outs))
    vjp_fn = reverse(fn, "vjp", wrt)
    try:
        return _reverse_rows(module, vjp_fn, name, inputs, outs, floats, wrt)
    finally:
        vjp_fn.erase()


def _reverse_rows(module, vjp_fn, name, inputs, outs, floats, wrt):
    n, m = len(inputs), len(outs)
    offs = _offsets([outs[r] for r in floats])
    basis = _Basis(sum(_size(outs[r]) for r in floats))

    def bind(args):
        primals = list(args) + [rlx.zeros(_shape(t), _elt(t)) if is_float_type(t) else
                                materialize_tangent(None, t) for t in outs]
        tangents = [None] * (n + m)
        for k, r in enumerate(floats):
            tangents[n + r] = basis.block(offs[k], outs[r])
        return primals, tangents

    def outputs(results, tangents, batch):
        out = list(results[:m])
        for k, r in enumerate(floats):
            for j, i in enumerate(wrt):
                out.append(_rows(tangents[m + j], offs[k], outs[r], inputs[i]))
        return out

    return _sweep(module, vjp_fn, name, inputs, bind, outputs, (basis.n,))


def hvp(module, fn, name, wrt, reverse: Callable) -> ir.Operation:
    """Forward over reverse: the tangent of ``@fn_adjoint``'s gradients."""
    inputs = list(function_type(fn).inputs)
    n_res = len(function_type(fn).results)
    adj = reverse(fn, "adjoint", wrt)
    n = len(inputs)

    def bind(args):
        tangents = [None] * n
        for k, i in enumerate(wrt):
            tangents[i] = args[n + k]
        return args[:n], tangents

    def outputs(results, tangents, batch):
        return results[:n_res] + [materialize_tangent(t, r.type)
                                  for r, t in zip(results[n_res:], tangents[n_res:])]

    try:
        return _sweep(module, adj, name, inputs + [inputs[i] for i in wrt], bind, outputs)
    finally:
        adj.erase()


def hessian(module, fn, name, wrt, reverse: Callable) -> ir.Operation:
    inputs = list(function_type(fn).inputs)
    _refuse_tuples(fn, [inputs[i] for i in wrt], "arguments")
    n_res = len(function_type(fn).results)
    adj = reverse(fn, "adjoint", wrt)
    try:
        return _forward_columns(
            module, adj, name, wrt,
            lambda results: [(n_res + k, inputs[i]) for k, i in enumerate(wrt)], n_res)
    finally:
        adj.erase()

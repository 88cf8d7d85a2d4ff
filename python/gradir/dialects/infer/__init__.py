"""Type and shape inference for the rlx dialect: one function per op.

``INFER`` maps an op name (``"rlx.add"``) to ``fn(operands, attrs, results)``:

- ``operands``: the operand types (``ir.Type``; tensors or tuples);
- ``attrs``: the op's attributes as Python values (``attributes_of``):
  ``array<i64>`` -> ``list[int]``, ``BoolAttr`` -> ``bool``, integers ->
  ``int``, floats -> ``float``, strings -> ``str``;
- ``results``: the declared result types, or ``None``.  Only the ops whose
  result type carries information (``reshape``, ``broadcast_to``, ``zeros``,
  ``ones``, ``full``, ``astype``, ``collapse_sum_to``) need it; for them the
  builders pass the type they are about to create.

It returns the list of result types, or raises ``ShapeError`` with a message
(without the ``'rlx.<op>' op`` prefix, which the callers add).  The builders
(``gradir.dialects.rlx``) and the verifier (``rlx-verify``) share this table,
so what the builders create is exactly what the verifier accepts.

``ATTRS`` describes every attribute an op knows: name -> (kind, required).
Kinds: ``axes`` (array<i64>), ``ints`` (array<i64>), ``int`` (i64), ``bool``
(BoolAttr), ``float`` (f64), ``str``.  The IRDL file declares the required
ones; the verifier checks the kinds of all of them.

The inference functions live in one module per op group (``elementwise``,
``shape``, ``reduce``, ``nn``, ``create``, ``tuples``) over the shared
checks of ``common``; this module holds the tables.
"""

from __future__ import annotations

from typing import Callable

from ..ops import BINARY, COMPARE, REDUCE, UNARY
from ..util import ShapeError
from .attributes import KIND_SPELLING, _py_value, attribute_kind_ok, attributes_of, raw_attributes
from .common import (ALL_ELEMENT_TYPES, FLOAT_TYPES, INDEX_TYPES, broadcast_shapes,
                     element_type_name)
from .create import _astype, _create, _full, _like
from .elementwise import _binary, _compare, _matmul, _unary, _where
from .nn import (_conv2d, _conv2d_transpose, _cross_entropy, _layer_norm, _nll_loss, _pool,
                 _pool_backward, _pool_indices_backward, _pool_with_indices, _rms_norm,
                 _softmax)
from .reduce import _cumsum, _extremum, _reduce
from .shape import (_broadcast_to, _collapse_sum_to, _concat, _expand_dims, _flatten,
                    _permute_dims, _reshape, _split, _squeeze, _strided_slice, _take, _triu)
from .tuples import _marker, _tuple, _tuple_get_item

__all__ = ["ShapeError", "INFER", "ATTRS", "attributes_of", "raw_attributes", "FLOAT_TYPES",
           "INDEX_TYPES", "ALL_ELEMENT_TYPES", "broadcast_shapes", "element_type_name"]


INFER: dict[str, Callable] = {
    **{f"rlx.{n}": _unary for n in UNARY},
    **{f"rlx.{n}": _binary for n in BINARY},
    **{f"rlx.{n}": _compare for n in COMPARE},
    "rlx.where": _where,
    "rlx.matmul": _matmul,
    "rlx.permute_dims": _permute_dims,
    "rlx.reshape": _reshape,
    "rlx.broadcast_to": _broadcast_to,
    "rlx.expand_dims": _expand_dims,
    "rlx.squeeze": _squeeze,
    "rlx.flatten": _flatten,
    "rlx.concat": _concat,
    "rlx.split": _split,
    "rlx.strided_slice": _strided_slice,
    "rlx.take": _take,
    "rlx.triu": _triu,
    **{f"rlx.{n}": _reduce for n in REDUCE},
    "rlx.max": _extremum,
    "rlx.min": _extremum,
    "rlx.cumsum": _cumsum,
    "rlx.softmax": _softmax,
    "rlx.log_softmax": _softmax,
    "rlx.cross_entropy_with_logits": _cross_entropy,
    "rlx.nll_loss": _nll_loss,
    "rlx.conv2d": _conv2d,
    "rlx.max_pool2d": _pool,
    "rlx.avg_pool2d": _pool,
    "rlx.layer_norm": _layer_norm,
    "rlx.rms_norm": _rms_norm,
    "rlx.zeros": _create,
    "rlx.ones": _create,
    "rlx.full": _full,
    "rlx.zeros_like": _like,
    "rlx.ones_like": _like,
    "rlx.astype": _astype,
    "rlx.tuple": _tuple,
    "rlx.tuple_get_item": _tuple_get_item,
    "rlx.conv2d_transpose": _conv2d_transpose,
    "rlx.max_pool2d_backward": _pool_backward,
    "rlx.avg_pool2d_backward": _pool_backward,
    "rlx.collapse_sum_to": _collapse_sum_to,
    "rlx.max_pool2d_with_indices": _pool_with_indices,
    "rlx.max_pool2d_indices_backward": _pool_indices_backward,
    "grad.start_checkpoint": _marker,
    "grad.end_checkpoint": _marker,
    "grad.no_grad": _marker,
}

_REDUCE_ATTRS = {"axis": ("axes", False), "keepdims": ("bool", False)}
_POOL_ATTRS = {"pool_size": ("ints", True), "strides": ("ints", False),
               "padding": ("ints", False), "dilation": ("ints", False),
               "ceil_mode": ("bool", False)}
_CONV_ATTRS = {"strides": ("ints", False), "padding": ("ints", False),
               "dilation": ("ints", False), "groups": ("int", False)}

# name -> {attribute: (kind, required)}; ops not listed take no attributes.
ATTRS: dict[str, dict[str, tuple[str, bool]]] = {
    "rlx.permute_dims": {"axes": ("axes", False)},
    "rlx.expand_dims": {"axis": ("axes", True)},
    "rlx.squeeze": {"axis": ("axes", False)},
    "rlx.concat": {"axis": ("axes", False)},
    "rlx.split": {"axis": ("axes", False), "sections": ("int", False),
                  "indices": ("ints", False)},
    "rlx.strided_slice": {"axes": ("axes", True), "begin": ("ints", True),
                          "end": ("ints", True), "strides": ("ints", False)},
    "rlx.take": {"axis": ("axes", False)},
    "rlx.triu": {"k": ("int", False)},
    **{f"rlx.{n}": _REDUCE_ATTRS for n in REDUCE},
    "rlx.cumsum": {"axis": ("axes", False)},
    "rlx.softmax": {"axis": ("axes", False)},
    "rlx.log_softmax": {"axis": ("axes", False)},
    "rlx.nll_loss": {"reduction": ("str", False), "ignore_index": ("int", False)},
    "rlx.conv2d": _CONV_ATTRS,
    "rlx.conv2d_transpose": {**_CONV_ATTRS, "output_padding": ("ints", False)},
    "rlx.max_pool2d": _POOL_ATTRS,
    "rlx.avg_pool2d": {**_POOL_ATTRS, "count_include_pad": ("bool", False)},
    "rlx.max_pool2d_backward": _POOL_ATTRS,
    "rlx.avg_pool2d_backward": {**_POOL_ATTRS, "count_include_pad": ("bool", False)},
    "rlx.layer_norm": {"axes": ("axes", True), "epsilon": ("float", False)},
    "rlx.rms_norm": {"axes": ("axes", False), "epsilon": ("float", False)},
    "rlx.tuple_get_item": {"index": ("int", True)},
    "rlx.max_pool2d_with_indices": _POOL_ATTRS,
    "rlx.max_pool2d_indices_backward": _POOL_ATTRS,
}

# What an absent optional attribute means (DESIGN.md: Relax's defaults), for
# the dialect reference (gradir.dialects.reference); the inference functions
# (INFER), the interpreter, the VJP rules and the lowering each apply them.
_CONV_DEFAULTS = {"strides": "1, 1", "padding": "0, 0, 0, 0", "dilation": "1, 1",
                  "groups": "1"}
_POOL_DEFAULTS = {"strides": "1, 1", "padding": "0, 0, 0, 0", "dilation": "1, 1",
                  "ceil_mode": "false"}
DEFAULTS: dict[str, dict[str, str]] = {
    "rlx.permute_dims": {"axes": "reversed"},
    "rlx.squeeze": {"axis": "every size-1 axis"},
    "rlx.concat": {"axis": "0"},
    "rlx.split": {"axis": "0"},
    "rlx.strided_slice": {"strides": "1 per axis"},
    "rlx.take": {"axis": "the flattened input"},
    "rlx.triu": {"k": "0"},
    **{f"rlx.{n}": {"axis": "all axes", "keepdims": "false"} for n in REDUCE},
    "rlx.cumsum": {"axis": "the flattened input"},
    "rlx.softmax": {"axis": "-1"},
    "rlx.log_softmax": {"axis": "-1"},
    "rlx.nll_loss": {"reduction": '"mean"', "ignore_index": "none"},
    "rlx.conv2d": _CONV_DEFAULTS,
    "rlx.conv2d_transpose": {**_CONV_DEFAULTS, "output_padding": "0, 0"},
    "rlx.max_pool2d": _POOL_DEFAULTS,
    "rlx.avg_pool2d": {**_POOL_DEFAULTS, "count_include_pad": "false"},
    "rlx.max_pool2d_backward": _POOL_DEFAULTS,
    "rlx.avg_pool2d_backward": {**_POOL_DEFAULTS, "count_include_pad": "false"},
    "rlx.max_pool2d_with_indices": _POOL_DEFAULTS,
    "rlx.max_pool2d_indices_backward": _POOL_DEFAULTS,
    "rlx.layer_norm": {"epsilon": "1e-5"},
    "rlx.rms_norm": {"axes": "-1", "epsilon": "1e-5"},
}

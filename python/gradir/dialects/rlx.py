"""Python builders for the rlx dialect: one lowercase function per op.

Every builder creates its op generically (``ir.Operation.create``) at the
current insertion point and location (or ``ip=``/``loc=``), infers the result
type with ``gradir.dialects.infer.INFER`` and returns the result ``ir.Value``
(``split`` returns a list).  Bad operands raise ``ShapeError`` with an
``'rlx.<op>' op ...`` message, the same text ``rlx-verify`` reports.

Axes are Python ints or lists of ints (stored as ``array<i64: ...>``);
dtypes are ``ir.Type`` instances, ``ir.F32Type``-like classes or strings
(``"f32"``).  Names that shadow Python builtins (``abs``, ``sum``, ``max``,
``min``, ``tuple``) also exist with a trailing underscore.

    with ctx, ir.Location.unknown(), ir.InsertionPoint(block):
        y = rlx.matmul(x, w)                       # tensor<4x3xf32>
        s = rlx.sum(y, axis=[1], keepdims=True)    # tensor<4x1xf32>
"""

from __future__ import annotations

import builtins as _builtins
import contextlib as _contextlib
import math as _math
import threading as _threading
from typing import Sequence

from mlir import ir

from ..ir import MAX_RUNS, VARIADIC_OPS, TooManyRuns, segment_sizes
from .infer import ATTRS, INFER, ShapeError, _py_value, attributes_of
from .util import elt_of

__all__ = [
    "ShapeError", "INFER", "attributes_of", "infer_result_types", "build_op", "to_dtype",
    "inference_memo", "recording",
    "MAX_VARIADIC", "SEGMENTED", "segment_sizes",
    # unary
    "negative", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "abs", "abs_",
    "relu", "silu", "gelu", "erf", "square",
    # binary / compare / select / linalg
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where", "matmul",
    # shape
    "permute_dims", "reshape", "broadcast_to", "expand_dims", "squeeze", "flatten", "concat",
    "split", "strided_slice", "take", "triu",
    # reduce
    "sum", "sum_", "mean", "max", "max_", "min", "min_", "prod", "variance", "cumsum",
    # nn
    "softmax", "log_softmax", "cross_entropy_with_logits", "nll_loss", "conv2d", "max_pool2d",
    "avg_pool2d", "layer_norm", "rms_norm",
    # create / type / tuple
    "zeros", "ones", "full", "zeros_like", "ones_like", "astype", "tuple", "tuple_",
    "make_tuple", "tuple_get_item",
    # gradient helpers
    "conv2d_transpose", "max_pool2d_backward", "avg_pool2d_backward", "collapse_sum_to",
    "max_pool2d_with_indices", "max_pool2d_indices_backward",
]


# --- generic machinery -----------------------------------------------------

def to_dtype(dtype) -> ir.Type:
    """An element type from an ``ir.Type``, a type class (``ir.F32Type``) or
    a string (``"f32"``)."""
    if isinstance(dtype, ir.Type):
        return dtype
    if isinstance(dtype, type) and hasattr(dtype, "get"):
        return dtype.get()
    if isinstance(dtype, str):
        return ir.Type.parse(dtype)
    raise TypeError(f"not a dtype: {dtype!r}")


def _to_attr(op_name: str, name: str, value) -> ir.Attribute:
    if isinstance(value, ir.Attribute):
        return value
    kind = ATTRS.get(op_name, {}).get(name, (None,))[0]
    if kind in ("axes", "ints"):
        if isinstance(value, int):
            value = [value]
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])
    if kind == "bool" or isinstance(value, bool):
        return ir.BoolAttr.get(bool(value))
    if kind == "int" or isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if kind == "float" or isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), float(value))
    if kind == "str" or isinstance(value, str):
        return ir.StringAttr.get(value)
    raise TypeError(f"cannot make attribute '{name}' of {op_name} from {value!r}")


def _py_attr(op_name: str, name: str, value):
    kind = ATTRS.get(op_name, {}).get(name, (None,))[0]
    if kind in ("axes", "ints") and isinstance(value, int):
        return [value]
    if isinstance(value, ir.Attribute):
        return _py_value(value)
    if kind in ("axes", "ints"):
        return [int(v) for v in value]
    return value


# IRDL binds a variadic group to one type, so the variadic ops are declared
# with MAX_VARIADIC variadic groups (one per run of equal types) and carry a
# segment-size attribute (see dialect/rlx.irdl.mlir and gradir.ir).
MAX_VARIADIC = MAX_RUNS
SEGMENTED = {name: (key,) for name, key in VARIADIC_OPS.items()}


def infer_result_types(name: str, operand_types: Sequence[ir.Type], attrs: dict,
                       results: Sequence[ir.Type] | None = None) -> list[ir.Type]:
    """``INFER[name]`` with the ``'<name>' op `` prefix added to errors."""
    try:
        return INFER[name](list(operand_types), attrs, None if results is None else list(results))
    except ShapeError as err:
        raise ShapeError(f"'{name}' op {err}") from None


# The memo of ``build_op`` while an ``inference_memo()`` is open: (name,
# operand types, attributes, result type) -> (result types, MLIR attributes).
# Types and attributes are uniqued in their context, so equal keys build
# equal ops; a pass opens it for one run (the entries keep the context alive).
# Per thread (``memo``, ``record``): gradir.compile runs passes in threads
# at once (runtime/partition.py), and one thread closing its memo must not
# close another's.
_STATE = _threading.local()
_tuple = _builtins.tuple     # (``tuple`` is the rlx.tuple builder below)


@_contextlib.contextmanager
def inference_memo():
    """Within it, ``build_op`` infers the result types (and converts the
    attributes) of each distinct (op, operand types, attributes) once: a
    pass that builds thousands of alike ops (rlx-gradient) pays for type
    inference once per kind of op instead of per op."""
    outer = getattr(_STATE, "memo", None)
    if outer is None:
        _STATE.memo = {}
    try:
        yield
    finally:
        if outer is None:
            _STATE.memo = None


# While ``recording()`` is open: one ``(op, operands, result types, sorted
# (name, attribute) pairs)`` per op ``build_op`` creates with the memo on.


@_contextlib.contextmanager
def recording():
    """Yields a list that receives, for each op ``build_op`` creates (with
    an ``inference_memo()`` open), ``(op, operands, result types, sorted
    (name, attribute) pairs)``: what a reader of the block would otherwise
    fetch back from MLIR op by op (the simplifier's mirror takes it)."""
    outer = getattr(_STATE, "record", None)
    _STATE.record = []
    try:
        yield _STATE.record
    finally:
        _STATE.record = outer


def _frozen(attrs: dict):
    """A hashable form of builder attributes (None entries dropped; a
    value's type kept, so ``True`` and ``1`` differ)."""
    out = []
    for k, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, list):
            v = _tuple(v)
        out.append((k, type(v), v))
    return _tuple(out)


def build_op(name: str, operands: Sequence[ir.Value], attrs: dict | None = None,
             result: ir.Type | None = None, *, loc=None, ip=None) -> ir.Operation:
    """Creates op ``name`` (``"rlx.add"``) with inferred result types.

    ``attrs`` maps names to Python values (``None`` entries are dropped) or
    ``ir.Attribute``s; ``result`` is the result type for the ops whose
    result type carries the shape."""
    memo = getattr(_STATE, "memo", None)
    record = getattr(_STATE, "record", None)
    if memo is not None:
        try:
            key = (name, _tuple([v.type for v in operands]),
                   _frozen(attrs) if attrs else (), result)
            hit = memo.get(key)
        except TypeError:           # an unhashable attribute value
            key = hit = None
        if hit is not None:
            operands = list(operands)
            op = ir.Operation.create(name, results=hit[0], operands=operands,
                                     attributes=hit[1], loc=loc, ip=ip)
            if record is not None:
                record.append((op, operands, hit[0], hit[2]))
            return op
        op = _build_op(name, operands, attrs, result, loc, ip)
        if key is not None:
            attributes = op.attributes
            named = [attributes[i] for i in range(len(attributes))]
            pairs = _tuple(sorted((a.name, a.attr) for a in named))
            types = [r.type for r in op.results]
            memo[key] = (types, dict(pairs), pairs)
            if record is not None:
                record.append((op, list(operands), types, pairs))
        return op
    return _build_op(name, operands, attrs, result, loc, ip)


def _build_op(name, operands, attrs, result, loc, ip) -> ir.Operation:
    attrs = {k: v for k, v in (attrs or {}).items() if v is not None}
    py = {k: _py_attr(name, k, v) for k, v in attrs.items()}
    types = infer_result_types(name, [v.type for v in operands], py,
                               None if result is None else [result])
    mlir_attrs = {k: _to_attr(name, k, v) for k, v in attrs.items()}
    key = VARIADIC_OPS.get(name)
    if key is not None:
        values = [v.type for v in operands] if key.startswith("operand") else types
        try:
            mlir_attrs[key] = segment_sizes(values, name)
        except TooManyRuns as err:
            raise ShapeError(str(err)) from None
    return ir.Operation.create(name, results=types, operands=list(operands),
                               attributes=mlir_attrs, loc=loc, ip=ip)


def _one(name, operands, attrs=None, result=None, loc=None, ip=None) -> ir.Value:
    return build_op(name, operands, attrs, result, loc=loc, ip=ip).result


def _axes(axis):
    if axis is None:
        return None
    return [axis] if isinstance(axis, int) else list(axis)


# --- unary -----------------------------------------------------------------

def _unary(opname):
    def build(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
        return _one(f"rlx.{opname}", [x], loc=loc, ip=ip)
    build.__name__ = build.__qualname__ = opname.rstrip("_")
    build.__doc__ = f"``rlx.{opname}``: elementwise, same type as ``x``."
    return build


negative = _unary("negative")
exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
sin = _unary("sin")
cos = _unary("cos")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
abs_ = _unary("abs")
relu = _unary("relu")
silu = _unary("silu")
gelu = _unary("gelu")
erf = _unary("erf")
square = _unary("square")


# --- binary, compare, select, matmul ---------------------------------------

def _binary(opname):
    def build(lhs: ir.Value, rhs: ir.Value, *, loc=None, ip=None) -> ir.Value:
        return _one(f"rlx.{opname}", [lhs, rhs], loc=loc, ip=ip)
    build.__name__ = build.__qualname__ = opname
    build.__doc__ = f"``rlx.{opname}`` with numpy broadcasting."
    return build


add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")
divide = _binary("divide")
power = _binary("power")
maximum = _binary("maximum")
minimum = _binary("minimum")
equal = _binary("equal")
not_equal = _binary("not_equal")
less = _binary("less")
less_equal = _binary("less_equal")
greater = _binary("greater")
greater_equal = _binary("greater_equal")


def where(condition: ir.Value, lhs: ir.Value, rhs: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """``condition ? lhs : rhs``; the three broadcast together."""
    return _one("rlx.where", [condition, lhs, rhs], loc=loc, ip=ip)


def matmul(lhs: ir.Value, rhs: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """numpy ``matmul`` (1-D promotion, batch broadcasting)."""
    return _one("rlx.matmul", [lhs, rhs], loc=loc, ip=ip)


# --- shape -----------------------------------------------------------------

def permute_dims(x: ir.Value, axes: Sequence[int] | None = None, *, loc=None, ip=None) -> ir.Value:
    """Permutes the axes (``axes`` None = reversed, as Relax)."""
    return _one("rlx.permute_dims", [x], {"axes": _axes(axes)}, loc=loc, ip=ip)


def _resolve_shape(x: ir.Value, shape: Sequence[int]) -> list[int]:
    shape = [int(d) for d in shape]
    if shape.count(-1) == 1:
        known = _math.prod(d for d in shape if d != -1)
        total = _math.prod(x.type.shape)
        if known and total % known == 0:
            shape[shape.index(-1)] = total // known
    return shape


def reshape(x: ir.Value, shape: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    """Reshape to ``shape`` (one entry may be -1)."""
    t = ir.RankedTensorType.get(_resolve_shape(x, shape), elt_of(x))
    return _one("rlx.reshape", [x], result=t, loc=loc, ip=ip)


def broadcast_to(x: ir.Value, shape: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    """numpy broadcasting of ``x`` to ``shape``."""
    t = ir.RankedTensorType.get(list(shape), elt_of(x))
    return _one("rlx.broadcast_to", [x], result=t, loc=loc, ip=ip)


def collapse_sum_to(x: ir.Value, shape: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    """Sums the axes that broadcasting ``shape`` to ``x``'s shape expanded."""
    t = ir.RankedTensorType.get(list(shape), elt_of(x))
    return _one("rlx.collapse_sum_to", [x], result=t, loc=loc, ip=ip)


def expand_dims(x: ir.Value, axis, *, loc=None, ip=None) -> ir.Value:
    """Inserts size-1 axes at ``axis`` (positions in the result)."""
    return _one("rlx.expand_dims", [x], {"axis": _axes(axis)}, loc=loc, ip=ip)


def squeeze(x: ir.Value, axis=None, *, loc=None, ip=None) -> ir.Value:
    """Removes size-1 axes (``axis`` None = every size-1 axis)."""
    return _one("rlx.squeeze", [x], {"axis": _axes(axis)}, loc=loc, ip=ip)


def flatten(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """Flattens to a 1-D tensor (Relax; PyTorch keeps the batch axis)."""
    return _one("rlx.flatten", [x], loc=loc, ip=ip)


def concat(xs: Sequence[ir.Value], axis=0, *, loc=None, ip=None) -> ir.Value:
    """Joins ``xs`` (any number, shapes equal outside ``axis``) along ``axis`` (default 0)."""
    return _one("rlx.concat", list(xs), {"axis": _axes(axis)}, loc=loc, ip=ip)


def split(x: ir.Value, indices_or_sections, axis=0, *, loc=None, ip=None) -> list[ir.Value]:
    """Relax ``split``: an int splits into that many equal sections, a list
    splits at those indices.  Returns the list of results."""
    if isinstance(indices_or_sections, int):
        attrs = {"sections": indices_or_sections}
    else:
        attrs = {"indices": list(indices_or_sections)}
    attrs["axis"] = _axes(axis)
    return list(build_op("rlx.split", [x], attrs, loc=loc, ip=ip).results)


def strided_slice(x: ir.Value, axes: Sequence[int], begin: Sequence[int], end: Sequence[int],
                  strides: Sequence[int] | None = None, *, loc=None, ip=None) -> ir.Value:
    """Slices ``axes`` from ``begin`` to ``end`` (exclusive, Python semantics) by ``strides``
    (default 1)."""
    attrs = {"axes": list(axes), "begin": list(begin), "end": list(end),
             "strides": None if strides is None else list(strides)}
    return _one("rlx.strided_slice", [x], attrs, loc=loc, ip=ip)


def take(x: ir.Value, indices: ir.Value, axis=None, *, loc=None, ip=None) -> ir.Value:
    """numpy ``take`` of ``indices`` (i32/i64) along ``axis`` (None = flattened input)."""
    return _one("rlx.take", [x, indices], {"axis": _axes(axis)}, loc=loc, ip=ip)


def triu(x: ir.Value, k: int = 0, *, loc=None, ip=None) -> ir.Value:
    """Upper triangle of the last two axes, keeping diagonals >= ``k`` (default 0)."""
    return _one("rlx.triu", [x], {"k": int(k)}, loc=loc, ip=ip)


# --- reduce ----------------------------------------------------------------

def _reduce(opname):
    def build(x: ir.Value, axis=None, keepdims: bool = False, *, loc=None, ip=None) -> ir.Value:
        attrs = {"axis": _axes(axis), "keepdims": True if keepdims else None}
        return _one(f"rlx.{opname}", [x], attrs, loc=loc, ip=ip)
    build.__name__ = build.__qualname__ = opname
    build.__doc__ = f"``rlx.{opname}`` over ``axis`` (None = all axes)."
    return build


sum_ = _reduce("sum")
mean = _reduce("mean")
max_ = _reduce("max")
min_ = _reduce("min")
prod = _reduce("prod")
variance = _reduce("variance")


def cumsum(x: ir.Value, axis=None, *, loc=None, ip=None) -> ir.Value:
    """Inclusive cumulative sum (axis None = over the flattened input)."""
    return _one("rlx.cumsum", [x], {"axis": _axes(axis)}, loc=loc, ip=ip)


# --- nn --------------------------------------------------------------------

def softmax(x: ir.Value, axis=-1, *, loc=None, ip=None) -> ir.Value:
    """Softmax along ``axis`` (default: the last)."""
    return _one("rlx.softmax", [x], {"axis": _axes(axis)}, loc=loc, ip=ip)


def log_softmax(x: ir.Value, axis=-1, *, loc=None, ip=None) -> ir.Value:
    """Log-softmax along ``axis`` (default: the last)."""
    return _one("rlx.log_softmax", [x], {"axis": _axes(axis)}, loc=loc, ip=ip)


def cross_entropy_with_logits(predictions: ir.Value, labels: ir.Value, *, loc=None,
                              ip=None) -> ir.Value:
    """Relax ``cross_entropy_with_logits``: ``-sum(predictions * labels)``, divided by the
    batch size for 2-D inputs (no softmax inside, unlike PyTorch)."""
    return _one("rlx.cross_entropy_with_logits", [predictions, labels], loc=loc, ip=ip)


def nll_loss(predictions: ir.Value, targets: ir.Value, weights: ir.Value | None = None,
             reduction: str = "mean", ignore_index: int | None = None, *, loc=None,
             ip=None) -> ir.Value:
    """Negative log likelihood of ``targets`` (i32/i64) under ``predictions`` (log-
    probabilities); ``reduction`` "mean" (default), "sum" or "none"; optional ``weights``
    and ``ignore_index``."""
    operands = [predictions, targets] + ([] if weights is None else [weights])
    attrs = {"reduction": reduction, "ignore_index": ignore_index}
    return _one("rlx.nll_loss", operands, attrs, loc=loc, ip=ip)


def _pair(v, n=2):
    if v is None:
        return None
    if isinstance(v, int):
        return [v] * n
    return list(v)


def _padding(p):
    """Relax padding: int, (all), (h, w) or (top, left, bottom, right)."""
    p = _pair(p, 4)
    if len(p) == 1:
        return p * 4
    if len(p) == 2:
        return p * 2
    return p


def conv2d(data: ir.Value, weight: ir.Value, strides=(1, 1), padding=(0, 0, 0, 0),
           dilation=(1, 1), groups: int = 1, *, loc=None, ip=None) -> ir.Value:
    """NCHW / OIHW convolution; padding (top, left, bottom, right)."""
    attrs = {"strides": _pair(strides), "padding": _padding(padding),
             "dilation": _pair(dilation), "groups": int(groups)}
    return _one("rlx.conv2d", [data, weight], attrs, loc=loc, ip=ip)


def conv2d_transpose(data: ir.Value, weight: ir.Value, strides=(1, 1), padding=(0, 0, 0, 0),
                     dilation=(1, 1), groups: int = 1, output_padding=None, *, loc=None,
                     ip=None) -> ir.Value:
    """NCHW / IOHW transposed convolution (Relax ``conv2d_transpose``)."""
    attrs = {"strides": _pair(strides), "padding": _padding(padding),
             "dilation": _pair(dilation), "groups": int(groups),
             "output_padding": _pair(output_padding)}
    return _one("rlx.conv2d_transpose", [data, weight], attrs, loc=loc, ip=ip)


def _pool_attrs(pool_size, strides, padding, dilation, ceil_mode, count_include_pad=None):
    return {"pool_size": _pair(pool_size), "strides": _pair(strides),
            "padding": _padding(padding), "dilation": _pair(dilation),
            "ceil_mode": True if ceil_mode else None,
            "count_include_pad": True if count_include_pad else None}


def max_pool2d(data: ir.Value, pool_size=(1, 1), strides=(1, 1), padding=(0, 0, 0, 0),
               dilation=None, ceil_mode: bool = False, *, loc=None, ip=None) -> ir.Value:
    """NCHW max pooling; ``strides`` default 1 (Relax; PyTorch defaults to ``pool_size``),
    padding (top, left, bottom, right)."""
    attrs = _pool_attrs(pool_size, strides, padding, dilation, ceil_mode)
    return _one("rlx.max_pool2d", [data], attrs, loc=loc, ip=ip)


def avg_pool2d(data: ir.Value, pool_size=(1, 1), strides=(1, 1), padding=(0, 0, 0, 0),
               dilation=None, ceil_mode: bool = False, count_include_pad: bool = False, *,
               loc=None, ip=None) -> ir.Value:
    """NCHW average pooling; ``strides`` default 1 (Relax; PyTorch defaults to ``pool_size``),
    padding (top, left, bottom, right)."""
    attrs = _pool_attrs(pool_size, strides, padding, dilation, ceil_mode, count_include_pad)
    return _one("rlx.avg_pool2d", [data], attrs, loc=loc, ip=ip)


def max_pool2d_backward(output_grad: ir.Value, data: ir.Value, pool_size=(1, 1),
                        strides=(1, 1), padding=(0, 0, 0, 0), dilation=None,
                        ceil_mode: bool = False, *, loc=None, ip=None) -> ir.Value:
    """Gradient of ``max_pool2d``: routes ``output_grad`` to each window's arg-max in ``data``."""
    attrs = _pool_attrs(pool_size, strides, padding, dilation, ceil_mode)
    return _one("rlx.max_pool2d_backward", [output_grad, data], attrs, loc=loc, ip=ip)


def avg_pool2d_backward(output_grad: ir.Value, data: ir.Value, pool_size=(1, 1),
                        strides=(1, 1), padding=(0, 0, 0, 0), dilation=None,
                        ceil_mode: bool = False, count_include_pad: bool = False, *,
                        loc=None, ip=None) -> ir.Value:
    """Gradient of ``avg_pool2d``: spreads ``output_grad`` evenly over each window."""
    attrs = _pool_attrs(pool_size, strides, padding, dilation, ceil_mode, count_include_pad)
    return _one("rlx.avg_pool2d_backward", [output_grad, data], attrs, loc=loc, ip=ip)


def layer_norm(data: ir.Value, gamma: ir.Value, beta: ir.Value, axes=-1,
               epsilon: float = 1e-5, *, loc=None, ip=None) -> ir.Value:
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over ``axes`` (epsilon default 1e-5)."""
    attrs = {"axes": _axes(axes), "epsilon": float(epsilon)}
    return _one("rlx.layer_norm", [data, gamma, beta], attrs, loc=loc, ip=ip)


def rms_norm(data: ir.Value, weight: ir.Value, axes=None, epsilon: float | None = None, *,
             loc=None, ip=None) -> ir.Value:
    """``x / sqrt(mean(x^2) + epsilon) * weight`` over ``axes`` (default: the last; epsilon
    1e-5)."""
    attrs = {"axes": _axes(axes), "epsilon": None if epsilon is None else float(epsilon)}
    return _one("rlx.rms_norm", [data, weight], attrs, loc=loc, ip=ip)


# --- create, type, tuple ----------------------------------------------------

def zeros(shape: Sequence[int], dtype="f32", *, loc=None, ip=None) -> ir.Value:
    """A tensor of zeros of ``shape`` and ``dtype``."""
    t = ir.RankedTensorType.get(list(shape), to_dtype(dtype))
    return _one("rlx.zeros", [], result=t, loc=loc, ip=ip)


def ones(shape: Sequence[int], dtype="f32", *, loc=None, ip=None) -> ir.Value:
    """A tensor of ones of ``shape`` and ``dtype``."""
    t = ir.RankedTensorType.get(list(shape), to_dtype(dtype))
    return _one("rlx.ones", [], result=t, loc=loc, ip=ip)


def full(shape: Sequence[int], fill_value, dtype=None, *, loc=None, ip=None) -> ir.Value:
    """``fill_value`` is a 0-d tensor Value, or a Python number (materialised
    with ``arith.constant``, dtype default f32).  ``dtype`` defaults to the
    fill's element type."""
    if not isinstance(fill_value, ir.Value):
        from mlir.dialects import arith
        elt = to_dtype(dtype or "f32")
        t0 = ir.RankedTensorType.get([], elt)
        scalar = (ir.FloatAttr.get(elt, float(fill_value)) if str(elt).startswith(("f", "bf"))
                  else ir.IntegerAttr.get(elt, int(fill_value)))
        fill_value = arith.ConstantOp(t0, ir.DenseElementsAttr.get_splat(t0, scalar),
                                      loc=loc, ip=ip).result
    elt = to_dtype(dtype) if dtype is not None else elt_of(fill_value)
    t = ir.RankedTensorType.get(list(shape), elt)
    return _one("rlx.full", [fill_value], result=t, loc=loc, ip=ip)


def zeros_like(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """Zeros with ``x``'s type."""
    return _one("rlx.zeros_like", [x], loc=loc, ip=ip)


def ones_like(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """Ones with ``x``'s type."""
    return _one("rlx.ones_like", [x], loc=loc, ip=ip)


def astype(x: ir.Value, dtype, *, loc=None, ip=None) -> ir.Value:
    """Converts ``x``'s elements to ``dtype`` (same shape)."""
    t = ir.RankedTensorType.get(list(x.type.shape), to_dtype(dtype))
    return _one("rlx.astype", [x], result=t, loc=loc, ip=ip)


def tuple_(fields: Sequence[ir.Value], *, loc=None, ip=None) -> ir.Value:
    """Packs ``fields`` into a ``tuple<...>`` value."""
    return _one("rlx.tuple", list(fields), loc=loc, ip=ip)


make_tuple = tuple_


def tuple_get_item(t: ir.Value, index: int, *, loc=None, ip=None) -> ir.Value:
    """Field ``index`` of a tuple value."""
    return _one("rlx.tuple_get_item", [t], {"index": int(index)}, loc=loc, ip=ip)



def max_pool2d_with_indices(data: ir.Value, pool_size=(1, 1), strides=(1, 1),
                            padding=(0, 0, 0, 0), dilation=None, ceil_mode: bool = False, *,
                            loc=None, ip=None) -> list[ir.Value]:
    """``max_pool2d`` and each window's arg-max (i32, row-major ``ky * KW + kx``
    of its first maximum): ``[output, indices]``."""
    attrs = _pool_attrs(pool_size, strides, padding, dilation, ceil_mode)
    return list(build_op("rlx.max_pool2d_with_indices", [data], attrs, loc=loc,
                         ip=ip).results)


def max_pool2d_indices_backward(output_grad: ir.Value, indices: ir.Value, data_type: ir.Type,
                                pool_size=(1, 1), strides=(1, 1), padding=(0, 0, 0, 0),
                                dilation=None, ceil_mode: bool = False, *, loc=None,
                                ip=None) -> ir.Value:
    """``max_pool2d_backward`` from ``max_pool2d_with_indices``'s ``indices``;
    ``data_type``: the pooled input's type (the result's)."""
    attrs = _pool_attrs(pool_size, strides, padding, dilation, ceil_mode)
    return _one("rlx.max_pool2d_indices_backward", [output_grad, indices], attrs,
                result=data_type, loc=loc, ip=ip)

# Names that shadow builtins; defined last so the module body above uses
# the builtins.
abs = abs_  # noqa: A001
sum = sum_  # noqa: A001
max = max_  # noqa: A001
min = min_  # noqa: A001
tuple = tuple_  # noqa: A001

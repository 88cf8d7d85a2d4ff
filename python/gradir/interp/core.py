"""The interpreter's core: value/type conversion, the op registry, and the
evaluation of ``func.func`` bodies.

Values are numpy arrays (tensors, also 0-d ones) and Python tuples (values of
builtin ``tuple<...>`` type).  Every op result is checked against the type the
IR declares for it: a shape mismatch is an error (the interpreter is the
oracle, so it never papers over a wrong result type), a dtype of the same kind
(float/int/bool) is cast to the declared one.

bf16 has no numpy dtype: bf16 tensors are float32 arrays, computed in float32
and rounded to bf16 precision (round to nearest even) after every op.
"""

from __future__ import annotations

import os
import re
from collections import ChainMap
from typing import Callable

import numpy as np
from mlir import ir

from .. import _compat

__all__ = ["InterpreterError", "interpret", "register", "supported_ops", "OpCtx",
           "np_dtype"]


class InterpreterError(Exception):
    """Raised for anything the interpreter cannot evaluate: unknown ops, bad
    arguments, results that do not match their declared type."""


# name -> impl(ctx: OpCtx, *operand_values) -> value (one result) or a
# sequence of values (any other number of results).
_OPS: dict[str, Callable] = {}


def register(*names: str):
    """Decorator: registers ``fn`` as the evaluation rule of ``names``."""

    def deco(fn):
        for name in names:
            if name in _OPS:
                raise RuntimeError(f"interpreter rule for {name} registered twice")
            _OPS[name] = fn
        return fn

    return deco


def supported_ops() -> list[str]:
    """Names of every op the interpreter evaluates."""
    return sorted(_OPS)


# ----------------------------------------------------------------------------
# Types

def np_dtype(elem: ir.Type) -> np.dtype:
    """numpy dtype that represents MLIR element type ``elem`` (bf16 -> float32)."""
    if isinstance(elem, ir.F32Type):
        return np.dtype(np.float32)
    if isinstance(elem, ir.F64Type):
        return np.dtype(np.float64)
    if isinstance(elem, ir.F16Type):
        return np.dtype(np.float16)
    if isinstance(elem, ir.BF16Type):
        return np.dtype(np.float32)
    if isinstance(elem, ir.IntegerType):
        w = elem.width
        if w == 1:
            return np.dtype(np.bool_)
        if w not in (8, 16, 32, 64):
            raise InterpreterError(f"unsupported integer width in {elem}")
        return np.dtype(f"{'u' if elem.is_unsigned else 'i'}{w // 8}")
    if isinstance(elem, ir.IndexType):
        return np.dtype(np.int64)
    raise InterpreterError(f"unsupported element type {elem}")


def _is_bf16(t: ir.Type) -> bool:
    if isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType)):
        t = t.element_type
    return isinstance(t, ir.BF16Type)


def _round_bf16(a: np.ndarray) -> np.ndarray:
    """Rounds float32 values to the nearest bf16 (ties to even); NaN stays NaN."""
    shape = np.shape(a)     # (ascontiguousarray makes a 0-d value 1-d)
    f = np.ascontiguousarray(a, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = bits.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f), f, out).reshape(shape)


def _kind(dt: np.dtype) -> str:
    return {"f": "float", "i": "int", "u": "int", "b": "bool"}.get(dt.kind, dt.kind)


def type_shape(t: ir.Type):
    """Static shape of a ranked tensor type (None for a dynamic dim)."""
    dyn = ir.ShapedType.get_dynamic_size()
    return tuple(None if d == dyn else d for d in ir.RankedTensorType(t).shape)


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array of shape {v.shape} and dtype {v.dtype}"
    if isinstance(v, tuple):
        return f"tuple of {len(v)} values"
    return f"{type(v).__name__} {v!r}"[:120]


def _check_value(v, t: ir.Type, what: str):
    """Checks a caller-supplied value ``v`` against type ``t``; returns it as
    the interpreter's representation.  Raises InterpreterError naming ``what``."""
    if isinstance(t, ir.TupleType):
        if not isinstance(v, (tuple, list)) or len(v) != t.num_types:
            raise InterpreterError(
                f"{what}: expected a tuple of {t.num_types} values for {t}, got {_describe(v)}")
        return tuple(_check_value(x, t.get_type(i), f"{what}[{i}]") for i, x in enumerate(v))
    if isinstance(v, np.generic):
        v = np.asarray(v)
    if not isinstance(v, np.ndarray):
        raise InterpreterError(f"{what}: expected a numpy array for {t}, got {_describe(v)}")
    if isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType)):
        elem = t.element_type
    else:
        elem = t
    want = np_dtype(elem)
    if _is_bf16(elem) and v.dtype.name == "bfloat16":  # ml_dtypes arrays
        v = v.astype(np.float32)
    if v.dtype != want:
        extra = " (bf16 tensors are passed as float32 arrays)" if _is_bf16(elem) else ""
        raise InterpreterError(
            f"{what}: expected dtype {want} for {t}{extra}, got {_describe(v)}")
    if isinstance(t, ir.RankedTensorType):
        shape = type_shape(t)
        if len(shape) != v.ndim or any(s is not None and s != d for s, d in zip(shape, v.shape)):
            raise InterpreterError(
                f"{what}: expected shape {shape} for {t}, got {_describe(v)}")
    elif not isinstance(t, ir.UnrankedTensorType) and v.ndim != 0:
        raise InterpreterError(f"{what}: expected a 0-d array for scalar type {t}, "
                               f"got {_describe(v)}")
    if _is_bf16(elem):
        v = _round_bf16(v)
    return v


def _conform(v, t: ir.Type, what: str):
    """Checks an op's result ``v`` against its declared type ``t``; casts
    within a dtype kind (e.g. float64 -> float32), rejects everything else."""
    if isinstance(t, ir.TupleType):
        if not isinstance(v, (tuple, list)) or len(v) != t.num_types:
            raise InterpreterError(f"{what}: computed {_describe(v)}, but the type is {t}")
        return tuple(_conform(x, t.get_type(i), f"{what}[{i}]") for i, x in enumerate(v))
    if isinstance(v, (np.generic, bool, int, float)):
        v = np.asarray(v)
    if not isinstance(v, np.ndarray):
        raise InterpreterError(f"{what}: computed {_describe(v)}, but the type is {t}")
    elem = t.element_type if isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType)) else t
    want = np_dtype(elem)
    if isinstance(t, ir.RankedTensorType):
        shape = type_shape(t)
        if len(shape) != v.ndim or any(s is not None and s != d for s, d in zip(shape, v.shape)):
            raise InterpreterError(
                f"{what}: computed shape {v.shape}, but the declared type is {t}")
    elif not isinstance(t, ir.UnrankedTensorType) and v.ndim != 0:
        raise InterpreterError(f"{what}: computed shape {v.shape}, but the type is {t}")
    if v.dtype != want:
        if _kind(v.dtype) != _kind(want):
            raise InterpreterError(
                f"{what}: computed a {v.dtype} value, but the declared type is {t}")
        v = v.astype(want)
    if _is_bf16(elem):
        v = _round_bf16(v)
    return v


# ----------------------------------------------------------------------------
# Op context handed to every rule

class OpCtx:
    """An op being evaluated: attribute readers, result types, errors."""

    def __init__(self, op: ir.Operation, interp: "Interpreter"):
        self.op = op
        self.env = None     # the values visible at the op (region ops read their bodies' captures)
        self.interp = interp
        self.name = op.name

    # -- diagnostics
    @property
    def loc(self) -> str:
        return _compat.format_location(self.op.location)

    def error(self, msg: str) -> InterpreterError:
        return InterpreterError(f"{self.loc}: '{self.name}': {msg}")

    # -- attributes
    def has(self, name: str) -> bool:
        return name in self.op.attributes

    def _attr(self, name):
        return self.op.attributes[name]

    def ints(self, name: str, default=None):
        """``array<i64: ...>`` (or a single integer attribute) as a list."""
        if not self.has(name):
            return None if default is None else list(default)
        a = self._attr(name)
        if isinstance(a, ir.DenseI64ArrayAttr) or isinstance(a, ir.DenseI32ArrayAttr):
            return [int(x) for x in a]
        if isinstance(a, ir.IntegerAttr):
            return [int(a.value)]
        if isinstance(a, ir.ArrayAttr):
            return [int(ir.IntegerAttr(x).value) for x in a]
        if isinstance(a, ir.DenseIntElementsAttr):
            return [int(x) for x in np.array(a).reshape(-1)]
        raise self.error(f"attribute '{name}' must be array<i64: ...>, got {a}")

    def int(self, name: str, default=None):
        if not self.has(name):
            if default is None:
                raise self.error(f"missing integer attribute '{name}'")
            return default
        a = self._attr(name)
        if isinstance(a, ir.BoolAttr):
            return int(a.value)
        if isinstance(a, ir.IntegerAttr):
            return int(a.value)
        if isinstance(a, (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr)) and len(a) == 1:
            return int(a[0])
        raise self.error(f"attribute '{name}' must be an integer, got {a}")

    def float(self, name: str, default=None):
        if not self.has(name):
            if default is None:
                raise self.error(f"missing float attribute '{name}'")
            return default
        a = self._attr(name)
        if isinstance(a, ir.FloatAttr):
            return float(a.value)
        if isinstance(a, ir.IntegerAttr):
            return float(a.value)
        raise self.error(f"attribute '{name}' must be a float, got {a}")

    def bool(self, name: str, default: bool = False) -> bool:
        if not self.has(name):
            return default
        a = self._attr(name)
        if isinstance(a, ir.BoolAttr):
            return bool(a.value)
        if isinstance(a, ir.IntegerAttr):
            return bool(a.value)
        raise self.error(f"attribute '{name}' must be a BoolAttr, got {a}")

    def str(self, name: str, default=None):
        if not self.has(name):
            if default is None:
                raise self.error(f"missing string attribute '{name}'")
            return default
        a = self._attr(name)
        if isinstance(a, ir.StringAttr):
            return a.value
        raise self.error(f"attribute '{name}' must be a string, got {a}")

    # -- results
    @property
    def num_results(self) -> int:
        return len(self.op.results)

    def result_type(self, i: int = 0) -> ir.Type:
        return self.op.results[i].type

    def result_shape(self, i: int = 0) -> tuple:
        t = self.result_type(i)
        if not isinstance(t, ir.RankedTensorType):
            raise self.error(f"result #{i} must be a ranked tensor, got {t}")
        shape = type_shape(t)
        if any(d is None for d in shape):
            raise self.error(f"result #{i} must have a static shape, got {t}")
        return shape

    def result_dtype(self, i: int = 0) -> np.dtype:
        t = self.result_type(i)
        elem = t.element_type if isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType)) else t
        return np_dtype(elem)


# ----------------------------------------------------------------------------
# Functions

# Ops that end a block: their operands are the block's values.
_TERMINATORS = frozenset({"func.return", "scf.yield", "scf.condition"})


class Interpreter:
    """Evaluates the functions of one module."""

    MAX_DEPTH = 200

    def __init__(self, module):
        op = module.operation if hasattr(module, "operation") else module
        if isinstance(op, ir.Module):
            op = op.operation
        self.module = op
        self.funcs: dict[str, ir.Operation] = {}
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    if child.name == "func.func":
                        sym = ir.StringAttr(child.attributes["sym_name"]).value
                        self.funcs[sym] = child
        if op.name == "func.func":  # a lone function
            sym = ir.StringAttr(op.attributes["sym_name"]).value
            self.funcs[sym] = op
        self.depth = 0

    def resource_blob(self, key: str) -> bytes | None:
        """The data of the module's ``dense_resource`` blob ``key``, or None
        (read once: ``_compat.resource_blobs``)."""
        blobs = getattr(self, "_blobs", None)
        if blobs is None:
            from .. import _compat
            blobs = self._blobs = _compat.resource_blobs(self.module)
        return blobs.get(key)

    def lookup(self, name: str) -> ir.Operation:
        if name not in self.funcs:
            known = ", ".join("@" + n for n in sorted(self.funcs)) or "none"
            raise InterpreterError(f"no function @{name} in the module (functions: {known})")
        return self.funcs[name]

    def call(self, name: str, args, where: str | None = None) -> tuple:
        func = self.lookup(name)
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs, results = list(ftype.inputs), list(ftype.results)
        prefix = f"{where}: " if where else ""
        if len(args) != len(inputs):
            raise InterpreterError(f"{prefix}@{name} takes {len(inputs)} argument(s), "
                                   f"got {len(args)}")
        if not func.regions or not func.regions[0].blocks:
            raise InterpreterError(f"{prefix}@{name} is a declaration without a body")
        if len(func.regions[0].blocks) != 1:
            raise InterpreterError(f"{prefix}@{name}: only single-block functions "
                                   "are supported")
        checked = [_check_value(a, t, f"{prefix}@{name} argument #{i}")
                   for i, (a, t) in enumerate(zip(args, inputs))]
        self.depth += 1
        if self.depth > self.MAX_DEPTH:
            self.depth = 0
            raise InterpreterError(f"{prefix}@{name}: call depth exceeds {self.MAX_DEPTH}")
        try:
            outs = self._run_block(func.regions[0].blocks[0], checked)
        finally:
            self.depth -= 1
        if len(outs) != len(results):
            raise InterpreterError(f"@{name} returned {len(outs)} value(s), its type "
                                   f"declares {len(results)}")
        return tuple(_conform(v, t, f"@{name} result #{i}")
                     for i, (v, t) in enumerate(zip(outs, results)))

    def run_region_block(self, block, args, outer) -> list:
        """Runs a nested block (an ``scf`` body) that sees ``outer``'s values;
        returns its terminator's operand values."""
        return self._run_block(block, args, outer)

    def _run_block(self, block, args, outer=None):
        env = {} if outer is None else ChainMap({}, outer)
        for barg, val in zip(block.arguments, args):
            env[barg] = val
        for op in block.operations:
            op = op.operation
            name = op.name
            ctx = OpCtx(op, self)
            ctx.env = env
            try:
                ins = [env[v] for v in op.operands]
            except KeyError:
                raise ctx.error("uses a value defined outside the function body") from None
            if name in _TERMINATORS:
                return ins
            if op.regions and len(op.regions) and name not in _OPS:
                raise ctx.error("ops with regions are not supported by the interpreter")
            impl = _OPS.get(name)
            if impl is None:
                raise InterpreterError(f"{ctx.loc}: no interpreter rule for op '{name}'")
            for res in op.results:
                too_big = _too_big(res.type)
                if too_big:
                    raise ctx.error(too_big)
            try:
                out = impl(ctx, *ins)
            except InterpreterError:
                raise
            except Exception as exc:  # numpy errors, bad indices, ...
                raise ctx.error(f"{type(exc).__name__}: {exc}") from exc
            n = len(op.results)
            if n == 1:
                out = [out]
            else:
                out = list(out)
                if len(out) != n:
                    raise ctx.error(f"computed {len(out)} results, the op has {n}")
            for i, (res, val) in enumerate(zip(op.results, out)):
                env[res] = _conform(val, res.type, f"{ctx.loc}: '{name}' result #{i}")
        raise InterpreterError("block has no terminator (func.return / scf.yield)")


_SIZE_PROBLEMS: dict = {}


def _memory_bytes() -> int:
    """RAM + swap of this machine (what a numpy array can ever take)."""
    total = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(("MemTotal:", "SwapTotal:")):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if not total:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, AttributeError):
            total = 1 << 62
    return total


def _too_big(t: ir.Type) -> str | None:
    """Why a value of type ``t`` cannot be computed here (more bytes than
    RAM + swap: numpy would fail, or a broadcast view of 10^15 elements be
    summed for days), or None."""
    if t in _SIZE_PROBLEMS:
        return _SIZE_PROBLEMS[t]
    problem = None
    if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
        n = 1
        for d in t.shape:
            n *= d
        width = 8                                # (index, complex: 8 bytes)
        for cls in (ir.IntegerType, ir.FloatType):
            if isinstance(t.element_type, cls):
                width = max(1, cls(t.element_type).width // 8)
        need = n * width
        if need > _MEMORY[0]:
            problem = (f"a result of type {t} needs {need / 2**30:.1f} GiB, more than this "
                       f"machine's memory ({_MEMORY[0] / 2**30:.1f} GiB with swap)")
    _SIZE_PROBLEMS[t] = problem
    return problem


_MEMORY = [_memory_bytes()]


def interpret(module, fn: str, *args) -> tuple:
    """Runs function ``@fn`` of ``module`` on numpy ``args``.

    ``module`` is a builtin.ModuleOp, an ``mlir.ir.Module`` or an Operation.
    Returns a tuple with one value per function result: numpy arrays, and
    nested tuples for ``tuple<...>`` results.  Raises InterpreterError."""
    interp = Interpreter(module)
    with np.errstate(all="ignore"):
        outs = interp.call(fn, list(args))
    return _copy_out(outs)


def _copy_out(v):
    if isinstance(v, tuple):
        return tuple(_copy_out(x) for x in v)
    return np.array(v, copy=True)


# ----------------------------------------------------------------------------
# Helpers shared by the rule modules

def parse_bf16_dense(attr) -> np.ndarray:
    """Values of a non-splat bf16 dense attribute (the bindings expose no
    buffer for bf16), read from its textual form."""
    text = str(attr)
    body = text[text.index("dense<") + 6:text.rindex(">", 0, text.rindex(" : "))]
    shape = type_shape(ir.DenseElementsAttr(attr).type)
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
    else:
        toks = re.findall(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d+\.?\d*(?:[eE][-+]?\d+)?)", body)
        vals = []
        for tok in toks:
            if tok.startswith("0x"):
                vals.append(np.array([int(tok, 16) << 16], dtype=np.uint32).view(np.float32)[0])
            else:
                vals.append(np.float32(float(tok)))
        arr = np.array(vals, dtype=np.float32)
        return np.broadcast_to(arr, shape).copy() if arr.size == 1 else arr.reshape(shape)
    arr = bits.view(np.float32)
    return np.broadcast_to(arr, shape).copy() if arr.size == 1 else arr.reshape(shape)

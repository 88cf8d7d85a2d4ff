"""Shared helpers of the interpreter's lit tests (not a test itself)."""

import os
import re

import numpy as np
from mlir import ir

from gradir.ir import parse as _gradir_parse
from gradir.interp import interpret, InterpreterError  # noqa: F401

rng = np.random.default_rng(0)


def parse(text, source_name="<test>"):
    """gradir.ir.parse (the dialects verify the IR).  Debug aid only:
    GRADIR_INTERP_UNREGISTERED=1 parses without the dialects (generic ops
    unverified), to exercise the interpreter while the dialect is in flux."""
    if os.environ.get("GRADIR_INTERP_UNREGISTERED"):
        ctx = ir.Context()
        ctx.allow_unregistered_dialects = True
        return ir.Module.parse(text, ctx)
    return _gradir_parse(text, source_name=source_name)

_NAMES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
          np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
          np.dtype(np.int64): "i64", np.dtype(np.bool_): "i1"}

FLOATS = (np.float32, np.float64)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", "..", ".."))
_SLOTS = None


def _dialect_slots():
    """op name -> (operand kinds, result kinds) from dialect/*.irdl.mlir, each
    kind "single", "optional" or "variadic"."""
    global _SLOTS
    if _SLOTS is None:
        _SLOTS = {}
        for d in ("rlx", "grad"):
            with open(os.path.join(_ROOT, "dialect", f"{d}.irdl.mlir")) as f:
                text = f.read()
            for m in re.finditer(r"irdl\.operation @(\w+) \{(.*?)\n  \}", text, re.S):
                body = m.group(2)

                def kinds(what):
                    mm = re.search(rf"irdl\.{what}\((.*?)\)(?:\n|$)", body)
                    if not mm or not mm.group(1).strip():
                        return []
                    return [("optional" if "optional" in slot else
                             "variadic" if "variadic" in slot else "single")
                            for slot in mm.group(1).split(",")]

                _SLOTS[f"{d}.{m.group(1)}"] = (kinds("operands"), kinds("results"))
    return _SLOTS


def _segments(kinds, n):
    sizes = []
    left = n - sum(1 for k in kinds if k == "single")
    variadic = [k for k in kinds if k == "variadic"]
    for k in kinds:
        if k == "single":
            sizes.append(1)
        elif k == "optional":
            sizes.append(1 if left > 0 else 0)
            left -= sizes[-1]
        else:
            sizes.append(left if len(variadic) == 1 else 0)
    return sizes


def segment_attrs(op, n_operands, n_results):
    """The operandSegmentSizes / resultSegmentSizes attributes the dialect
    requires for ``op`` with that many operands/results ("" if none)."""
    ins, outs = _dialect_slots().get(op, ([], []))
    attrs = []
    for kinds, n, name in ((ins, n_operands, "operandSegmentSizes"),
                           (outs, n_results, "resultSegmentSizes")):
        if sum(1 for k in kinds if k != "single") > 1:
            attrs.append(f"{name} = array<i32: {', '.join(map(str, _segments(kinds, n)))}>")
    return ", ".join(attrs)


def ttype(shape, dtype):
    """MLIR tensor type text, e.g. tensor<2x3xf32>."""
    name = dtype if isinstance(dtype, str) else _NAMES[np.dtype(dtype)]
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{name}>"


def op_module(op, in_types, out_types, attrs=""):
    """A @main with one ``op`` applied to all arguments, returning all results."""
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(in_types))
    operands = ", ".join(f"%a{i}" for i in range(len(in_types)))
    n = len(out_types)
    res = "%r" if n == 1 else f"%r:{n}"
    uses = "%r" if n == 1 else ", ".join(f"%r#{i}" for i in range(n))
    seg = segment_attrs(op, len(in_types), n)
    attrs = ", ".join(a for a in (attrs, seg) if a)
    attr = f" {{{attrs}}}" if attrs else ""
    outs = ", ".join(out_types)
    text = (f"func.func @main({args}) -> ({outs}) {{\n"
            f"  {res} = \"{op}\"({operands}){attr} : ({', '.join(in_types)}) -> ({outs})\n"
            f"  return {uses} : {outs}\n"
            f"}}\n")
    return parse(text, source_name=op)


def run_op(op, inputs, out_types, attrs=""):
    """Runs ``op`` on numpy ``inputs``; ``out_types`` are type strings or
    (shape, dtype) pairs.  Returns the result tuple."""
    in_types = [ttype(x.shape, x.dtype) for x in inputs]
    out_types = [t if isinstance(t, str) else ttype(*t) for t in out_types]
    return interpret(op_module(op, in_types, out_types, attrs), "main", *inputs)


def tol(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return dict(rtol=1e-10, atol=1e-12)
    if dtype == np.float16:
        return dict(rtol=2e-3, atol=2e-3)
    return dict(rtol=2e-5, atol=2e-6)


def check(got, want, dtype, **kw):
    """``got`` has dtype ``dtype``, the shape of ``want`` and its values."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        t = tol(dtype)
        t.update(kw)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), **t)


def rand(shape, dtype=np.float32, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(dtype)

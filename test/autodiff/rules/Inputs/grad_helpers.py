"""Shared helpers of the VJP-rule lit tests (not a test itself).

``check_op(op_text, args, result_shape)`` writes @main as IR text:

    func.func @main(%a0: T0, ..., %w: TR) -> tensor<f64> {
      %y = <op_text> : (T0, ...) -> TR
      %p = "rlx.multiply"(%y, %w) ...      // a distinct random weight per element
      %s = "rlx.sum"(%p) ...
      return %s
    }

and checks rlx-gradient's @main_adjoint against central finite differences
(gradir.testing.check_gradient) with respect to the op's float operands.
"""

import numpy as np

from gradir import parse, run_pipeline
from gradir.testing import check_gradient, check_jacobian, check_jvp, gradient_module

rng = np.random.default_rng(1234)

_NAMES = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32",
          np.dtype(np.int64): "i64", np.dtype(np.int32): "i32", np.dtype(np.bool_): "i1"}


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def ttype(shape, dtype=np.float64):
    return "tensor<" + "".join(f"{d}x" for d in shape) + _NAMES[np.dtype(dtype)] + ">"


def arr(v):
    return "array<i64: " + ", ".join(str(int(x)) for x in v) + ">"


def seg(n):
    """``array<i32: 1 x n, 0 ...>`` (concat/split segment sizes, 16 slots)."""
    return "array<i32: " + ", ".join(["1"] * n + ["0"] * (16 - n)) + ">"


def rand(shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float64)


def main_text(op_text, args, result_shape, in_types=None):
    """@main applying ``op_text`` (operands %a0, %a1, ...) and reducing the
    result against a weight argument to a 0-d target."""
    n = len(args)
    sig = ", ".join(f"%a{i}: {ttype(np.shape(a), np.asarray(a).dtype)}" for i, a in enumerate(args))
    if in_types is None:  # one operand per argument, in order
        in_types = ", ".join(ttype(np.shape(a), np.asarray(a).dtype) for a in args)
    tr = ttype(result_shape)
    return f"""
func.func @main({sig}, %w: {tr}) -> tensor<f64> {{
  %y = {op_text} : ({in_types}) -> {tr}
  %p = "rlx.multiply"(%y, %w) : ({tr}, {tr}) -> {tr}
  %s = "rlx.sum"(%p) : ({tr}) -> tensor<f64>
  return %s : tensor<f64>
}}
""", n


def check_op(op_text, args, result_shape, wrt=None, in_types=None, **kw):
    """Checks the gradient of ``op_text`` w.r.t. its float operands
    (or ``wrt``) through a random weighting of its result."""
    text, n = main_text(op_text, args, result_shape, in_types)
    args = [np.asarray(a) for a in args]
    w = rand(tuple(result_shape), 0.5, 1.5)
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.floating)]
    verify_adjoint(text, wrt)
    return check_gradient(text, args + [w], wrt=wrt, **kw)


def check_text(text, args, wrt=None, **kw):
    verify_adjoint(text, wrt)
    return check_gradient(text, [np.asarray(a) for a in args], wrt=wrt, **kw)


def verify_adjoint(text, wrt):
    """The generated @main_adjoint passes the MLIR verifier and rlx-verify,
    and its printed form parses back."""
    opts = {} if wrt is None else {"wrt": list(wrt)}
    module = gradient_module(text, **opts)
    op = module.operation if hasattr(module, "operation") else module
    assert op.verify()
    run_pipeline(module, "builtin.module(rlx-verify)")
    parse(str(module))


def op_text(op_text, args, result_shape, in_types=None):
    """@main applying ``op_text`` (operands %a0, %a1, ...) and returning its
    result (forward mode checks every result's tangent)."""
    sig = ", ".join(f"%a{i}: {ttype(np.shape(a), np.asarray(a).dtype)}" for i, a in enumerate(args))
    if in_types is None:
        in_types = ", ".join(ttype(np.shape(a), np.asarray(a).dtype) for a in args)
    tr = ttype(result_shape)
    return f"""
func.func @main({sig}) -> {tr} {{
  %y = {op_text} : ({in_types}) -> {tr}
  return %y : {tr}
}}
"""


def check_op_jvp(op_text_, args, result_shape, wrt=None, in_types=None, jacobian=True, **kw):
    """Checks the JVP rule of ``op_text_`` against directional differences
    (``mode=jvp``) and, batched, against the finite-difference Jacobian
    (``mode=jacobian`` from forward columns, which push a batch of basis
    vectors through the rule at once; ``auto`` would take reverse rows when
    the result is the smaller, leaving the batched rule unchecked)."""
    text = op_text(op_text_, args, result_shape, in_types)
    args = [np.asarray(a) for a in args]
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.floating)]
    check_jvp(text, args, wrt=wrt, **kw)
    if jacobian:
        check_jacobian(text, args, wrt=wrt, jacobian_mode="forward", **kw)

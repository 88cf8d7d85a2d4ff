"""VJP rules: one small function per rlx op, in a registry keyed by op name.

A rule receives the forward op (its operands and results are values of the
function being differentiated) and the adjoints of its results, and returns
one adjoint per operand (``None`` where an operand gets no gradient: integer
indices, non-differentiable operands).  It builds its ops with the
``gradir.dialects.rlx`` builders; the pass has set the insertion point and the
location (the forward op's).  ``grads[i]`` is ``None`` only for ops with
several results (``split``) where result ``i`` received no adjoint.

    @vjp("rlx.exp")
    def exp(op, grads):
        (g,) = grads
        return [rlx.multiply(g, op.results[0])]

Rules live in modules by op group (unary, binary, shape, reduce, nn, ...);
importing this package registers them all.

JVP rules (forward mode) sit beside the VJP rule of the same op.  A JVP rule
receives the op (its operands and results are the primal values of the
function being built), one tangent per operand (``None``: zero, or not a
float), and ``batch``, the leading batch shape every tangent carries (``()``
for ``mode=jvp``; ``(n,)`` when a Jacobian pushes ``n`` basis vectors through
at once): a tangent of an operand of shape ``s`` has shape ``batch + s``.  It
returns one tangent per result (``None``: zero), each of shape ``batch +``
the result's shape.  The insertion point is right after the op, the location
the op's.  A rule registered with ``batched=False`` is only ever called with
``batch == ()``; for a batch the driver calls it once per basis vector.

    @jvp("rlx.exp")
    def exp_jvp(op, tangents, batch):
        (t,) = tangents
        return [rlx.multiply(t, op.results[0])]
"""

from __future__ import annotations

from typing import Callable, Sequence

from mlir import ir

__all__ = ["VJP_RULES", "JVP_RULES", "NON_DIFFERENTIABLE", "DIFFERENTIATED_BY_PASS",
           "WITHOUT_RULE", "vjp", "jvp", "get_rule", "get_jvp_rule", "is_float_type",
           "differentiable_ops", "forward_differentiable_ops"]

VJP_RULES: dict[str, Callable] = {}
# op name -> (JVP rule, whether it accepts a non-empty batch)
JVP_RULES: dict[str, tuple[Callable, bool]] = {}

# Ops whose results carry no gradient: comparisons (i1), creation from
# shapes, and ops whose results do not depend differentiably on operands.
NON_DIFFERENTIABLE = frozenset({
    "rlx.equal", "rlx.not_equal", "rlx.less", "rlx.less_equal", "rlx.greater",
    "rlx.greater_equal", "rlx.zeros", "rlx.ones", "rlx.zeros_like", "rlx.ones_like",
    "arith.constant", "tensor.empty",
})

# Ops the gradient pass differentiates itself (autodiff/gradient.py): the
# identity markers of the grad dialect and the tuple ops.
DIFFERENTIATED_BY_PASS = frozenset({
    "grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad", "rlx.tuple",
    "rlx.tuple_get_item",
})

# Differentiable ops without a rule, and why: the pass reports "no gradient
# rule" when one lies on the path to the target (see rules/nn.py).
WITHOUT_RULE = {
    "rlx.max_pool2d_backward": "max-pool has no reverse-over-reverse second derivative: "
                               "the adjoint w.r.t. output_grad gathers each window's "
                               "arg-max, which no rlx op expresses (forward over reverse, "
                               "mode=hvp or mode=hessian, has a JVP rule)",
    "rlx.max_pool2d_indices_backward": "max-pool from saved indices has no reverse-over-reverse "
                                       "second derivative: the adjoint w.r.t. output_grad "
                                       "gathers at the saved arg-max, which no rlx op "
                                       "expresses (forward over reverse has a JVP rule)",
}


def vjp(*op_names: str):
    """Registers the decorated function as the VJP rule of ``op_names``."""
    def register(fn):
        for name in op_names:
            if name in VJP_RULES:
                raise ValueError(f"two VJP rules for {name}")
            VJP_RULES[name] = fn
        return fn
    return register


def jvp(*op_names: str, batched: bool = True):
    """Registers the decorated function as the JVP rule of ``op_names``."""
    def register(fn):
        for name in op_names:
            if name in JVP_RULES:
                raise ValueError(f"two JVP rules for {name}")
            JVP_RULES[name] = (fn, batched)
        return fn
    return register


def get_jvp_rule(name: str):
    """``(rule, batched)`` of the op, or None."""
    _load_all()
    return JVP_RULES.get(name)


def get_rule(name: str):
    _load_all()
    return VJP_RULES.get(name)


def is_float_type(t: ir.Type) -> bool:
    """A float tensor, or a tuple holding at least one."""
    if isinstance(t, ir.TupleType):
        tt = ir.TupleType(t)
        return any(is_float_type(tt.get_type(i)) for i in range(tt.num_types))
    if isinstance(t, ir.RankedTensorType):
        elt = ir.RankedTensorType(t).element_type
        return isinstance(elt, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))
    return False


_LOADED = False


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib
    import pkgutil
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def differentiable_ops() -> Sequence[str]:
    _load_all()
    return sorted(VJP_RULES)


def forward_differentiable_ops() -> Sequence[str]:
    _load_all()
    return sorted(JVP_RULES)

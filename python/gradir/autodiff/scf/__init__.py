"""Gradients through upstream ``scf`` control flow (DESIGN.md's Control-flow
paragraph): ``scf.for`` (checkpointing.py chooses which iteration states to
keep), ``scf.if``, ``scf.while``.  Importing this package registers the
adjoints and the checks in ``autodiff.regions``'s hooks.

Supported around rlx ops: ``scf.for/if/while/yield/condition``;
``tensor.extract``/``from_elements`` of integer or i1 elements; ``arith`` on
index, integer and i1 scalars.  Refused, at the op: other ``scf`` ops (named),
region ops of other dialects, loops whose carried values change type, and
scalar float arithmetic (no gradient would flow through it).
"""

from __future__ import annotations

import math

from mlir import ir

from ..gradient import GradientError
from ..regions import CHECK, FINISH, PREPARE, REGION_RULES, region_inputs, walk_nested
from .branch import if_adjoint
from .checkpointing import EVERY, POLICY, period
from .common import RECORDED, STACK_MARK, static_index, terminator_of
from .for_loop import for_adjoint, record_for
from .while_loop import record_while, while_adjoint

__all__ = ["SUPPORTED_SCF"]

SUPPORTED_SCF = ("scf.for", "scf.if", "scf.while", "scf.yield", "scf.condition")
_TENSOR_OPS = frozenset({"tensor.extract", "tensor.from_elements", "tensor.empty",
                         "tensor.extract_slice", "tensor.insert_slice", "tensor.insert",
                         "tensor.dim"})


def _is_float_scalar(t: ir.Type) -> bool:
    if isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType)):
        t = t.element_type
    return isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def check(op: ir.Operation) -> bool:
    name = op.name
    if name.startswith("scf."):
        if name not in SUPPORTED_SCF:
            raise GradientError(op, f"'{name}' is not supported by rlx-gradient (control flow "
                                    "must be scf.for, scf.if or scf.while)")
        _check_types(op)
        return True
    if name in _TENSOR_OPS:
        if name in ("tensor.extract_slice", "tensor.insert_slice") and any(
                isinstance(v.type, ir.RankedTensorType) and not v.type.has_static_shape
                for v in list(op.operands) + list(op.results)):
            raise GradientError(op, f"'{name}' on a dynamically shaped tensor is not supported "
                                    "by rlx-gradient (differentiating an adjoint again needs "
                                    "loops with static trip counts)")
        if name in ("tensor.extract", "tensor.from_elements") and any(
                _is_float_scalar(v.type) for v in list(op.results) + list(op.operands)):
            raise GradientError(op, f"'{name}' on floating-point elements is not supported by "
                                    "rlx-gradient (use it for conditions and indices; select "
                                    "data with rlx.take)")
        return True
    if name.startswith("arith.") and not op.regions:
        if any(_is_float_scalar(v.type) for v in list(op.results) + list(op.operands)):
            raise GradientError(op, f"'{name}' on floating-point scalars is not supported by "
                                    "rlx-gradient (compute on tensors with rlx ops)")
        return True
    if op.regions:
        raise GradientError(op, f"'{name}' has regions and is not scf control flow: "
                                "rlx-gradient differentiates only scf.for, scf.if and "
                                "scf.while")
    return False


def _types(vals) -> list:
    return [v.type for v in vals]


def _check_types(op: ir.Operation) -> None:
    name = op.name
    if name == "scf.for":
        inits = list(op.operands)[3:]
        body = op.regions[0].blocks[0]
        yields = list(terminator_of(body).operands)
        for j, (a, y, r) in enumerate(zip(inits, yields, op.results)):
            if not (a.type == y.type == r.type):
                raise GradientError(op, f"loop-carried value #{j} changes type: enters as "
                                        f"{a.type}, is yielded as {y.type}")
        _check_carried(op, inits)
    elif name == "scf.while":
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        inits = list(op.operands)
        yields = list(terminator_of(after).operands)
        passed = list(terminator_of(before).operands)[1:]
        for j, (a, y) in enumerate(zip(inits, yields)):
            if a.type != y.type:
                raise GradientError(op, f"loop-carried value #{j} changes type: enters as "
                                        f"{a.type}, is yielded as {y.type}")
        for j, (a, p) in enumerate(zip(inits, passed) if len(inits) == len(passed) else ()):
            if a.type != p.type:
                raise GradientError(op, f"loop-carried value #{j} changes type: enters as "
                                        f"{a.type}, scf.condition passes {p.type}")
        _check_carried(op, inits)


def _check_carried(op, inits) -> None:
    for j, v in enumerate(inits):
        t = v.type
        if isinstance(t, ir.TupleType):
            raise GradientError(op, f"loop-carried value #{j} is a tuple ({t}); carry its "
                                    "tensors separately")
        if isinstance(t, ir.RankedTensorType) and not t.has_static_shape:
            # (a while loop's adjoint stacks its states in such a tensor:
            # reverse over it is refused, forward over it works)
            raise GradientError(op, f"loop-carried value #{j} has a dynamic shape ({t}); "
                                    "reverse mode needs static shapes (a while loop's adjoint "
                                    "is differentiated forward: mode=jvp, hvp or hessian)")


def prepare(block: ir.Block, ops: list, active: set) -> list:
    """Rewrites the active loops among ``ops`` into recording loops.  A
    rewritten loop's results replace its old ones in ``active`` (so that a
    loop reading them, next in ``ops``, is seen active and recorded too)."""
    out = []
    for op in ops:
        if op.name in ("scf.for", "scf.while") and RECORDED not in op.attributes and \
                any(v in active for v in region_inputs(op)):
            was_active = [r in active for r in op.results]
            active.difference_update(op.results)    # (erased below)
            if op.name == "scf.for":
                op = _record_for(op)
            else:
                op = record_while(op)
            active.update(r for r, a in zip(op.results, was_active) if a)
        out.append(op)
    return out


def _record_for(op: ir.Operation) -> ir.Operation:
    lb, ub, step = list(op.operands)[:3]
    slb, sub, sst = static_index(lb), static_index(ub), static_index(step)
    trips = None
    if None not in (slb, sub, sst) and sst > 0:
        trips = max(0, -((slb - sub) // sst))
    capacity = None
    if "grad.capacity" in op.attributes:
        capacity = int(ir.IntegerAttr(op.attributes["grad.capacity"]).value)
    every = period(op, trips if trips is not None else capacity)
    rows = None if capacity is None else math.ceil(capacity / every)
    new = record_for(op, every, capacity=rows)
    new.attributes[EVERY] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), every)
    return new


_BOOKKEEPING = (RECORDED, EVERY, STACK_MARK, "grad.capacity", POLICY)


def finish(fn: ir.Operation) -> None:
    for op in walk_nested(fn):
        attrs = op.attributes
        if not len(attrs):      # most ops: one crossing instead of five
            continue
        for key in _BOOKKEEPING:
            if key in attrs:
                del attrs[key]


def _register() -> None:
    if check in CHECK:
        return
    CHECK.append(check)
    PREPARE.append(prepare)
    FINISH.append(finish)
    REGION_RULES["scf.for"] = for_adjoint
    REGION_RULES["scf.if"] = if_adjoint
    REGION_RULES["scf.while"] = while_adjoint


_register()

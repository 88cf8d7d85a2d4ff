"""Python builders for the grad dialect (identity markers, Relax semantics).

Each builder returns the marker's result, which has the operand's type (a
tensor or a tuple)."""

from __future__ import annotations

from mlir import ir

from .rlx import build_op

__all__ = ["start_checkpoint", "end_checkpoint", "no_grad"]


def start_checkpoint(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """Starts a checkpointed region at ``x`` (recomputed in the backward)."""
    return build_op("grad.start_checkpoint", [x], loc=loc, ip=ip).result


def end_checkpoint(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """Ends a checkpointed region at ``x``."""
    return build_op("grad.end_checkpoint", [x], loc=loc, ip=ip).result


def no_grad(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """Stop-gradient: ``x`` unchanged, with a zero gradient."""
    return build_op("grad.no_grad", [x], loc=loc, ip=ip).result

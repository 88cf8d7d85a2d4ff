"""Rewrite patterns defined in Python (``fn(op, rewriter)`` callbacks) and
MLIR's greedy driver that applies them."""

from __future__ import annotations

from typing import Callable, Iterable

from mlir import ir
from mlir import rewrite


def apply_patterns(op: ir.Operation,
                   patterns: Iterable[tuple[str, Callable]]) -> None:
    """Applies ``(root op name, fn(op, rewriter))`` patterns greedily.

    In MLIR 22 a callback that returns a falsy value has matched."""
    pset = rewrite.RewritePatternSet(op.context)
    for root, fn in patterns:
        pset.add(root, fn)
    rewrite.apply_patterns_and_fold_greedily(op, pset.freeze())


def apply_patterns_configured(op: ir.Operation, patterns: Iterable[tuple[str, Callable]], *,
                              fold: bool = False, max_iterations: int = 16) -> bool:
    """Applies ``(root op name, fn(op, rewriter))`` patterns greedily, like
    ``apply_patterns``, with MLIR's folding, constant CSE (which hoists and
    merges ``arith.constant``s) and region simplification off unless
    ``fold``.  Returns False when the driver stopped before a fixpoint
    (MLIR 22 raises "failed to converge"); the IR is valid either way.

    Ops that a Python callback creates (not through the rewriter) are not
    put on the driver's worklist: they are visited on the next sweep, so
    chains of rewrites need several iterations."""
    pset = rewrite.RewritePatternSet(op.context)
    for root, fn in patterns:
        pset.add(root, fn)
    config = rewrite.GreedyRewriteConfig()
    config.enable_folding = fold
    config.enable_constant_cse = fold
    config.max_iterations = max_iterations
    if not fold:
        config.region_simplification_level = rewrite.GreedySimplifyRegionLevel.DISABLED
    try:
        rewrite.apply_patterns_and_fold_greedily(op, pset.freeze(), config)
    except RuntimeError as err:
        if "failed to converge" not in str(err):
            raise
        return False
    return True

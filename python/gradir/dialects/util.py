"""Small IR helpers shared by gradir's cleanup passes."""

from __future__ import annotations

from mlir import ir

# IRDL ops carry no traits, so MLIR cannot tell they are side-effect free.
# Every rlx and grad op is; so is arith.constant.
PURE_DIALECTS = ("rlx.", "grad.")


def is_pure(op: ir.Operation) -> bool:
    name = op.name
    return name.startswith(PURE_DIALECTS) or name == "arith.constant"


def blocks_of(op: ir.Operation):
    """Every block nested under ``op``, outer blocks before inner ones."""
    for region in op.regions:
        for block in region.blocks:
            yield block
            for inner in block.operations:
                yield from blocks_of(inner.operation)


def has_uses(op: ir.Operation) -> bool:
    return any(True for r in op.results for _ in r.uses)

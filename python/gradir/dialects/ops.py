"""The rlx and grad op sets, read from ``dialect/*.irdl.mlir`` (the single
source of truth for ops).

``OPS`` is every op (``"rlx.add"``, ..., ``"grad.no_grad"``) in file order.
``GROUPS`` maps a group of DESIGN.md's op table to its ops' short names, from
the section headers of ``rlx.irdl.mlir`` (``// ===== Unary elementwise ... =====``):
an op added under a header joins its group, so every table built from
``UNARY``/``BINARY``/... (inference, builders' checks, the tests of the op
tables in test/layout/op_tables.py) sees it.
"""

from __future__ import annotations

import re

from ..ir import DIALECT_FILES

__all__ = ["OPS", "GROUPS", "UNARY", "BINARY", "COMPARE", "REDUCE", "SCANS", "irdl_ops"]

# The first word of a section header -> the group's name (DESIGN.md's table).
_HEADERS = {"Unary": "unary", "Binary": "binary", "Comparisons": "compare",
            "Select": "select", "Linear": "linalg", "Shape": "shape",
            "Reductions": "reduce", "Neural": "nn", "Creation": "create", "Type": "type",
            "Tuples": "tuple", "Gradient": "gradient_helpers"}

_DIALECT = re.compile(r"^\s*irdl\.dialect\s+@(\w+)")
_OPERATION = re.compile(r"^\s*irdl\.operation\s+@(\w+)")
_HEADER = re.compile(r"^\s*//\s*=====\s*(\w+)")


def irdl_ops(path) -> list[tuple[str, str, str | None]]:
    """``(dialect, op, group)`` for every ``irdl.operation`` of an IRDL file, in
    order; ``group`` comes from the closest section header above the op (None
    before the first one, or for an unknown header)."""
    out, dialect, group = [], None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _DIALECT.match(line)
            if m:
                dialect, group = m.group(1), None
                continue
            m = _HEADER.match(line)
            if m:
                group = _HEADERS.get(m.group(1))
                continue
            m = _OPERATION.match(line)
            if m:
                out.append((dialect, m.group(1), group))
    return out


def _load():
    ops, groups = [], {}
    for path in DIALECT_FILES:
        for dialect, name, group in irdl_ops(path):
            ops.append(f"{dialect}.{name}")
            if dialect == "rlx" and group is not None:
                groups.setdefault(group, []).append(name)
    return tuple(ops), {g: tuple(names) for g, names in groups.items()}


OPS, GROUPS = _load()

UNARY = GROUPS["unary"]
BINARY = GROUPS["binary"]
COMPARE = GROUPS["compare"]
# The Reductions section also holds the scan ``cumsum``, which keeps its
# operand's shape and has its own inference and lowering.
SCANS = ("cumsum",)
REDUCE = tuple(n for n in GROUPS["reduce"] if n not in SCANS)

# RUN: %PYTHON %s %rlx_irdl %grad_irdl | FileCheck %s
"""Every op table of gradir covers every op of dialect/*.irdl.mlir.

The IRDL files are the single source of truth for the op set.  This test
reads every ``irdl.operation @name`` from them (its own reading, not
gradir's) and checks each table keyed by op name: an op the table neither
handles nor excludes explicitly (with a reason) is reported as

    MISSING: <table>: <op>

and an entry naming an op the dialects do not have as ``STALE: <table>: <op>``.
Tables: type inference, Python builders, VJP rules, lowerings to linalg,
constant folding, FLOP costs, and the reference interpreter (and the keys of
the attribute table, which lists only ops with attributes).
"""

import re
import sys

import gradir.dialects.rlx as rlx_builders
import gradir.dialects.grad as grad_builders
from gradir.autodiff import rules
from gradir.autodiff.cost import COSTED_OPS
from gradir.autodiff.simplify.algebra import FOLDABLE, NOT_FOLDED
from gradir.conversion.linalg import LOWERINGS, TUPLE_OPS
from gradir.dialects import ops as op_groups
from gradir.dialects.infer import ATTRS, INFER
from gradir.interp import supported_ops

_DIALECT = re.compile(r"^\s*irdl\.dialect\s+@(\w+)")
_OPERATION = re.compile(r"^\s*irdl\.operation\s+@(\w+)")


def irdl_ops(paths) -> list[str]:
    out = []
    for path in paths:
        dialect = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = _DIALECT.match(line)
                if m:
                    dialect = m.group(1)
                m = _OPERATION.match(line)
                if m:
                    out.append(f"{dialect}.{m.group(1)}")
    return out


OPS = irdl_ops(sys.argv[1:])


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def check(table: str, handled, excluded: dict | None = None) -> None:
    """Every op is in ``handled`` or ``excluded`` (op -> reason); no entry names
    an unknown rlx/grad op, none is both, and every exclusion gives a reason."""
    handled, excluded = set(handled), excluded or {}
    problems = 0
    for op in OPS:
        if op not in handled and op not in excluded:
            print(f"MISSING: {table}: {op}")
            problems += 1
    for op in sorted(handled | set(excluded)):
        if op.startswith(("rlx.", "grad.")) and op not in OPS:
            print(f"STALE: {table}: {op}")
            problems += 1
    for op in sorted(handled & set(excluded)):
        print(f"BOTH HANDLED AND EXCLUDED: {table}: {op}")
        problems += 1
    for op, reason in sorted(excluded.items()):
        if not reason.strip():
            print(f"EXCLUDED WITHOUT A REASON: {table}: {op}")
            problems += 1
    print(f"{table}: {len(OPS)} ops, {len([o for o in OPS if o in excluded])} excluded, "
          f"{'ok' if not problems else f'{problems} problems'}")


@run
def irdl_files():
    # gradir's own reading of the IRDL files (dialects/ops.py) agrees with this one,
    # and every rlx op sits in one group of DESIGN.md's table.
    print(len(OPS), "ops")
    assert list(op_groups.OPS) == OPS, (op_groups.OPS, OPS)
    grouped = [f"rlx.{n}" for names in op_groups.GROUPS.values() for n in names]
    rlx_ops = [o for o in OPS if o.startswith("rlx.")]
    assert sorted(grouped) == sorted(rlx_ops), set(grouped) ^ set(rlx_ops)
    print("groups:", " ".join(f"{g}={len(n)}" for g, n in op_groups.GROUPS.items()))


# CHECK-LABEL: TEST: irdl_files
# CHECK-NEXT: 74 ops
# CHECK-NEXT: groups: unary=15 binary=7 compare=6 select=1 linalg=1 shape=11 reduce=7 nn=9 create=5 type=1 tuple=2 gradient_helpers=6


@run
def inference():
    check("inference (dialects/infer INFER)", INFER)


# CHECK-LABEL: TEST: inference
# CHECK-NEXT: inference (dialects/infer INFER): 74 ops, 0 excluded, ok


def _builder(op: str) -> bool:
    dialect, name = op.split(".", 1)
    module = rlx_builders if dialect == "rlx" else grad_builders
    # Builders shadowing Python builtins carry a trailing underscore (abs_, sum_, tuple_).
    return callable(getattr(module, name, None)) or callable(getattr(module, name + "_", None))


@run
def builders():
    check("builders (dialects/rlx.py, dialects/grad.py)", [o for o in OPS if _builder(o)])


# CHECK-LABEL: TEST: builders
# CHECK-NEXT: builders (dialects/rlx.py, dialects/grad.py): 74 ops, 0 excluded, ok


@run
def vjp_rules():
    rules.get_rule("rlx.exp")  # loads every rule module
    check("VJP rules (autodiff/rules VJP_RULES)", rules.VJP_RULES,
          {**{op: "no gradient (NON_DIFFERENTIABLE)" for op in rules.NON_DIFFERENTIABLE},
           **{op: "differentiated by the pass itself" for op in rules.DIFFERENTIATED_BY_PASS},
           **rules.WITHOUT_RULE})


# CHECK-LABEL: TEST: vjp_rules
# CHECK-NEXT: VJP rules (autodiff/rules VJP_RULES): 74 ops, 17 excluded, ok


@run
def lowerings():
    check("lowerings (conversion/linalg LOWERINGS)", LOWERINGS,
          {op: "flattened away by tuples.flatten_tuples" for op in TUPLE_OPS})


# CHECK-LABEL: TEST: lowerings
# CHECK-NEXT: lowerings (conversion/linalg LOWERINGS): 74 ops, 2 excluded, ok


@run
def constant_folding():
    check("constant folding (autodiff/simplify/algebra.py FOLDABLE)", FOLDABLE, NOT_FOLDED)


# CHECK-LABEL: TEST: constant_folding
# CHECK-NEXT: constant folding (autodiff/simplify/algebra.py FOLDABLE): 74 ops, 30 excluded, ok


@run
def flop_costs():
    check("FLOP costs (autodiff/cost.py COSTED_OPS)", COSTED_OPS)


# CHECK-LABEL: TEST: flop_costs
# CHECK-NEXT: FLOP costs (autodiff/cost.py COSTED_OPS): 74 ops, 0 excluded, ok


@run
def interpreter():
    check("interpreter (interp supported_ops)", supported_ops())


# CHECK-LABEL: TEST: interpreter
# CHECK-NEXT: interpreter (interp supported_ops): 74 ops, 0 excluded, ok



@run
def attributes():
    # Only ops with attributes are listed; every key must be an op of the dialects.
    stale = sorted(op for op in ATTRS if op not in OPS)
    for op in stale:
        print(f"STALE: attributes (dialects/infer ATTRS): {op}")
    print(f"attributes (dialects/infer ATTRS): {len(ATTRS)} ops, "
          f"{'ok' if not stale else f'{len(stale)} problems'}")


# CHECK-LABEL: TEST: attributes
# CHECK-NEXT: attributes (dialects/infer ATTRS): {{[0-9]+}} ops, ok

# CHECK-NOT: MISSING
# CHECK-NOT: STALE

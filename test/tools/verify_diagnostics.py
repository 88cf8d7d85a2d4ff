# RUN: %PYTHON %s | FileCheck %s
# --verify-diagnostics matching: warnings, remarks, offsets, regexes, counts.

from gradir.tools.driver import Diag
from gradir.tools.verify_diagnostics import check, parse_expectations

SRC = """line one
// expected-warning @+1 {{slow path}}
op
// expected-remark @-1 {{kept %3}}
// expected-error-re @above {{value {{[0-9]+}} is bad}}
// expected-note @below {{here}}
other
"""


def show(problems):
    for p in problems:
        print(p.location, p.message)
    print("problems:", len(problems))


exps = parse_expectations(SRC)
print([(e.severity, e.line, e.is_regex) for e in exps])
# CHECK: [('warning', 3, False), ('remark', 3, False), ('error', 4, True), ('note', 7, False)]

good = [Diag("warning", "f.mlir:3:1", "a slow path taken"),
        Diag("remark", "f.mlir:3:1", "kept %3 (saved)"),
        Diag("error", "f.mlir:4:1", "value 42 is bad"),
        Diag("note", "f.mlir:7:2", "here")]
show(check(SRC, "f.mlir", good))
# CHECK: problems: 0

bad = [Diag("warning", "f.mlir:4:1", "slow path"),        # wrong line
       Diag("error", "f.mlir:4:1", "value x is bad"),     # regex does not match
       Diag("remark", "other.mlir:3:1", "kept %3")]       # other file
show(check(SRC, "f.mlir", bad))
# CHECK-DAG: f.mlir:4:1 unexpected warning: slow path
# CHECK-DAG: f.mlir:4:1 unexpected error: value x is bad
# CHECK-DAG: other.mlir:3:1 unexpected remark: kept %3
# CHECK-DAG: f.mlir:2:1 expected warning "slow path" was not produced
# CHECK-DAG: f.mlir:4:1 expected remark "kept %3" was not produced
# CHECK-DAG: f.mlir:5:1 expected error "value {{[{][{]}}[0-9]+{{[}][}]}} is bad" was not produced
# CHECK-DAG: f.mlir:6:1 expected note "here" was not produced
# CHECK: problems: 7

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
# CHECK: [('warning', 3, False), ('remark', 3, False), ('error', 3, True), ('note', 7, False)]

good = [Diag("warning", "f.mlir:3:1", "a slow path taken"),
        Diag("remark", "f.mlir:3:1", "kept %3 (saved)"),
        Diag("error", "f.mlir:3:1", "value 42 is bad"),   # @above skips annotation lines
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
# CHECK-DAG: f.mlir:2:4 expected warning "slow path" was not produced
# CHECK-DAG: f.mlir:4:4 expected remark "kept %3" was not produced
# CHECK-DAG: f.mlir:5:4 expected error "value {{[{][{]}}[0-9]+{{[}][}]}} is bad" was not produced
# CHECK-DAG: f.mlir:6:4 expected note "here" was not produced
# CHECK: problems: 7

# mlir-opt's designator rules (mlir/test/IR/diagnostic-handler-*.mlir style):
# stacked @below annotations all designate the next line that is not an
# annotation; stacked @above ones the last such line before them.
STACKED = """// expected-error @below {{first}}
// expected-remark @below {{second}}
// expected-note @below {{third}}
op_a
op_b
// expected-error @above {{after}}
// expected-warning @above {{after too}}
// expected-error @+2 {{two down}}
// expected-error @-2 {{two up}}
op_c
// expected-error @unknown {{nowhere}}
"""
print([(e.severity, e.line) for e in parse_expectations(STACKED)])
# CHECK: [('error', 4), ('remark', 4), ('note', 4), ('error', 5), ('warning', 5), ('error', 10), ('error', 7), ('error', 0)]
ok = [Diag("error", "s.mlir:4:3", "the first one"), Diag("remark", "s.mlir:4:3", "second"),
      Diag("note", "s.mlir:4:3", "third"), Diag("error", "s.mlir:5:1", "after"),
      Diag("warning", "s.mlir:5:1", "after too"), Diag("error", "s.mlir:10:1", "two down"),
      Diag("error", "s.mlir:7:1", "two up"), Diag("error", "loc(unknown)", "nowhere")]
show(check(STACKED, "s.mlir", ok))
# CHECK: problems: 0

# RUN: %PYTHON -m gradir.dialects.reference --check %gradir_src/docs/dialect.md | FileCheck %s
# RUN: %PYTHON %s | FileCheck %s --check-prefix=OPS
# docs/dialect.md is generated from the dialect files and must be up to date; every
# op of the dialect files and every attribute dialects/infer knows appears in it.
# CHECK: up to date

from gradir.dialects.infer import ATTRS
from gradir.dialects.reference import generate, read_ops
from gradir.ir import DIALECT_FILES

text = generate()
ops = [op for path in DIALECT_FILES for op in read_ops(path)]
missing = [op.full for op in ops if f"### `{op.full}`" not in text]
attrs = [f"{op}.{a}" for op, table in ATTRS.items() for a in table
         if f"| `{a}` |" not in text.split(f"### `{op}`", 1)[1].split("### ", 1)[0]]
print(len(ops), "ops; missing:", missing, "attributes missing:", attrs)
# OPS: {{[0-9]+}} ops; missing: [] attributes missing: []

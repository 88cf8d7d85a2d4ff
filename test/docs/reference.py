# RUN: %PYTHON -m gradir.tools.reference --check %gradir_src/README.md %gradir_src/docs/*.md | FileCheck %s
# The generated blocks of README.md and docs/ (every pass and option from the
# pass registry, the importer's aten ops from supported_ops(), the ops with a
# VJP rule, the ops with a JVP rule) equal what the code says today: adding a pass, an option, an aten
# mapping or a rule without regenerating the docs fails here
# (python -m gradir.tools.reference --write README.md docs/*.md).

# CHECK-NOT: STALE
# CHECK-NOT: MISSING
# CHECK: generated blocks: 4 checked in {{[0-9]+}} pages, up to date

# The README's demo keeps working.
# RUN: %PYTHON %gradir_src/examples/demo.py | FileCheck %s
# CHECK: == the program
# CHECK: func.func @main
# CHECK: matches numpy: True
# CHECK: func.func @main_adjoint
# CHECK: gradients match numpy: True

# The README's demo: trains an MLP with the compiled @main_adjoint, the loss
# falls, and the float64 gradient check passes (the script exits non-zero
# otherwise).
# RUN: %PYTHON %gradir_src/examples/train_mlp.py | FileCheck %s
# CHECK: compiled @main_adjoint of a 2-64-64-3 MLP
# CHECK: epoch   1/60 [{{.*}}] loss
# CHECK: epoch  60/60 [##############################] loss
# CHECK: SGD steps in
# CHECK: gradient check (float64): {{.*}} OK

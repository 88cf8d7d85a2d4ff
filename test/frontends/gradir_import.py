# gradir-import (python -m gradir.frontends.torch): a model factory to rlx.
# RUN: gradir-import %S/Inputs/tiny_models.py:mlp --input 3x4xf32 | FileCheck %s --check-prefix=MLP
# RUN: %PYTHON -m gradir.frontends.torch %S/Inputs/tiny_models.py:classifier_with_args --f64 --gradient -o %t.mlir
# RUN: FileCheck %s --check-prefix=GRAD < %t.mlir
# RUN: gradir-opt %t.mlir --rlx-verify | FileCheck %s --check-prefix=GRAD
# A Python int forward argument (specialized by torch.export: no argument of
# @main); --gradient's parameters were shifted by one ("wrt index 5 is out of
# range"), and --f64 called .is_floating_point() on it:
# RUN: gradir-import %S/Inputs/tiny_models.py:repeat_with_int --gradient | FileCheck %s --check-prefix=INTARG
# RUN: gradir-import %S/Inputs/tiny_models.py:repeat_with_int --gradient --f64 | FileCheck %s --check-prefix=INTARG64
# A bf16 model with constants (a traceback: numpy has no bf16):
# RUN: gradir-import %S/Inputs/tiny_models.py:bf16_scaled | FileCheck %s --check-prefix=BF16
# RUN: not gradir-import %S/Inputs/tiny_models.py:cumprod --input 2x3xf32 2>&1 | FileCheck %s --check-prefix=ERR
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp 2>&1 | FileCheck %s --check-prefix=NOARGS
# Hostile input (each was a Python traceback): -o into a missing directory,
# an --input too large to allocate.
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 3x4xf32 -o %t.missing/dir/out.mlir 2>&1 | FileCheck %s --check-prefix=NODIR
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 99999999999x99999999999xf32 2>&1 | FileCheck %s --check-prefix=HUGE
# The package and its op table load without PyTorch (imported only when a model is):
# RUN: %PYTHON -c "import sys, gradir.frontends.torch as t; assert len(t.supported_ops()) > 150; assert 'torch' not in sys.modules"

# MLP-LABEL: func.func @main(
# MLP-SAME: tensor<3x4xf32> {gradir.name = "input"}
# MLP-SAME: tensor<8x4xf32> {gradir.name = "0.weight"}
# MLP-SAME: tensor<2xf32> {gradir.name = "2.bias"}) -> tensor<3x2xf32>
# MLP: "rlx.relu"

# GRAD-LABEL: func.func @main(
# GRAD-SAME: tensor<3x4xf64> {gradir.name = "x"}, %{{.*}}: tensor<3xi64> {gradir.name = "labels"}
# GRAD-SAME: {gradir.name = "net.0.weight"}
# GRAD-LABEL: func.func @main_adjoint(
# GRAD-SAME: -> (tensor<f64>, tensor<8x4xf64>, tensor<8xf64>, tensor<2x8xf64>, tensor<2xf64>)

# INTARG-LABEL: func.func @main(
# INTARG-SAME: tensor<3x4xf32> {gradir.name = "x"}, %{{.*}}: tensor<8x4xf32> {gradir.name = "net.0.weight"}
# INTARG-LABEL: func.func @main_adjoint(
# INTARG-SAME: -> (tensor<f32>, tensor<8x4xf32>, tensor<8xf32>, tensor<2x8xf32>, tensor<2xf32>)
# INTARG64-LABEL: func.func @main_adjoint(
# INTARG64-SAME: -> (tensor<f64>, tensor<8x4xf64>, tensor<8xf64>, tensor<2x8xf64>, tensor<2xf64>)

# BF16-LABEL: func.func @main(%{{.*}}: tensor<3x4xbf16> {gradir.name = "x"}
# BF16: arith.constant dense<2.000000e+00> : tensor<bf16>
# BF16: arith.constant dense<1.000000e+00> : tensor<4xbf16>
# BF16: "rlx.layer_norm"
# BF16: arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xbf16>

# ERR: gradir-import: error: aten.cumprod.default: no rlx mapping for this aten op
# ERR-NEXT: at {{.*}}tiny_models.py:{{[0-9]+}} in forward: return torch.cumprod(x, 1)

# NOARGS: gradir-import: error: the factory returned no example arguments: give --input

# NODIR: gradir-import: error: cannot write {{.*}}out.mlir: No such file or directory
# NODIR-NOT: Traceback
# HUGE: gradir-import: error: --input '99999999999x99999999999xf32': 9999999999800000000001 elements do not fit in memory
